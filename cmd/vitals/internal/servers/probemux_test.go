package servers

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/ui"
	"github.com/vitals-dev/vitals/health"
)

// readyMonitor is a started Monitor with n ready checks that pass (period
// 1h), once they all have.
func readyMonitor(tb testing.TB, n int) *health.Monitor {
	tb.Helper()
	m := health.New(health.WithLogger(slog.New(slog.DiscardHandler)))
	for i := range n {
		err := m.Add(health.Check{Name: fmt.Sprintf("check-%02d", i), Level: health.Ready, Period: time.Hour,
			Checker: health.CheckerFunc(func(context.Context) error { return nil })})
		if err != nil {
			tb.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	m.Start(ctx)
	for deadline := time.Now().Add(10 * time.Second); !m.Passing(health.Ready); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) { // a guard: the first runs start at once
			tb.Fatalf("the %d checks did not pass", n)
		}
	}
	return m
}

// probeParts are what the agent mounts on the probe listener, over m: its
// probe endpoints, /metrics over a registry with a metric in it, and the
// status page (nil with noPage).
func probeParts(m *health.Monitor, noPage bool) (probes, metrics, page http.Handler) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "vitals_test_total", Help: "A counter."}))
	metrics = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	if !noPage {
		page = Rearmed(ui.New(m, ui.Options{Details: true, Streams: 1}))
	}
	return m.Handler(), metrics, page
}

// muxAlone is the probe listener's mux without ProbeHandler's shortcut.
func muxAlone(probes, metrics, page http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", probes)
	mux.Handle("/metrics", metrics)
	if page != nil {
		mux.Handle("/{$}", page)
		mux.Handle("/ui/", page)
	}
	return mux
}

// The probe endpoints skip the mux, and nothing else does: every request,
// the probes' own among them, is answered as the mux alone answers it.
func TestTheProbeListenerAnswersEveryRequestAsItsMuxAlone(t *testing.T) {
	m := readyMonitor(t, 3)
	type request struct{ method, target, accept string }
	var requests []request
	for _, target := range []string{
		"/readyz", "/livez", "/healthz", "/startupz", "/readyz?verbose", "/livez?exclude=check-00&verbose",
		"/readyz/check-01", "/readyz/nope", "/readyz/", "/ready%7Az", "/readyz/../livez", "//readyz", "/./readyz",
		"/metrics", "/metrics/", "/", "/ui/style.css", "/ui/", "/ui", "/ui/api/status", "/nope", "/READYZ",
	} {
		for _, method := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodConnect} {
			requests = append(requests, request{method, target, ""})
		}
		requests = append(requests, request{http.MethodGet, target, "application/health+json"})
	}
	requests = append(requests, request{http.MethodOptions, "*", ""})
	for _, noPage := range []bool{false, true} {
		probes, metrics, page := probeParts(m, noPage)
		got, want := ProbeHandler(probes, metrics, page), muxAlone(probes, metrics, page)
		for _, rq := range requests {
			answer := func(h http.Handler) string {
				r := httptest.NewRequest(rq.method, "http://vitals"+rq.target, nil)
				if rq.target == "*" {
					r = httptest.NewRequest(rq.method, "*", nil)
				}
				if rq.accept != "" {
					r.Header.Set("Accept", rq.accept)
				}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				res := w.Result()
				res.Header.Del("Date")
				return fmt.Sprintf("%d %v\n%s", res.StatusCode, res.Header, w.Body)
			}
			if g, w := answer(got), answer(want); g != w {
				t.Errorf("page %v, %s %s (Accept %q):\n%s\nwant, as the mux alone answers:\n%s", !noPage, rq.method, rq.target, rq.accept, g, w)
			}
		}
	}
}

// discardWriter is a ResponseWriter reused from request to request, as a
// server reuses its buffers, so that an allocation counted is the handler's.
type discardWriter struct {
	header http.Header
	code   int
	n      int
}

func newDiscardWriter() *discardWriter { return &discardWriter{header: http.Header{}} }

func (w *discardWriter) reset() {
	clear(w.header)
	w.code, w.n = 0, 0
}

func (w *discardWriter) Header() http.Header { return w.header }

func (w *discardWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *discardWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	w.n += len(p)
	return len(p), nil
}

// The library's probe handler allocates nothing on the probes' path; on the
// probe listener, with /metrics and the status page beside it, neither does
// the agent's.
func TestTheProbesPathOnTheProbeListenerAllocatesNothing(t *testing.T) {
	m := readyMonitor(t, 50)
	h := ProbeHandler(probeParts(m, false))
	for _, target := range []string{"/readyz", "/livez", "/healthz", "/startupz"} {
		r := httptest.NewRequest(http.MethodGet, target, nil)
		r.Header.Set("Accept", "*/*")
		w := newDiscardWriter()
		allocs := testing.AllocsPerRun(100, func() {
			w.reset()
			h.ServeHTTP(w, r)
		})
		if w.code != http.StatusOK || w.n != len("ok") {
			t.Fatalf("GET %s: %d, %d bytes; want 200 ok", target, w.code, w.n)
		}
		if allocs != 0 {
			t.Errorf("GET %s: %v allocations a request, want 0", target, allocs)
		}
	}
}
