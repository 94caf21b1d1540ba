package health_test

// Benchmarks of the probe endpoints, the scheduler, and the heartbeat and
// watchdog signals. Reproduce with
//
//	go test -run '^$' -bench . -benchmem -count 5 ./health/
//
// Identifiers here all start with "bench" so that they never collide with the
// helpers of the package's other test files.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/health/healthtest"
)

var benchQuiet = slog.New(slog.DiscardHandler)

// benchWriter is a ResponseWriter that reuses one header map and discards the
// body, so that a handler benchmark measures the handler and nothing else.
type benchWriter struct {
	h    http.Header
	code int
	n    int
}

func newBenchWriter() *benchWriter { return &benchWriter{h: make(http.Header, 8)} }

func (w *benchWriter) Header() http.Header         { return w.h }
func (w *benchWriter) WriteHeader(code int)        { w.code = code }
func (w *benchWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// reset makes the writer fresh for the next request without allocating.
func (w *benchWriter) reset() {
	clear(w.h)
	w.code, w.n = 0, 0
}

// The bare handler's header values are shared slices, the way a careful
// handler avoids Header.Set's allocation of a new []string per call.
var (
	benchTextPlain = []string{"text/plain; charset=utf-8"}
	benchNosniff   = []string{"nosniff"}
	benchNoStore   = []string{"no-store"}
	benchOK        = []byte("ok")
)

// benchBare is the floor: the least a probe handler that sets the same three
// headers and writes "ok" can do.
var benchBare = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h["Content-Type"] = benchTextPlain
	h["X-Content-Type-Options"] = benchNosniff
	h["Cache-Control"] = benchNoStore
	w.WriteHeader(http.StatusOK)
	w.Write(benchOK)
})

var errBenchDown = errors.New("dial tcp 10.0.0.7:5432: connect: connection refused")

// benchReadyMonitor returns a started Monitor on the system clock with n ready
// checks, of which the first failing ones fail, once every check has recorded
// its first result. The checks run once: their period is an hour.
func benchReadyMonitor(b *testing.B, n, failing int) *health.Monitor {
	b.Helper()
	m := health.New(health.WithLogger(benchQuiet))
	pass := health.CheckerFunc(func(context.Context) error { return nil })
	fail := health.CheckerFunc(func(context.Context) error { return errBenchDown })
	for i := range n {
		c := health.Check{Name: fmt.Sprintf("dep-%02d", i), Level: health.Ready, Checker: pass,
			Period: time.Hour, SuccessThreshold: 1, FailureThreshold: 1}
		if i < failing {
			c.Checker = fail
		}
		if err := m.Add(c); err != nil {
			b.Fatal(err)
		}
	}
	start(b, m)
	waitFor(b, "every check to record its first result", func() bool {
		for i := range n {
			if st, _ := m.CheckState(fmt.Sprintf("dep-%02d", i)); st.Runs < 1 {
				return false
			}
		}
		return true
	})
	if want := failing == 0; m.Passing(health.Ready) != want {
		b.Fatalf("ready level passing = %v, want %v", !want, want)
	}
	return m
}

// benchCheckResponse serves req once through a recorder, outside the timer,
// so that each benchmark is known to measure the answer it claims to.
func benchCheckResponse(b *testing.B, h http.Handler, target string, code int, contentType, bodyHas string) {
	b.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	res := rec.Result()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != code || res.Header.Get("Content-Type") != contentType ||
		res.Header.Get("Cache-Control") != "no-store" || res.Header.Get("X-Content-Type-Options") != "nosniff" ||
		!strings.Contains(string(body), bodyHas) {
		b.Fatalf("GET %s: %d %v\n%s\nwant %d, Content-Type %q, no-store, nosniff and a body with %q",
			target, res.StatusCode, res.Header, body, code, contentType, bodyHas)
	}
}

// benchServe is the loop of every handler benchmark: one pre-built request,
// one reused writer.
func benchServe(b *testing.B, h http.Handler, target string, code int) {
	b.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	w := newBenchWriter()
	b.ReportAllocs()
	for b.Loop() {
		w.reset()
		h.ServeHTTP(w, req)
	}
	if w.code != code {
		b.Fatalf("GET %s answered %d, want %d", target, w.code, code)
	}
}

// BenchmarkReadyz is the probe's path: GET /readyz with 50 passing checks.
func BenchmarkReadyz(b *testing.B) {
	m := benchReadyMonitor(b, 50, 0)
	benchCheckResponse(b, m.Handler(), "/readyz", http.StatusOK, "text/plain; charset=utf-8", "ok")
	benchServe(b, m.Handler(), "/readyz", http.StatusOK)
}

// BenchmarkBareHandler is the floor that BenchmarkReadyz is compared with.
func BenchmarkBareHandler(b *testing.B) {
	benchCheckResponse(b, benchBare, "/readyz", http.StatusOK, "text/plain; charset=utf-8", "ok")
	benchServe(b, benchBare, "/readyz", http.StatusOK)
}

// BenchmarkReadyzVerbose lists the 50 passing checks.
func BenchmarkReadyzVerbose(b *testing.B) {
	m := benchReadyMonitor(b, 50, 0)
	benchCheckResponse(b, m.Handler(), "/readyz?verbose", http.StatusOK, "text/plain; charset=utf-8",
		"[+]dep-49 ok\n")
	benchServe(b, m.Handler(), "/readyz?verbose", http.StatusOK)
}

// BenchmarkReadyzJSON answers the 50 passing checks in application/health+json.
func BenchmarkReadyzJSON(b *testing.B) {
	m := benchReadyMonitor(b, 50, 0)
	benchCheckResponse(b, m.Handler(), "/readyz?format=json", http.StatusOK, "application/health+json",
		`"dep-49":[{"status":"pass"`)
	benchServe(b, m.Handler(), "/readyz?format=json", http.StatusOK)
}

// BenchmarkReadyzFailing is the probe's path when one of 50 checks fails: the
// verbose text is built for the 503.
func BenchmarkReadyzFailing(b *testing.B) {
	m := benchReadyMonitor(b, 50, 1)
	benchCheckResponse(b, m.Handler(), "/readyz", http.StatusServiceUnavailable, "text/plain; charset=utf-8",
		"[-]dep-00 failed: "+errBenchDown.Error()+"\n")
	benchServe(b, m.Handler(), "/readyz", http.StatusServiceUnavailable)
}

// benchServeParallel is benchServe on every P: one shared request (the
// handlers only read it), a writer per goroutine.
func benchServeParallel(b *testing.B, h http.Handler) {
	req := httptest.NewRequest(http.MethodGet, "/readyz", nil)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		w := newBenchWriter()
		served := false
		for pb.Next() {
			w.reset()
			h.ServeHTTP(w, req)
			served = true
		}
		if served && w.code != http.StatusOK {
			b.Errorf("GET /readyz answered %d, want 200", w.code)
		}
	})
}

// BenchmarkReadyzParallel serves /readyz from every P at once. Were there a
// lock on the probe's path, ns/op would not fall below BenchmarkReadyz's.
func BenchmarkReadyzParallel(b *testing.B) {
	m := benchReadyMonitor(b, 50, 0)
	benchServeParallel(b, m.Handler())
}

// BenchmarkBareHandlerParallel is the floor that BenchmarkReadyzParallel is
// compared with.
func BenchmarkBareHandlerParallel(b *testing.B) {
	benchServeParallel(b, benchBare)
}

// benchChecks is how many checks the scheduler benchmarks run.
const benchChecks = 10_000

// benchScheduleMonitor returns a Monitor on a fake clock without jitter, with
// benchChecks ready checks of period 10s that count their runs in runs.
func benchScheduleMonitor(b *testing.B, clk health.Clock, runs *atomic.Int64, opts ...health.Option) *health.Monitor {
	m := health.New(append([]health.Option{health.WithClock(clk), health.WithJitter(0), health.WithLogger(benchQuiet)}, opts...)...)
	chk := health.CheckerFunc(func(context.Context) error {
		runs.Add(1)
		return nil
	})
	for i := range benchChecks {
		if err := m.Add(health.Check{Name: fmt.Sprintf("check-%05d", i), Level: health.Ready, Checker: chk,
			Period: 10 * time.Second, SuccessThreshold: 1, FailureThreshold: 1}); err != nil {
			b.Fatal(err)
		}
	}
	return m
}

// benchStop cancels m's context and waits until its workers have returned.
func benchStop(b *testing.B, m *health.Monitor, cancel context.CancelFunc) {
	cancel()
	select {
	case <-m.Done():
	case <-time.After(settle):
		b.Fatalf("monitor workers did not stop within %v", settle)
	}
}

// benchScheduleOnce is one iteration of BenchmarkSchedule10000Checks: New, Add
// benchChecks checks, Start, wait until all have passed once, cancel, wait for
// Done.
func benchScheduleOnce(b *testing.B, clk health.Clock) {
	var runs atomic.Int64
	m := benchScheduleMonitor(b, clk, &runs)
	ctx, cancel := context.WithCancel(context.Background())
	m.Start(ctx)
	// Passing(Ready) needs every one of the ready checks to have passed.
	waitFor(b, "every check to pass once", func() bool { return m.Passing(health.Ready) })
	benchStop(b, m, cancel)
	if n := runs.Load(); n != benchChecks {
		b.Fatalf("%d runs, want %d", n, benchChecks)
	}
}

// BenchmarkSchedule10000Checks is the cost of bringing up 10,000 checks on the
// fake clock: New, 10,000 Adds, Start, every check's first run recorded, and
// shutdown.
func BenchmarkSchedule10000Checks(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		benchScheduleOnce(b, healthtest.NewClock(time.Time{}))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchChecks, "ns/check")
}

// BenchmarkSchedule10000ChecksSystemClock is BenchmarkSchedule10000Checks on
// the system clock, to tell the Monitor's own cost from the fake clock's.
// Every first run is due at Start, so the system clock needs no waiting.
func BenchmarkSchedule10000ChecksSystemClock(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		benchScheduleOnce(b, nil) // WithClock(nil) keeps the system clock
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchChecks, "ns/check")
}

// BenchmarkSchedule10000ChecksPeriod is the cost of one period of 10,000
// running checks: the fake clock moves one period, every timer fires, and
// every check runs, records its second (third, ...) result and sleeps again.
// The 10,000 checks are started once, outside the timer.
func BenchmarkSchedule10000ChecksPeriod(b *testing.B) {
	clk := healthtest.NewClock(time.Time{})
	var runs, recorded atomic.Int64
	m := benchScheduleMonitor(b, clk, &runs, health.WithRecorder(func(health.Recorded) { recorded.Add(1) }))
	ctx, cancel := context.WithCancel(context.Background())
	m.Start(ctx)
	defer benchStop(b, m, cancel)
	// Every check has recorded its k-th result and sleeps: its timer is the
	// only one (a run's deadline goes before its result is recorded, and
	// its next wake comes after).
	asleep := func(k int64) func() bool {
		return func() bool { return recorded.Load() == k*benchChecks && clk.Pending() == benchChecks }
	}
	k := int64(1)
	waitFor(b, "every check to record its first result and sleep", asleep(k))
	if !m.Passing(health.Ready) {
		b.Fatal("ready level not passing after every check's first run")
	}
	b.ReportAllocs()
	for b.Loop() {
		k++
		clk.Advance(10 * time.Second)
		waitFor(b, "every check to record its next result and sleep", asleep(k))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchChecks, "ns/check")
	if got, want := runs.Load(), k*benchChecks; got != want {
		b.Fatalf("%d runs, want %d", got, want)
	}
}

// BenchmarkHeartbeatBeat beats a passing heartbeat from every P at once.
func BenchmarkHeartbeatBeat(b *testing.B) {
	m := health.New(health.WithLogger(benchQuiet))
	hb, err := m.Heartbeat("main-loop", time.Hour, health.Live)
	if err != nil {
		b.Fatal(err)
	}
	start(b, m)
	hb.Beat()
	waitFor(b, "the heartbeat to pass", func() bool {
		st, _ := m.CheckState("main-loop")
		return st.Status == health.Pass
	})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			hb.Beat()
		}
	})
}

// BenchmarkWatchdogBeginDone is one unit of work, begun and done, on a passing
// watchdog. idle: no other unit runs, so each Begin is the first and signals
// the watchdog's worker. busy: a long unit runs throughout, so no Begin does.
func BenchmarkWatchdogBeginDone(b *testing.B) {
	for _, busy := range []bool{false, true} {
		name := "idle"
		if busy {
			name = "busy"
		}
		b.Run(name, func(b *testing.B) {
			m := health.New(health.WithLogger(benchQuiet))
			wd, err := m.Watchdog("requests", time.Hour, health.Live)
			if err != nil {
				b.Fatal(err)
			}
			start(b, m)
			waitFor(b, "the watchdog to pass", func() bool {
				st, _ := m.CheckState("requests")
				return st.Status == health.Pass
			})
			if busy {
				defer wd.Begin()()
			}
			b.ReportAllocs()
			for b.Loop() {
				done := wd.Begin()
				done()
			}
		})
	}
}

// BenchmarkScheduledRun is the cost of one run of a check on the system
// clock, the way a service runs them: 1,000 checks that return nil, every
// 10ms, their histories full. An op is one run, so allocs/op is what the
// scheduler, the run and its record allocate per run: none.
func BenchmarkScheduledRun(b *testing.B) {
	const checks = 1000
	var runs, until atomic.Int64
	until.Store(math.MaxInt64)
	reached := make(chan struct{})
	var once sync.Once
	chk := health.CheckerFunc(func(context.Context) error {
		if runs.Add(1) >= until.Load() {
			once.Do(func() { close(reached) })
		}
		return nil
	})
	m := health.New(health.WithJitter(0), health.WithLogger(benchQuiet))
	for i := range checks {
		if err := m.Add(health.Check{Name: fmt.Sprintf("check-%04d", i), Level: health.Ready, Checker: chk,
			Period: 10 * time.Millisecond, Timeout: 5 * time.Millisecond}); err != nil {
			b.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	m.Start(ctx)
	defer benchStop(b, m, cancel)
	// Every history full, so that none grows while measured.
	waitFor(b, "every history to fill", func() bool { return runs.Load() > checks*(health.DefaultHistory+2) })
	b.ReportAllocs()
	b.ResetTimer()
	until.Store(runs.Load() + int64(b.N))
	<-reached
}
