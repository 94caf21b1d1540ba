package servers

import "github.com/prometheus/client_golang/prometheus"

// Collector serves the listeners' connections as metrics: it is a
// prometheus.Collector.
type Collector struct {
	listeners          []*Listener
	open, max, evicted *prometheus.Desc
}

// NewCollector returns the metrics of ls.
func NewCollector(ls ...*Listener) *Collector {
	return &Collector{listeners: ls,
		open: prometheus.NewDesc("vitals_connections",
			"Connections open on the listener (probe, api, grpc).", []string{"listener"}, nil),
		max: prometheus.NewDesc("vitals_connections_max",
			"The listener's cap on open connections, sized from RLIMIT_NOFILE.", []string{"listener"}, nil),
		evicted: prometheus.NewDesc("vitals_connections_evicted_total",
			"Idle connections closed to make room for a new one at the cap.", []string{"listener"}, nil),
	}
}

// Describe sends the metrics' descriptions.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.open
	ch <- c.max
	ch <- c.evicted
}

// Collect sends each listener's metrics as they are now.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for _, l := range c.listeners {
		ch <- prometheus.MustNewConstMetric(c.open, prometheus.GaugeValue, float64(l.Open()), l.name)
		ch <- prometheus.MustNewConstMetric(c.max, prometheus.GaugeValue, float64(l.Max()), l.name)
		ch <- prometheus.MustNewConstMetric(c.evicted, prometheus.CounterValue, float64(l.Evicted()), l.name)
	}
}
