package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// controllerMetrics serves what a controller-runtime manager's metrics
// server serves of one controller, from Prometheus's own client, and
// returns its /metrics URL and the gauge of its longest-running reconcile.
func controllerMetrics(t *testing.T) (string, prometheus.Gauge) {
	t.Helper()
	reg := prometheus.NewRegistry()
	longest := prometheus.NewGauge(prometheus.GaugeOpts{Name: "workqueue_longest_running_processor_seconds",
		Help: "How many seconds has the longest running processor for workqueue been running.", ConstLabels: prometheus.Labels{"controller": "app", "name": "app"}})
	reg.MustRegister(longest)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics", longest
}

// vitals probe takes a Prometheus exposition as a target: exit 0 when its
// conditions hold, 1 when one fails (saying what it saw and wanted), 2 for
// a condition that does not parse (with its column) or that cannot decide
// in one scrape; -o json carries the observed value.
func TestProbeJudgesAProgramByItsMetrics(t *testing.T) {
	url, longest := controllerMetrics(t)
	target := "metrics+" + url
	const cond = `max(workqueue_longest_running_processor_seconds{controller="app"}) < 5m`
	for _, binary := range []string{vitals, vitalsProbe} {
		longest.Set(12.5)
		binaryRun(t, binary, "probe", "-v", target, "--expr", cond).
			expect(t, 0, `ok: GET `+url+`: max(workqueue_longest_running_processor_seconds{controller="app"}) = 12.5 (want < 5m)`, "")
		longest.Set(312.4)
		binaryRun(t, binary, "probe", target, "--expr", cond).
			expect(t, 1, "", `GET `+url+`: max(workqueue_longest_running_processor_seconds{controller="app"}) = 312.4 (want < 5m)`)
		r := binaryRun(t, binary, "probe", target, "--expr", cond, "-o", "json")
		var doc struct {
			Kind          string  `json:"kind"`
			OK            bool    `json:"ok"`
			ObservedValue float64 `json:"observedValue"`
			ObservedUnit  string  `json:"observedUnit"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 1 || doc.Kind != "metric" || doc.OK || doc.ObservedValue != 312.4 || doc.ObservedUnit != "s" {
			t.Errorf("%s -o json: exit %d, %q (%v), want the metric's value 312.4 s", binary, r.code, r.stdout, err)
		}
		binaryRun(t, binary, "probe", target, "--expr", "max(x) >").
			expect(t, 2, "", `vitals: --expr "max(x) >": column 9: want a number or a duration after >`)
		binaryRun(t, binary, "probe", target).
			expect(t, 2, "", "a metric target needs --expr")
		// A rate decides over two scrapes: never in one, whatever else the
		// condition says, so a probe of one is bad usage, before any scrape.
		binaryRun(t, binary, "probe", target, "--expr", `rate(workqueue_longest_running_processor_seconds[1m]) > 0 or max(workqueue_longest_running_processor_seconds) < 5m`).
			expect(t, 2, "", `vitals: target "`+target+`": increase and rate need two scrapes within their window (1m0s), and vitals probe scrapes once: use vitals wait, which scrapes until they decide, or a check of vitals run`)
	}
}

// vitals wait judges a rate over its own attempts: the first decides
// nothing, a later one does; and it spaces them by half the window, so that
// two scrapes span half of it (not the 100ms of its first backoff).
func TestWaitDecidesARateOverItsAttempts(t *testing.T) {
	reg := prometheus.NewRegistry()
	total := prometheus.NewCounter(prometheus.CounterOpts{Name: "jobs_total", Help: "Jobs done."})
	reg.MustRegister(total)
	var mu sync.Mutex
	var scrapes []time.Time
	metrics := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		scrapes = append(scrapes, time.Now())
		if len(scrapes) > 2 {
			total.Inc() // jobs are done from the third scrape on
		}
		mu.Unlock()
		metrics.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	const window = 2 * time.Second
	vitalsRun(t, "wait", "--interval", "100ms", "--timeout", "20s", "metrics+"+srv.URL+"/metrics", "--expr", "increase(jobs_total["+window.String()+"]) > 0").
		expect(t, 0, "", "")
	mu.Lock()
	defer mu.Unlock()
	if len(scrapes) < 3 {
		t.Fatalf("the wait passed after %d scrapes, want at least 3", len(scrapes))
	}
	for i := 1; i < len(scrapes); i++ {
		if gap := scrapes[i].Sub(scrapes[i-1]); gap < window/2 {
			t.Errorf("scrapes %d and %d were %v apart, want at least half the window, %v", i, i+1, gap, window/2)
		}
	}
}

// An http check compares a JSON number and bounds its response time; an
// exec check compares the number its command prints.
func TestProbeComparesNumbers(t *testing.T) {
	var delay atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Duration(delay.Load()))
		io.WriteString(w, `{"queue":{"depth":312},"lag":"12"}`)
	}))
	t.Cleanup(srv.Close)
	vitalsRun(t, "probe", srv.URL, "--json", "$.queue.depth=< 1000", "--json", "$.lag=<= 30s").expect(t, 0, "", "")
	vitalsRun(t, "probe", srv.URL, "--json", "$.queue.depth=< 100").
		expect(t, 1, "", "HTTP 200: $.queue.depth is 312: want < 100")
	delay.Store(int64(300 * time.Millisecond))
	vitalsRun(t, "probe", srv.URL, "--max-duration", "100ms").
		expect(t, 1, "", ": slower than 100ms")
	vitalsRun(t, "probe", srv.URL, "--max-duration", "2s").
		expect(t, 2, "", "--max-duration 2s is not under --timeout 1s, which ends the check first")

	dir := t.TempDir()
	script := filepath.Join(dir, "usage")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho ' 93%'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	vitalsRun(t, "probe", "--compare", "< 80", "--", script).expect(t, 1, "", ": the output is 93 (want < 80)")
	r := vitalsRun(t, "probe", "--compare", "< 95", "-o", "json", "--", script)
	if r.code != 0 || !strings.Contains(r.stdout, `"observedValue": 93,`) || !strings.Contains(r.stdout, `"observedUnit": "percent",`) {
		t.Errorf("exit %d, %q: want a pass observing 93 percent", r.code, r.stdout)
	}
	vitalsRun(t, "probe", "--compare", "eighty", "--", script).expect(t, 2, "", `want an operator`)
}

// Under vitals run, a metric check's value is its result's observed value:
// in the health+json answers and in /metrics's series of it.
func TestTheAgentShowsAMetricChecksValue(t *testing.T) {
	url, longest := controllerMetrics(t)
	longest.Set(42)
	addr := freeAddr(t)
	path := writeConfig(t, fmt.Sprintf(`
listen: %s
api: %s
checks:
  reconcilers:
    level: live
    period: 100ms
    metric: {url: %s, expr: 'max(workqueue_longest_running_processor_seconds) < 5m'}
`, addr, filepath.Join(t.TempDir(), "vitals.sock"), url))
	cmd := exec.Command(vitals, "run", "-c", path)
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	get := func(path string) string {
		res, err := http.Get("http://" + addr + path)
		if err != nil {
			return err.Error()
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(get("/livez?format=json"), `"observedValue":42,"observedUnit":"s"`); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("/livez?format=json has no value 42 s within 20s: %s\nlogs:\n%s", get("/livez?format=json"), logs.String())
		}
	}
	if metrics := get("/metrics"); !strings.Contains(metrics, `vitals_check_observed_value{check="reconcilers",unit="s"} 42`) {
		t.Errorf("/metrics has no series of the check's value:\n%s", metrics)
	}
}
