package promcheck_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/promcheck"
	"github.com/vitals-dev/vitals/probe"
)

// reconcileBuckets are controller-runtime's buckets of
// controller_runtime_reconcile_time_seconds (0.005 to 60s), and
// queueBuckets its workqueue histograms' (ExponentialBuckets(10e-9, 10,
// 12)): the series of a manager are mostly these.
var (
	reconcileBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0,
		1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60}
	queueBuckets = prometheus.ExponentialBuckets(10e-9, 10, 12)
)

// managerRegistry is the registry of a controller-runtime manager with
// controllers controllers, each with the series controller-runtime gives
// it: 81 series a controller, so that 62 make about 5,000.
func managerRegistry(controllers int) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	c := []string{"controller"}
	q := []string{"controller", "name"}
	total := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "controller_runtime_reconcile_total", Help: "Total number of reconciliations per controller"}, []string{"controller", "result"})
	took := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "controller_runtime_reconcile_time_seconds", Help: "Length of time per reconciliation per controller", Buckets: reconcileBuckets}, c)
	workers := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "controller_runtime_active_workers", Help: "Number of currently used workers per controller"}, c)
	depth := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "workqueue_depth", Help: "Current depth of workqueue"}, []string{"controller", "name", "priority"})
	longest := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "workqueue_longest_running_processor_seconds", Help: "How many seconds has the longest running processor for workqueue been running."}, q)
	unfinished := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "workqueue_unfinished_work_seconds", Help: "How many seconds of work has been done that is in progress."}, q)
	queued := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "workqueue_queue_duration_seconds", Help: "How long in seconds an item stays in workqueue before being requested", Buckets: queueBuckets}, q)
	work := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "workqueue_work_duration_seconds", Help: "How long in seconds processing an item from workqueue takes.", Buckets: queueBuckets}, q)
	reg.MustRegister(total, took, workers, depth, longest, unfinished, queued, work)
	for i := range controllers {
		name := fmt.Sprintf("controller-%d", i)
		for _, r := range []string{"error", "requeue", "requeue_after", "success"} {
			total.WithLabelValues(name, r).Add(float64(i))
		}
		took.WithLabelValues(name).Observe(0.2)
		workers.WithLabelValues(name).Set(0)
		depth.WithLabelValues(name, name, "0").Set(float64(i % 3))
		longest.WithLabelValues(name, name).Set(0)
		unfinished.WithLabelValues(name, name).Set(0)
		queued.WithLabelValues(name, name).Observe(1e-3)
		work.WithLabelValues(name, name).Observe(0.2)
	}
	return reg
}

// exposition is the text format of reg, as its metrics server writes it.
func exposition(tb testing.TB, reg *prometheus.Registry) []byte {
	tb.Helper()
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{DisableCompression: true}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return rec.Body.Bytes()
}

// BenchmarkJudge5000Series measures a metric check of a manager's 5,000
// series, written by Prometheus's own client as its metrics server writes
// them and served over loopback gzipped, as asked, against its baseline in the same
// run: expfmt's text parser alone, parsing the same exposition. Each
// iteration does both, one after the other, so that the machine's drift
// hits both alike; ratio is the check's time over the parser's. The goal is
// at most 2.
//
//	go test -run '^$' -bench BenchmarkJudge5000Series -benchmem ./cmd/vitals/internal/promcheck/
func BenchmarkJudge5000Series(b *testing.B) {
	reg := managerRegistry(62)
	body := exposition(b, reg)
	samples := 0
	for _, line := range strings.Split(string(body), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			samples++
		}
	}
	// Served as written once, gzipped: what the check costs, not what the
	// server's encoding does.
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write(body)
	zw.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(zipped.Bytes())
	}))
	defer srv.Close()
	p, err := promcheck.New(promcheck.Spec{Request: probe.HTTPSpec{URL: srv.URL + "/metrics"}, Exprs: []string{
		`absent(workqueue_longest_running_processor_seconds{controller="controller-6"}) or max(workqueue_longest_running_processor_seconds{controller="controller-6"}) < 5m`,
		`sum(increase(controller_runtime_reconcile_total{controller="controller-6"}[5m])) > 0 or sum(workqueue_depth{controller="controller-6"}) == 0`,
	}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := p.Measure(ctx); err != nil { // the window's first scrape, undecided
		b.Logf("first scrape: %v", err)
	}
	var parse, check time.Duration
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		parser := expfmt.NewTextParser(model.UTF8Validation)
		if _, err := parser.TextToMetricFamilies(bytes.NewReader(body)); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if _, err := p.Measure(ctx); err != nil {
			b.Fatal(err)
		}
		parse, check = parse+mid.Sub(start), check+time.Since(mid)
	}
	n := float64(b.N)
	b.ReportMetric(float64(samples), "samples")
	b.ReportMetric(float64(len(body)), "exposition-B")
	b.ReportMetric(float64(parse.Nanoseconds())/n, "expfmt-ns/op")
	b.ReportMetric(float64(check.Nanoseconds())/n, "check-ns/op")
	b.ReportMetric(float64(check)/float64(parse), "ratio")
}

// BenchmarkHostileExposition measures what a scrape of a hostile endpoint
// allocates, and the most the heap held during it (peak-B): each answer
// is refused, and neither grows with it past MaxBytes and what that many
// bytes parse to.
//
//	go test -run '^$' -bench BenchmarkHostileExposition -benchmem ./cmd/vitals/internal/promcheck/
func BenchmarkHostileExposition(b *testing.B) {
	hugeLabel := []byte(`x{a="` + strings.Repeat("v", 7<<20) + `"} 1` + "\n")
	manySeries := []byte(strings.Repeat("x 1\n", 1024))
	endless := []byte(strings.Repeat("# and on\n", 1024))
	var atTheBounds bytes.Buffer // MaxSamples samples of 5 labels each, in 8 MiB
	for i := range promcheck.MaxSamples {
		fmt.Fprintf(&atTheBounds, "x{a=%q,b=\"%d\",c=\"c\",d=\"d\",e=\"e\"} %d\n", strings.Repeat("v", 120), i, i)
	}
	for _, tt := range []struct {
		name  string
		write func(w io.Writer) error
	}{
		// A label value of 7 MiB: under MaxBytes, parsed, one series.
		{"huge-label", func(w io.Writer) error {
			_, err := w.Write(hugeLabel)
			return err
		}},
		// Two million series: refused when counted, before any is parsed.
		{"millions-of-series", func(w io.Writer) error {
			for range 2 << 10 {
				if _, err := w.Write(manySeries); err != nil {
					return err
				}
			}
			return nil
		}},
		// As many samples and labels as a scrape reads, in as many bytes:
		// parsed, and judged.
		{"at-the-bounds", func(w io.Writer) error {
			_, err := w.Write(atTheBounds.Bytes())
			return err
		}},
		// An answer that never ends: refused at MaxBytes.
		{"never-ends", func(w io.Writer) error {
			for {
				if _, err := w.Write(endless); err != nil {
					return err
				}
			}
		}},
	} {
		b.Run(tt.name, func(b *testing.B) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { tt.write(w) }))
			defer srv.Close()
			p, err := promcheck.New(promcheck.Spec{Request: probe.HTTPSpec{URL: srv.URL + "/metrics"}, Exprs: []string{"count(x) >= 0"}})
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			peak := watchHeap()
			b.ReportAllocs()
			for b.Loop() {
				p.Measure(ctx)
			}
			b.ReportMetric(float64(peak()), "peak-B")
		})
	}
}

// watchHeap samples the heap in use until it is told to stop, and returns
// the most it saw over what was in use when it began.
func watchHeap() (peak func() uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, most := ms.HeapAlloc, uint64(0)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > base && ms.HeapAlloc-base > most {
				most = ms.HeapAlloc - base
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(stop)
		<-done
		return most
	}
}
