package hooks

import "github.com/prometheus/client_golang/prometheus"

// The metrics a Runner serves as a prometheus.Collector, read from its
// hooks' counters at each scrape:
//
//	vitals_hook_deliveries_total{hook,result}   events delivered or given up on: result delivered or failed
//	vitals_hook_attempts_total{hook}            requests sent and commands run, retries included
//	vitals_hook_missed_events_total{hook}       events the log dropped before the hook read them
//	vitals_hook_coalesced_events_total{hook}    events left out when the hook fell behind, for a later one of the same check, level or key
//	vitals_hook_failing{hook}                   1 while the hook's latest event was given up on
var (
	deliveriesDesc = prometheus.NewDesc("vitals_hook_deliveries_total",
		"Events the hook is done with, by result: delivered, or failed after every attempt it gets.",
		[]string{"hook", "result"}, nil)
	attemptsDesc = prometheus.NewDesc("vitals_hook_attempts_total",
		"Attempts at delivering events: webhook requests, retries included, and exec commands run.",
		[]string{"hook"}, nil)
	missedDesc = prometheus.NewDesc("vitals_hook_missed_events_total",
		"Events the hook never saw: the event log dropped them while the hook was busy with older ones.",
		[]string{"hook"}, nil)
	coalescedDesc = prometheus.NewDesc("vitals_hook_coalesced_events_total",
		"Events the hook left out when it fell behind, delivering a later event of the same check, level or notice key instead.",
		[]string{"hook"}, nil)
	failingDesc = prometheus.NewDesc("vitals_hook_failing",
		"Whether the hook gave up on its latest event (1) or delivered it (0).",
		[]string{"hook"}, nil)
)

// Describe sends the descriptions of the hooks' metrics: with Collect, a
// Runner is a prometheus.Collector.
func (r *Runner) Describe(ch chan<- *prometheus.Desc) {
	ch <- deliveriesDesc
	ch <- attemptsDesc
	ch <- missedDesc
	ch <- coalescedDesc
	ch <- failingDesc
}

// Collect sends every hook's metrics as they are now.
func (r *Runner) Collect(ch chan<- prometheus.Metric) {
	r.mu.Lock()
	hooks := r.hooks
	r.mu.Unlock()
	for _, h := range hooks {
		h.mu.Lock()
		st, attempts := h.st, h.attempts
		h.mu.Unlock()
		failing := 0.0
		if st.Failing {
			failing = 1
		}
		ch <- prometheus.MustNewConstMetric(deliveriesDesc, prometheus.CounterValue, float64(st.Delivered), st.Name, "delivered")
		ch <- prometheus.MustNewConstMetric(deliveriesDesc, prometheus.CounterValue, float64(st.Failed), st.Name, "failed")
		ch <- prometheus.MustNewConstMetric(attemptsDesc, prometheus.CounterValue, float64(attempts), st.Name)
		ch <- prometheus.MustNewConstMetric(missedDesc, prometheus.CounterValue, float64(st.Missed), st.Name)
		ch <- prometheus.MustNewConstMetric(coalescedDesc, prometheus.CounterValue, float64(st.Coalesced), st.Name)
		ch <- prometheus.MustNewConstMetric(failingDesc, prometheus.GaugeValue, failing, st.Name)
	}
}
