// Package metrics exposes a health.Monitor to Prometheus. It reads the
// Monitor's snapshot and event log, so a scrape never runs a check, never
// waits on one, and costs the same however slow the checks are. The agent
// registers a Collector and serves it at /metrics beside the probe endpoints.
//
//	vitals_check_up{check,level}                 1 pass or warn, 0 fail; absent while pending or stopped
//	vitals_check_status{check,status}            1 for the check's status, 0 for the other three
//	vitals_check_duration_seconds{check}         histogram of run durations (not heartbeats and watchdogs, which run nothing)
//	vitals_check_runs_total{check,result}        results recorded, by result: pass or fail
//	vitals_check_transitions_total{check,to}     status changes, by the status entered: pass, warn or fail
//	vitals_level_up{level}                       1 while the level's endpoint answers 200
//
// Transitions come from the event log, so they count from the Monitor's start.
// Runs and durations come from each check's result count and kept results:
// the results recorded since the Collector last looked are the newest of the
// kept ones. That is exact as long as the Collector looks before a check
// records more results than it keeps: Watch sees to it between scrapes, and
// the agent makes the Collector before it starts the Monitor.
package metrics

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vitals-dev/vitals/health"
)

// Collector is a prometheus.Collector of one Monitor. Make one with New.
type Collector struct {
	m       *health.Monitor
	history int

	up, status, level *prometheus.Desc
	runs              *prometheus.CounterVec
	transitions       *prometheus.CounterVec
	durations         *prometheus.HistogramVec

	mu        sync.Mutex // held while new results and events are folded in
	seenRuns  map[string]int
	lastEvent uint64
}

var (
	statuses = []health.Status{health.Pending, health.Pass, health.Warn, health.Fail}
	levels   = []health.Level{health.Startup, health.Live, health.Ready}
)

// New returns a Collector of m, a Monitor that keeps history results per
// check (health.DefaultHistory unless it was made WithHistory).
func New(m *health.Monitor, history int) *Collector {
	return &Collector{
		m:       m,
		history: max(history, 1),
		up: prometheus.NewDesc("vitals_check_up",
			"Whether the check passes (1, pass or warn) or fails (0); absent while it is pending or stopped.",
			[]string{"check", "level"}, nil),
		status: prometheus.NewDesc("vitals_check_status",
			"The check's status: 1 for the one it is in (pending, pass, warn, fail), 0 for the others.",
			[]string{"check", "status"}, nil),
		level: prometheus.NewDesc("vitals_level_up",
			"Whether the level's probe endpoint (/startupz, /livez, /readyz) answers 200.",
			[]string{"level"}, nil),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vitals_check_runs_total",
			Help: "Results recorded for the check, by result (pass or fail).",
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
		seenRuns: map[string]int{},
	}
}

// Describe sends the descriptions of every metric.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.up
	ch <- c.status
	ch <- c.level
	c.runs.Describe(ch)
	c.transitions.Describe(ch)
	c.durations.Describe(ch)
}

// Collect sends every metric as the Monitor's state is now.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	snap := c.update()
	for _, st := range snap.Checks {
		if st.Status != health.Pending && !st.Stopped {
			ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, one(st.Status != health.Fail), st.Name, st.Level.String())
		}
		for _, s := range statuses {
			ch <- prometheus.MustNewConstMetric(c.status, prometheus.GaugeValue, one(st.Status == s), st.Name, s.String())
		}
	}
	verdicts := map[health.Level]bool{health.Startup: snap.Startup, health.Live: snap.Live, health.Ready: snap.Ready}
	for _, l := range levels {
		ch <- prometheus.MustNewConstMetric(c.level, prometheus.GaugeValue, one(verdicts[l]), l.String())
	}
	c.runs.Collect(ch)
	c.transitions.Collect(ch)
	c.durations.Collect(ch)
}

// Watch folds new results into the counters until ctx ends, between scrapes:
// every half of the shortest time in which a check could fill its kept
// results, so that none is recorded and pushed out unseen.
func (c *Collector) Watch(ctx context.Context) {
	for {
		t := time.NewTimer(c.interval(c.update()))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// minWatch keeps Watch from spinning on checks with tiny periods.
const minWatch = 50 * time.Millisecond

func (c *Collector) interval(snap health.Snapshot) time.Duration {
	d := time.Duration(1<<63 - 1)
	for _, st := range snap.Checks {
		d = min(d, st.Period*time.Duration(c.history)/2)
	}
	if len(snap.Checks) == 0 {
		d = time.Minute // checks added later are seen within a minute
	}
	return max(d, minWatch)
}

// update folds the results and events recorded since the last look into the
// counters, and returns the snapshot it read.
func (c *Collector) update() health.Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	snap := c.m.Snapshot()
	present := make(map[string]bool, len(snap.Checks))
	for _, st := range snap.Checks {
		present[st.Name] = true
		seen, known := c.seenRuns[st.Name]
		if !known {
			// Counters of every label value from the start, so that rate()
			// sees the first increase.
			for _, r := range []string{"pass", "fail"} {
				c.runs.WithLabelValues(st.Name, r)
			}
			for _, s := range statuses[1:] {
				c.transitions.WithLabelValues(st.Name, s.String())
			}
		}
		if st.Runs < seen {
			seen = 0 // removed and added again since the last look
		}
		fresh := st.History[len(st.History)-min(st.Runs-seen, len(st.History)):]
		for _, r := range fresh {
			c.runs.WithLabelValues(st.Name, result(r.OK)).Inc()
			if st.Timeout > 0 { // heartbeats and watchdogs run nothing: no duration
				c.durations.WithLabelValues(st.Name).Observe(r.Duration.Seconds())
			}
		}
		c.seenRuns[st.Name] = st.Runs
	}
	for _, e := range c.m.Events(c.lastEvent) {
		c.lastEvent = e.ID
		if e.Check != "" && present[e.Check] {
			c.transitions.WithLabelValues(e.Check, e.To.String()).Inc()
		}
	}
	for name := range c.seenRuns {
		if !present[name] {
			delete(c.seenRuns, name)
			for _, v := range []interface {
				DeletePartialMatch(prometheus.Labels) int
			}{c.runs, c.transitions, c.durations} {
				v.DeletePartialMatch(prometheus.Labels{"check": name})
			}
		}
	}
	return snap
}

func result(ok bool) string {
	if ok {
		return "pass"
	}
	return "fail"
}

func one(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
