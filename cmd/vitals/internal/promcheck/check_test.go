package promcheck_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/promcheck"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// registry is a registry with a controller's series, made by Prometheus's
// own client, and the gauge of its queue's depth.
func registry() (*prometheus.Registry, prometheus.Gauge, prometheus.Counter) {
	reg := prometheus.NewRegistry()
	depth := prometheus.NewGauge(prometheus.GaugeOpts{Name: "workqueue_depth", Help: "Current depth of workqueue.",
		ConstLabels: prometheus.Labels{"controller": "app", "name": "app"}})
	total := prometheus.NewCounter(prometheus.CounterOpts{Name: "controller_runtime_reconcile_total", Help: "Total reconciles.",
		ConstLabels: prometheus.Labels{"controller": "app", "result": "success"}})
	took := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "controller_runtime_reconcile_time_seconds", Help: "Reconcile time.",
		ConstLabels: prometheus.Labels{"controller": "app"}, Buckets: []float64{0.1, 1, 10}})
	reg.MustRegister(depth, total, took)
	took.Observe(0.5)
	return reg, depth, total
}

// serve serves handler on loopback until the test ends, and records the
// Content-Type and Content-Encoding of each answer.
func serve(t *testing.T, handler http.Handler) (url string, answered func() (contentType, encoding string)) {
	t.Helper()
	var ct, ce atomic.Value
	ct.Store("")
	ce.Store("")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handler.ServeHTTP(w, r)
		ct.Store(w.Header().Get("Content-Type"))
		ce.Store(w.Header().Get("Content-Encoding"))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics", func() (string, string) { return ct.Load().(string), ce.Load().(string) }
}

func newCheck(t *testing.T, s promcheck.Spec) *probe.Prober {
	t.Helper()
	p, err := promcheck.New(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A metric check reads what Prometheus's own client serves, as a scrape
// does: the text format, gzipped, and judges its conditions, its output and
// observed value saying what it saw.
func TestAScrapeOfPrometheusClient(t *testing.T) {
	reg, depth, _ := registry()
	url, answered := serve(t, promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true}))
	p := newCheck(t, promcheck.Spec{Request: probe.HTTPSpec{URL: url},
		Exprs: []string{`max(workqueue_depth{controller="app"}) < 100`, `controller_runtime_reconcile_time_seconds_count == 1`}})
	if p.Kind() != "metric" || p.String() != "GET "+url {
		t.Errorf("the probe: %s %s", p.Kind(), p)
	}
	r := health.Run(context.Background(), p, 5*time.Second)
	want := `max(workqueue_depth{controller="app"}) = 0 (want < 100); controller_runtime_reconcile_time_seconds_count{controller="app"} = 1 (want == 1)`
	if !r.OK || r.Output != want || r.ObservedValue != 0.0 || r.ObservedUnit != health.Dimensionless {
		t.Errorf("%+v\nwant a pass saying %s", r, want)
	}
	if ct, ce := answered(); !strings.HasPrefix(ct, "text/plain") || ce != "gzip" {
		t.Errorf("the answer was %q, %q: want the text format, gzipped", ct, ce)
	}
	depth.Set(312)
	r = health.Run(context.Background(), p, 5*time.Second)
	want = `max(workqueue_depth{controller="app"}) = 312 (want < 100)`
	if r.OK || r.Output != want || r.ObservedValue != 312.0 {
		t.Errorf("%+v\nwant a failure saying %s, observing 312", r, want)
	}
}

// Asked for OpenMetrics, Prometheus's client writes counters' families
// without _total and a _created series for each: the check reads the same
// series as from the text format.
func TestAScrapeOfOpenMetrics(t *testing.T) {
	reg, _, total := registry()
	total.Add(3)
	url, answered := serve(t, promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true}))
	p := newCheck(t, promcheck.Spec{Request: probe.HTTPSpec{URL: url, Header: http.Header{"Accept": {"application/openmetrics-text; version=1.0.0"}}},
		Exprs: []string{`controller_runtime_reconcile_total == 3 and absent(controller_runtime_reconcile_created) and controller_runtime_reconcile_time_seconds_bucket{le="1"} == 1`}})
	if r := health.Run(context.Background(), p, 5*time.Second); !r.OK {
		t.Errorf("%+v", r)
	}
	if ct, _ := answered(); !strings.HasPrefix(ct, "application/openmetrics-text") {
		t.Errorf("the answer was %q, want OpenMetrics", ct)
	}
}

// increase and rate decide from the second scrape on: the first is
// undecided, and says so.
func TestARateDecidesAtItsSecondScrape(t *testing.T) {
	reg, _, total := registry()
	url, _ := serve(t, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	p := newCheck(t, promcheck.Spec{Request: probe.HTTPSpec{URL: url}, Exprs: []string{"increase(controller_runtime_reconcile_total[1m]) > 0"}})
	r := health.Run(context.Background(), p, 5*time.Second)
	if r.OK || !r.Undecided || r.Output != "increase(controller_runtime_reconcile_total[1m]) needs two scrapes in its 1m window, and has 1 so far" {
		t.Errorf("the first scrape: %+v", r)
	}
	if r = health.Run(context.Background(), p, 5*time.Second); r.OK || r.Undecided {
		t.Errorf("a second scrape with no reconcile between: %+v, want a failure", r)
	}
	total.Inc()
	if r = health.Run(context.Background(), p, 5*time.Second); !r.OK {
		t.Errorf("a third, after a reconcile: %+v, want a pass", r)
	}
}

// A scrape that gets no exposition fails, saying why.
func TestScrapesThatFail(t *testing.T) {
	never := make(chan struct{})
	t.Cleanup(func() { close(never) })
	for _, tt := range []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"a 503", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "down", 503) }, "HTTP 503: want a 2xx answer with the metrics"},
		{"a page", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "<html>hi</html>\n") }, "the answer is not a Prometheus exposition: line 1: "},
		{"a lie of gzip", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			io.WriteString(w, "x 1\n")
		}, "the answer says it is gzip, and is not"},
		{"an answer that never ends", func(w http.ResponseWriter, _ *http.Request) {
			line := []byte(strings.Repeat("# a comment that goes on and on\n", 1024))
			for {
				if _, err := w.Write(line); err != nil {
					return
				}
			}
		}, "the answer is larger than 8 MiB, the most a scrape reads"},
		{"no answer", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-never:
			case <-r.Context().Done():
			}
		}, "context deadline exceeded"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			url, _ := serve(t, tt.handler)
			p := newCheck(t, promcheck.Spec{Request: probe.HTTPSpec{URL: url}, Exprs: []string{"x > 0"}})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if tt.name == "no answer" {
				ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
				defer cancel()
			}
			_, err := p.Measure(ctx)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%v, want …%s…", err, tt.want)
			}
		})
	}
}

// A bearer token file is read at every scrape: a token rotated in place is
// the one sent.
func TestTheBearerTokenIsReadAtEveryScrape(t *testing.T) {
	reg, _, _ := registry()
	metrics := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	var want atomic.Value
	want.Store("Bearer first")
	url, _ := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != want.Load().(string) {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		metrics.ServeHTTP(w, r)
	}))
	token := filepath.Join(t.TempDir(), "token")
	os.WriteFile(token, []byte("first\n"), 0o600)
	p := newCheck(t, promcheck.Spec{Request: probe.HTTPSpec{URL: url, BearerTokenFile: token}, Exprs: []string{"workqueue_depth >= 0"}})
	if r := health.Run(context.Background(), p, 5*time.Second); !r.OK {
		t.Fatalf("with the token: %+v", r)
	}
	want.Store("Bearer second")
	if r := health.Run(context.Background(), p, 5*time.Second); r.OK || r.Output != "HTTP 401: want a 2xx answer with the metrics" {
		t.Fatalf("with the old token: %+v", r)
	}
	os.WriteFile(token, []byte("second"), 0o600)
	if r := health.Run(context.Background(), p, 5*time.Second); !r.OK {
		t.Fatalf("with the token rotated: %+v", r)
	}
	os.Remove(token)
	if r := health.Run(context.Background(), p, 5*time.Second); r.OK || !strings.Contains(r.Output, "bearer token file") {
		t.Fatalf("with the token file gone: %+v", r)
	}
}

// A spec that cannot be built is refused when it is built, saying what is
// wrong.
func TestSpecsRefused(t *testing.T) {
	token := filepath.Join(t.TempDir(), "token")
	os.WriteFile(token, []byte("  \n"), 0o600)
	for _, tt := range []struct {
		name string
		spec promcheck.Spec
		want string
	}{
		{"no condition", promcheck.Spec{Request: probe.HTTPSpec{URL: "http://x/metrics"}}, "metric probe: expr is required"},
		{"a bad condition", promcheck.Spec{Request: probe.HTTPSpec{URL: "http://x/metrics"}, Exprs: []string{"x >"}},
			`metric probe: expr "x >": column 4: want a number or a duration after >`},
		{"a bad URL", promcheck.Spec{Request: probe.HTTPSpec{URL: "ftp://x/metrics"}, Exprs: []string{"x > 1"}}, "metric probe: URL \"ftp://x/metrics\": scheme must be http or https"},
		{"an empty token", promcheck.Spec{Request: probe.HTTPSpec{URL: "http://x/metrics", BearerTokenFile: token}, Exprs: []string{"x > 1"}}, "is empty"},
		{"a token and an Authorization", promcheck.Spec{Request: probe.HTTPSpec{URL: "http://x/metrics", BearerTokenFile: token,
			Header: http.Header{"Authorization": {"Basic eA=="}}}, Exprs: []string{"x > 1"}}, "an Authorization header and a bearer token file: give one"},
	} {
		_, err := promcheck.New(tt.spec)
		var se *probe.SpecError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want a *probe.SpecError …%s…", tt.name, err, tt.want)
		}
	}
}

// Checks of many series read only what their selectors select: judging a
// large exposition is its parse.
func TestALargeExposition(t *testing.T) {
	var b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&b, "series_%d{controller=\"c%d\",name=\"n\"} %d\n", i%50, i, i)
	}
	url, _ := serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, b.String()) }))
	p := newCheck(t, promcheck.Spec{Request: probe.HTTPSpec{URL: url}, Exprs: []string{"count(series_7) == 100", "max(series_49) == 4999"}})
	if r := health.Run(context.Background(), p, 10*time.Second); !r.OK {
		t.Errorf("%+v", r)
	}
}
