// Package metrics exposes a health.Monitor to Prometheus. It reads the
// Monitor's snapshot and event log, so a scrape never runs a check, never
// waits on one, and costs the same however slow the checks are. The agent
// registers a Collector and serves it at /metrics beside the probe endpoints.
//
//	vitals_check_up{check,level}                 1 pass or warn, 0 fail; absent while pending or stopped (a check waiting to be stable is pending or fail)
//	vitals_check_status{check,status}            1 for the check's status, 0 for the other three
//	vitals_check_observed_value{check,unit}       the latest result's observed value, for a check whose latest result has a number (a latency, a certificate's days, a metric check's value)
//	vitals_check_duration_seconds{check}         histogram of run durations (not heartbeats and watchdogs, which run nothing)
//	vitals_check_runs_total{check,result}        results recorded, by result: pass or fail (or undecided, a run that decided nothing yet)
//	vitals_check_transitions_total{check,to}     status changes, by the status entered: pass, warn or fail (becoming stable too)
//	vitals_level_up{level}                       1 while the level's endpoint answers 200
//	vitals_notices_total{key}                    notices recorded, by key: the first 32 keys each, the others as key="_other"
//	vitals_log_lines_dropped_total               vitals's own log lines dropped because the log was not read (LogLinesDropped)
//
// The gauges are read from the Monitor's state at each scrape. The counters
// and the histogram are fed by Record, which the Monitor calls for every
// result it records (health.WithRecorder), so they miss none, however fast a
// check runs or RunNow is called, and however far the event log has wrapped.
package metrics

import (
	"math"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/version"
)

// Collector is a prometheus.Collector of one Monitor. Make one with New, give
// its Record to the Monitor with health.WithRecorder, and Attach the Monitor.
type Collector struct {
	m *health.Monitor

	up, status, level, observed *prometheus.Desc
	runs                        *prometheus.CounterVec
	transitions                 *prometheus.CounterVec
	durations                   *prometheus.HistogramVec
	notices                     *prometheus.CounterVec

	mu         sync.Mutex      // guards known and noticeKeys
	known      map[string]bool // checks whose counters exist
	noticeKeys map[string]bool // the keys that have a series of notices
}

// maxNoticeKeys bounds the series of vitals_notices_total: a program's
// notices are of a handful of kinds, and a key that carries an id (one per
// request, per reload) must not grow the scrape without end. The notices
// of the keys past these count under otherNoticeKey.
const maxNoticeKeys = 32

// otherNoticeKey is the key label of the notices past maxNoticeKeys keys:
// no notice's key has an underscore (health.ValidateNotice).
const otherNoticeKey = "_other"

var (
	statuses = []health.Status{health.Pending, health.Pass, health.Warn, health.Fail}
	levels   = []health.Level{health.Startup, health.Live, health.Ready}
)

// New returns a Collector with no Monitor yet.
func New() *Collector {
	return &Collector{
		up: prometheus.NewDesc("vitals_check_up",
			"Whether the check passes (1, pass or warn) or fails (0); absent while it is pending or stopped.",
			[]string{"check", "level"}, nil),
		status: prometheus.NewDesc("vitals_check_status",
			"The check's status: 1 for the one it is in (pending, pass, warn, fail), 0 for the others.",
			[]string{"check", "status"}, nil),
		observed: prometheus.NewDesc("vitals_check_observed_value",
			"The value the check's latest result observed, in its unit (1: a number with none); absent when it observed no number.",
			[]string{"check", "unit"}, nil),
		level: prometheus.NewDesc("vitals_level_up",
			"Whether the level's probe endpoint (/startupz, /livez, /readyz) answers 200.",
			[]string{"level"}, nil),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vitals_check_runs_total",
			Help: "Results recorded for the check, by result (pass or fail; undecided for a run that decided nothing yet).",
		}, []string{"check", "result"}),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vitals_check_transitions_total",
			Help: "Changes of the check's status, by the status entered (pass, warn, fail).",
		}, []string{"check", "to"}),
		durations: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "vitals_check_duration_seconds",
			Help:    "How long the check's runs took; a run that timed out counts its timeout.",
			Buckets: prometheus.DefBuckets, // 5ms to 10s: around the 1s default timeout
		}, []string{"check"}),
		notices: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vitals_notices_total",
			Help: "Notices recorded, by key: the first 32 keys each, the notices of later ones as key=\"_other\".",
		}, []string{"key"}),
		known: map[string]bool{}, noticeKeys: map[string]bool{},
	}
}

// Attach sets the Monitor whose state the gauges show.
func (c *Collector) Attach(m *health.Monitor) { c.m = m }

// Record counts one result, or a check becoming stable (a transition that
// no run made): give it to the Monitor with health.WithRecorder.
func (c *Collector) Record(r health.Recorded) {
	c.ensure(r.Check)
	if r.Stable {
		c.transitions.WithLabelValues(r.Check, r.To.String()).Inc()
		return
	}
	c.runs.WithLabelValues(r.Check, result(r.Result)).Inc()
	if r.Kind != "heartbeat" && r.Kind != "watchdog" { // they run nothing: no duration
		c.durations.WithLabelValues(r.Check).Observe(r.Result.Duration.Seconds())
	}
	if r.From != r.To {
		c.transitions.WithLabelValues(r.Check, r.To.String()).Inc()
	}
}

// Notice counts a notice: give it to the management API (api.WithNoticed),
// which records them.
func (c *Collector) Notice(e health.Event) {
	c.notices.WithLabelValues(c.noticeKey(e.Key)).Inc()
}

// noticeKey is the label a notice of key counts under: its key while it is
// among the first maxNoticeKeys, otherNoticeKey past them.
func (c *Collector) noticeKey(key string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.noticeKeys[key]:
		return key
	case len(c.noticeKeys) >= maxNoticeKeys:
		return otherNoticeKey
	}
	c.noticeKeys[key] = true
	return key
}

// ensure makes the counters of every label value of a check, at zero, so
// that rate() sees its first increase.
func (c *Collector) ensure(check string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.known[check] {
		return
	}
	c.known[check] = true
	for _, r := range []string{"pass", "fail"} { // not undecided: most checks never are
		c.runs.WithLabelValues(check, r)
	}
	for _, s := range statuses[1:] {
		c.transitions.WithLabelValues(check, s.String())
	}
}

// Describe sends the descriptions of every metric.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.up
	ch <- c.status
	ch <- c.level
	ch <- c.observed
	c.runs.Describe(ch)
	c.transitions.Describe(ch)
	c.durations.Describe(ch)
	c.notices.Describe(ch)
}

// Collect sends every metric as the Monitor's state is now.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	snap := c.m.Snapshot()
	present := make(map[string]bool, len(snap.Checks))
	for _, st := range snap.Checks {
		present[st.Name] = true
		c.ensure(st.Name)
		if st.Status != health.Pending && !st.Stopped {
			ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, one(st.Status != health.Fail), st.Name, st.Level.String())
		}
		for _, s := range statuses {
			ch <- prometheus.MustNewConstMetric(c.status, prometheus.GaugeValue, one(st.Status == s), st.Name, s.String())
		}
		if last, ok := st.Last(); ok && last.ObservedUnit != "" && !st.Stopped {
			if v, ok := number(last.ObservedValue); ok {
				ch <- prometheus.MustNewConstMetric(c.observed, prometheus.GaugeValue, v, st.Name, last.ObservedUnit)
			}
		}
	}
	c.forget(present)
	verdicts := map[health.Level]bool{health.Startup: snap.Startup, health.Live: snap.Live, health.Ready: snap.Ready}
	for _, l := range levels {
		ch <- prometheus.MustNewConstMetric(c.level, prometheus.GaugeValue, one(verdicts[l]), l.String())
	}
	c.runs.Collect(ch)
	c.transitions.Collect(ch)
	c.durations.Collect(ch)
	c.notices.Collect(ch)
}

// forget drops the series of checks that were removed.
func (c *Collector) forget(present map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name := range c.known {
		if present[name] {
			continue
		}
		delete(c.known, name)
		for _, v := range []interface {
			DeletePartialMatch(prometheus.Labels) int
		}{c.runs, c.transitions, c.durations} {
			v.DeletePartialMatch(prometheus.Labels{"check": name})
		}
	}
}

// result is the result label of a run: pass, fail, or undecided for a run
// that decided nothing yet (health.ErrUndecided).
func result(r health.Result) string {
	switch {
	case r.OK:
		return "pass"
	case r.Undecided:
		return "undecided"
	}
	return "fail"
}

// number is an observed value as a sample's value, if it is a number: NaN
// and the infinities too, which results keep as the strings Prometheus
// writes them with (JSON has no number for them).
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case uint:
		return float64(n), true
	case uint64:
		return float64(n), true
	case uint32:
		return float64(n), true
	case string:
		switch n {
		case "NaN":
			return math.NaN(), true
		case "+Inf":
			return math.Inf(1), true
		case "-Inf":
			return math.Inf(-1), true
		}
	}
	return 0, false
}

func one(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// LogLinesDropped is the counter of the agent's own log lines that its log
// queue dropped (health.LogQueue.Dropped): a log pipe that nobody reads, or
// a log driver that blocks, costs lines rather than checks, and this says how
// many. The workload's own output is never dropped: it waits instead.
func LogLinesDropped(dropped func() uint64) prometheus.Collector {
	return prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "vitals_log_lines_dropped_total",
		Help: "vitals's own log lines dropped because the log sink did not take them (the workload's output is never dropped).",
	}, func() float64 { return float64(dropped()) })
}

// BuildInfo is vitals_build_info, 1 with the build's version, revision and
// Go version as labels (version.Info), as Prometheus's own programs export
// theirs: a query joins it to tell which vitals each target runs.
func BuildInfo(b version.Build) prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "vitals_build_info",
		Help:        "1, with the version, the revision and the Go version vitals was built with.",
		ConstLabels: prometheus.Labels{"version": b.Version, "revision": b.Revision, "goversion": b.GoVersion},
	})
	g.Set(1)
	return g
}

// Service is one supervised service as its metrics show it.
type Service struct {
	Name     string
	Running  bool // a run of it runs now
	Restarts int  // runs before the current one
}

// Services are vitals_service_up{service} (1 while a run of the service
// runs, 0 between an exit and its restart, and once it is down for good)
// and vitals_service_restarts_total{service}, of each service that list
// gives, by name: a dashboard tells a crash-looping helper from the daemon
// beside it.
func Services(list func() []Service) prometheus.Collector { return servicesCollector{list} }

var (
	serviceUpDesc = prometheus.NewDesc("vitals_service_up",
		"1 while a run of the supervised service runs; 0 between an exit and its restart, and once it is down for good.", []string{"service"}, nil)
	serviceRestartsDesc = prometheus.NewDesc("vitals_service_restarts_total",
		"Restarts of the supervised service since vitals started (by its policy, its rules, a check, or by hand).", []string{"service"}, nil)
)

type servicesCollector struct{ list func() []Service }

func (c servicesCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- serviceUpDesc
	ch <- serviceRestartsDesc
}

func (c servicesCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.list() {
		ch <- prometheus.MustNewConstMetric(serviceUpDesc, prometheus.GaugeValue, one(s.Running), s.Name)
		ch <- prometheus.MustNewConstMetric(serviceRestartsDesc, prometheus.CounterValue, float64(s.Restarts), s.Name)
	}
}
