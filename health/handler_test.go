package health_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/health/healthtest"
	"github.com/vitals-dev/vitals/internal/testenv"
)

const (
	probeText   = "text/plain; charset=utf-8"
	probeJSON   = "application/health+json"
	probeEpoch  = "2026-01-01T00:00:00Z" // healthtest.Epoch, as the JSON format writes it
	probePeriod = 10 * time.Second
)

// oneRun is a check that one run decides: both thresholds are 1.
func oneRun(name string, level health.Level, c health.Checker) health.Check {
	return health.Check{Name: name, Level: level, Checker: c, Period: probePeriod,
		SuccessThreshold: 1, FailureThreshold: 1}
}

// probeFixture is a Monitor on a fake clock and its handler.
type probeFixture struct {
	m   *health.Monitor
	clk *healthtest.Clock
	h   http.Handler
}

func newProbeFixture(t *testing.T, opts []health.Option, checks ...health.Check) *probeFixture {
	t.Helper()
	m, clk := fakeMonitor(t, opts...)
	for _, c := range checks {
		if err := m.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	return &probeFixture{m: m, clk: clk, h: m.Handler()}
}

// run starts the Monitor and waits for the first result of each named check.
func (f *probeFixture) run(t *testing.T, ran ...string) {
	t.Helper()
	start(t, f.m)
	for _, name := range ran {
		waitRuns(t, f.m, name, 1)
	}
}

// probeStack is the usual service: a startup check, a live check and two ready
// checks, registered in that order, each decided by one run.
type probeStack struct {
	*probeFixture
	boot, loop, db, cache *switchable
}

// newProbeStack builds the probeStack with every check passing; the test makes some fail
// before calling run.
func newProbeStack(t *testing.T, opts ...health.Option) *probeStack {
	t.Helper()
	s := &probeStack{boot: passing(), loop: passing(), db: passing(), cache: passing()}
	db := oneRun("db", health.Ready, s.db)
	db.ComponentType = "datastore"
	s.probeFixture = newProbeFixture(t, opts,
		oneRun("boot", health.Startup, s.boot),
		oneRun("loop", health.Live, s.loop),
		db,
		oneRun("cache", health.Ready, s.cache),
	)
	return s
}

// run starts the probeStack and waits until every check has a result.
func (s *probeStack) run(t *testing.T) {
	t.Helper()
	s.probeFixture.run(t, "boot", "loop", "db", "cache")
}

// probeCase is one request and the exact answer expected.
type probeCase struct {
	method string // GET when empty
	target string
	accept string
	code   int
	body   string
	ctype  string // text/plain; charset=utf-8 when empty
	// notProbe marks answers that are not a probe's (an unknown path, a
	// refused method): Cache-Control is not pinned for them.
	notProbe bool
}

func (pc probeCase) String() string {
	s := pc.method
	if s == "" {
		s = http.MethodGet
	}
	s += " " + pc.target
	if pc.accept != "" {
		s += " Accept:" + pc.accept
	}
	return s
}

func serveProbe(h http.Handler, method, target, accept string) *httptest.ResponseRecorder {
	if method == "" {
		method = http.MethodGet
	}
	r := httptest.NewRequest(method, target, nil)
	if accept != "" {
		r.Header.Set("Accept", accept)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// checkProbes runs each case as a subtest and pins status, body and headers.
func checkProbes(t *testing.T, h http.Handler, cases []probeCase) {
	t.Helper()
	for _, pc := range cases {
		t.Run(pc.String(), func(t *testing.T) {
			w := serveProbe(h, pc.method, pc.target, pc.accept)
			checkAnswer(t, w, pc)
		})
	}
}

func checkAnswer(t *testing.T, w *httptest.ResponseRecorder, pc probeCase) {
	t.Helper()
	if w.Code != pc.code {
		t.Errorf("status %d, want %d (body %q)", w.Code, pc.code, w.Body.String())
	}
	if got := w.Body.String(); got != pc.body {
		t.Errorf("body:\n got %q\nwant %q", got, pc.body)
	}
	ctype := pc.ctype
	if ctype == "" {
		ctype = probeText
	}
	hdr := w.Result().Header
	if got := hdr.Values("Content-Type"); len(got) != 1 || got[0] != ctype {
		t.Errorf("Content-Type %q, want %q", got, ctype)
	}
	if got := hdr.Values("X-Content-Type-Options"); len(got) != 1 || got[0] != "nosniff" {
		t.Errorf("X-Content-Type-Options %q, want nosniff", got)
	}
	if !pc.notProbe {
		if got := hdr.Values("Cache-Control"); len(got) != 1 || got[0] != "no-store" {
			t.Errorf("Cache-Control %q, want no-store", got)
		}
	}
}

// ietf decodes an application/health+json body into plain maps, so that a
// comparison pins which keys are present as well as their values.
func ietf(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var v map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, body)
	}
	if dec.More() {
		t.Fatalf("more than one JSON value in the body:\n%s", body)
	}
	return v
}

// result is one member of the JSON format's checks, as decoded.
func checkResult(fields ...any) []any {
	m := map[string]any{}
	for i := 0; i < len(fields); i += 2 {
		m[fields[i].(string)] = fields[i+1]
	}
	return []any{m}
}

func checkJSON(t *testing.T, w *httptest.ResponseRecorder, code int, want map[string]any) {
	t.Helper()
	if w.Code != code {
		t.Errorf("status %d, want %d", w.Code, code)
	}
	if got := w.Header().Get("Content-Type"); got != probeJSON {
		t.Errorf("Content-Type %q, want %q", got, probeJSON)
	}
	if got := w.Header().Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", got)
	}
	if got := w.Header().Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("X-Content-Type-Options %q, want nosniff", got)
	}
	got := ietf(t, w.Body.Bytes())
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", "  ")
		x, _ := json.MarshalIndent(want, "", "  ")
		t.Errorf("JSON:\n got %s\nwant %s", g, x)
	}
}

func TestEveryProbeAnswersOKWhenItsLevelPasses(t *testing.T) {
	s := newProbeStack(t)
	s.run(t)
	checkProbes(t, s.h, []probeCase{
		{target: "/readyz", code: 200, body: "ok"},
		{target: "/livez", code: 200, body: "ok"},
		{target: "/startupz", code: 200, body: "ok"},
		{target: "/healthz", code: 200, body: "ok"},
		// A query that changes nothing keeps the plain answer.
		{target: "/readyz?format=text", code: 200, body: "ok"},
		{target: "/readyz?exclude=cache", code: 200, body: "ok"},
		{target: "/readyz?", code: 200, body: "ok"},
	})
}

// The probe's path allocates nothing, whatever Accept line a prober sends
// that asks for no JSON: the kubelet's */*, a browser's, none; nor with the
// details decided per request. (The
// benchmarks measure it; this pins it.)
func TestTheProbesPathAllocatesNothing(t *testing.T) {
	s := newProbeStack(t, health.WithServiceInfo(health.ServiceInfo{ServiceID: "checkout", Version: "2", ReleaseID: "1.4.2"}))
	s.run(t)
	perRequest := s.m.HandlerWithDetails(func(*http.Request) bool { return false })
	for _, h := range []http.Handler{s.h, perRequest} {
		for _, accept := range []string{"", "*/*", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "application/json;q=0"} {
			r := httptest.NewRequest(http.MethodGet, "/readyz", nil)
			if accept != "" {
				r.Header.Set("Accept", accept)
			}
			w := newBenchWriter()
			allocs := testing.AllocsPerRun(100, func() {
				w.reset()
				h.ServeHTTP(w, r)
			})
			if w.code != http.StatusOK || w.n != len("ok") {
				t.Fatalf("Accept %q: %d, %d bytes; want 200 ok", accept, w.code, w.n)
			}
			if allocs != 0 {
				t.Errorf("%T, Accept %q: %v allocations a request, want 0", h, accept, allocs)
			}
		}
	}
}

func TestVerboseListsEveryCheckOnSuccessEvenWhenFalse(t *testing.T) {
	s := newProbeStack(t)
	s.run(t)
	readyz := "[+]boot ok\n[+]loop ok\n[+]db ok\n[+]cache ok\n[+]shutdown ok\nreadyz check passed\n"
	checkProbes(t, s.h, []probeCase{
		{target: "/readyz?verbose", code: 200, body: readyz},
		{target: "/readyz?verbose=true", code: 200, body: readyz},
		// As in the kube-apiserver, the parameter counts with any value.
		{target: "/readyz?verbose=false", code: 200, body: readyz},
		{target: "/readyz?verbose=0", code: 200, body: readyz},
		{target: "/readyz?verbose=", code: 200, body: readyz},
		{target: "/livez?verbose", code: 200, body: "[+]loop ok\nlivez check passed\n"},
		{target: "/startupz?verbose", code: 200, body: "[+]boot ok\nstartupz check passed\n"},
		{target: "/healthz?verbose", code: 200, body: "[+]loop ok\nhealthz check passed\n"},
	})
}

func TestFailingReadyCheckFailsReadyzVerboselyButNotLivez(t *testing.T) {
	s := newProbeStack(t)
	s.db.fail("dial tcp 127.0.0.1:5432: connect: connection refused")
	s.run(t)
	readyz := "[+]boot ok\n[+]loop ok\n" +
		"[-]db failed: dial tcp 127.0.0.1:5432: connect: connection refused\n" +
		"[+]cache ok\n[+]shutdown ok\nreadyz check failed\n"
	checkProbes(t, s.h, []probeCase{
		// Always verbose on failure, with or without ?verbose.
		{target: "/readyz", code: 503, body: readyz},
		{target: "/readyz?verbose", code: 503, body: readyz},
		{target: "/readyz?verbose=false", code: 503, body: readyz},
		{target: "/livez", code: 200, body: "ok"},
		{target: "/healthz", code: 200, body: "ok"},
		{target: "/startupz", code: 200, body: "ok"},
	})
}

func TestFailingLiveCheckFailsLivezHealthzAndReadyz(t *testing.T) {
	s := newProbeStack(t)
	s.loop.fail("no progress for 5m0s")
	s.run(t)
	checkProbes(t, s.h, []probeCase{
		{target: "/livez", code: 503, body: "[-]loop failed: no progress for 5m0s\nlivez check failed\n"},
		{target: "/healthz", code: 503, body: "[-]loop failed: no progress for 5m0s\nhealthz check failed\n"},
		{target: "/readyz", code: 503,
			body: "[+]boot ok\n[-]loop failed: no progress for 5m0s\n[+]db ok\n[+]cache ok\n[+]shutdown ok\nreadyz check failed\n"},
		{target: "/startupz", code: 200, body: "ok"},
	})
}

func TestReadyAndLiveChecksWaitForStartupChecks(t *testing.T) {
	s := newProbeStack(t)
	s.boot.fail("peer config /etc/app/peers.conf: no such file or directory")
	s.probeFixture.run(t, "boot")
	if n := s.db.runs.Load(); n != 0 {
		t.Fatalf("the ready check ran %d times before startup passed", n)
	}
	bootLine := "[-]boot failed: peer config /etc/app/peers.conf: no such file or directory\n"
	checkProbes(t, s.h, []probeCase{
		{target: "/startupz", code: 503, body: bootLine + "startupz check failed\n"},
		{target: "/readyz", code: 503, body: bootLine +
			"[+]loop pending: waiting for startup checks\n" +
			"[-]db pending: waiting for startup checks\n" +
			"[-]cache pending: waiting for startup checks\n" +
			"[+]shutdown ok\n" +
			"readyz check failed\n"},
		// A pending live check does not fail liveness.
		{target: "/livez", code: 200, body: "ok"},
		{target: "/livez?verbose", code: 200, body: "[+]loop pending: waiting for startup checks\nlivez check passed\n"},
		{target: "/healthz?verbose", code: 200, body: "[+]loop pending: waiting for startup checks\nhealthz check passed\n"},
		{target: "/livez/loop", code: 200, body: "ok"},
		{target: "/readyz/db", code: 503, body: "[-]db pending: waiting for startup checks\n"},
	})
}

func TestCheckWithoutAResultIsPendingNoResultYet(t *testing.T) {
	f := newProbeFixture(t, nil,
		health.Check{Name: "warmup", Level: health.Startup, Checker: passing(), InitialDelay: time.Hour,
			SuccessThreshold: 1, FailureThreshold: 1},
	)
	f.run(t)
	checkProbes(t, f.h, []probeCase{
		{target: "/startupz", code: 503, body: "[-]warmup pending: no result yet\nstartupz check failed\n"},
		{target: "/readyz", code: 503, body: "[-]warmup pending: no result yet\n[+]shutdown ok\nreadyz check failed\n"},
		{target: "/startupz/warmup", code: 503, body: "[-]warmup pending: no result yet\n"},
		{target: "/livez", code: 200, body: "ok"},
	})
}

func TestReadyCheckAfterStartupWithoutAResultIsPendingNoResultYet(t *testing.T) {
	f := newProbeFixture(t, nil,
		health.Check{Name: "db", Level: health.Ready, Checker: passing(), InitialDelay: time.Hour,
			SuccessThreshold: 1, FailureThreshold: 1},
	)
	f.run(t) // no startup checks: startup passes at Start
	checkProbes(t, f.h, []probeCase{
		{target: "/readyz", code: 503, body: "[-]db pending: no result yet\n[+]shutdown ok\nreadyz check failed\n"},
		{target: "/startupz?verbose", code: 200, body: "startupz check passed\n"},
	})
}

func TestPendingCheckShowsItsProgressTowardsAThreshold(t *testing.T) {
	f := newProbeFixture(t, nil,
		health.Check{Name: "db", Level: health.Ready, Checker: passing(), Period: probePeriod,
			SuccessThreshold: 2, FailureThreshold: 3},
		health.Check{Name: "mq", Level: health.Ready, Checker: failing("connection reset by peer"), Period: probePeriod,
			SuccessThreshold: 1, FailureThreshold: 3},
	)
	f.run(t, "db", "mq")
	checkProbes(t, f.h, []probeCase{
		{target: "/readyz", code: 503, body: "[-]db pending: 1 of 2 passes needed\n" +
			"[-]mq pending: 1 of 3 failures: connection reset by peer\n[+]shutdown ok\nreadyz check failed\n"},
	})
}

func TestWarningCheckStillPassesAndShowsItsOutput(t *testing.T) {
	db := passing()
	f := newProbeFixture(t, nil,
		oneRun("boot", health.Startup, passing()),
		oneRun("loop", health.Live, passing()),
		health.Check{Name: "db", Level: health.Ready, Checker: db, Period: probePeriod,
			SuccessThreshold: 1, FailureThreshold: 3},
	)
	f.run(t, "boot", "loop", "db")
	db.fail("query took 1.2s")
	advance(t, f.clk, 2, probePeriod) // loop and db sleep; boot has latched and stopped
	if st := waitRuns(t, f.m, "db", 2); st.Status != health.Warn {
		t.Fatalf("db is %v, want warn", st.Status)
	}
	waitRuns(t, f.m, "loop", 2)
	checkProbes(t, f.h, []probeCase{
		{target: "/readyz", code: 200, body: "ok"},
		{target: "/readyz?verbose", code: 200,
			body: "[+]boot ok\n[+]loop ok\n[+]db warn: query took 1.2s\n[+]shutdown ok\nreadyz check passed\n"},
		// The per-check path answers ok: the check does not fail the endpoint.
		{target: "/readyz/db", code: 200, body: "ok"},
	})
}

func TestReadyzListsStartupLiveAndReadyChecksInOrder(t *testing.T) {
	f := newProbeFixture(t, nil,
		oneRun("db", health.Ready, passing()),
		oneRun("loop", health.Live, passing()),
		oneRun("boot", health.Startup, passing()),
		oneRun("cache", health.Ready, passing()),
		oneRun("tick", health.Live, passing()),
		oneRun("migrate", health.Startup, passing()),
	)
	f.run(t, "db", "loop", "boot", "cache", "tick", "migrate")
	checkProbes(t, f.h, []probeCase{
		{target: "/readyz?verbose", code: 200, body: "[+]db ok\n[+]loop ok\n[+]boot ok\n[+]cache ok\n" +
			"[+]tick ok\n[+]migrate ok\n[+]shutdown ok\nreadyz check passed\n"},
	})
}

func TestEachEndpointListsOnlyTheChecksOfItsLevel(t *testing.T) {
	f := newProbeFixture(t, nil,
		oneRun("db", health.Ready, passing()),
		oneRun("loop", health.Live, passing()),
		oneRun("boot", health.Startup, passing()),
		oneRun("cache", health.Ready, passing()),
		oneRun("tick", health.Live, passing()),
		oneRun("migrate", health.Startup, passing()),
	)
	f.run(t, "db", "loop", "boot", "cache", "tick", "migrate")
	checkProbes(t, f.h, []probeCase{
		{target: "/startupz?verbose", code: 200, body: "[+]boot ok\n[+]migrate ok\nstartupz check passed\n"},
		{target: "/livez?verbose", code: 200, body: "[+]loop ok\n[+]tick ok\nlivez check passed\n"},
		{target: "/healthz?verbose", code: 200, body: "[+]loop ok\n[+]tick ok\nhealthz check passed\n"},
	})
}

func TestExcludeLeavesChecksOut(t *testing.T) {
	s := newProbeStack(t)
	s.db.fail("connection refused")
	s.run(t)
	unknownAB := `warn: some health checks cannot be excluded: no matches for "a","b"` + "\n"
	checkProbes(t, s.h, []probeCase{
		// Excluding the only failing check makes readiness pass.
		{target: "/readyz?exclude=db", code: 200, body: "ok"},
		{target: "/readyz?exclude=db&verbose", code: 200,
			body: "[+]boot ok\n[+]loop ok\n[+]db excluded: ok\n[+]cache ok\n[+]shutdown ok\nreadyz check passed\n"},
		// exclude repeats.
		{target: "/readyz?exclude=db&exclude=cache&verbose", code: 200,
			body: "[+]boot ok\n[+]loop ok\n[+]db excluded: ok\n[+]cache excluded: ok\n[+]shutdown ok\nreadyz check passed\n"},
		// Excluding a passing check leaves the failing one failing.
		{target: "/readyz?exclude=cache", code: 503,
			body: "[+]boot ok\n[+]loop ok\n[-]db failed: connection refused\n[+]cache excluded: ok\n[+]shutdown ok\nreadyz check failed\n"},
		// Unknown names: a warning after the check lines, before the trailer.
		{target: "/readyz?exclude=a&exclude=b", code: 503,
			body: "[+]boot ok\n[+]loop ok\n[-]db failed: connection refused\n[+]cache ok\n[+]shutdown ok\n" + unknownAB + "readyz check failed\n"},
		{target: "/readyz?exclude=a&exclude=db&exclude=b", code: 200, body: "ok"},
		{target: "/readyz?exclude=a&exclude=db&exclude=b&verbose", code: 200,
			body: "[+]boot ok\n[+]loop ok\n[+]db excluded: ok\n[+]cache ok\n[+]shutdown ok\n" + unknownAB + "readyz check passed\n"},
		// Values are not split on commas, as in the kube-apiserver.
		{target: "/readyz?exclude=db,cache", code: 503,
			body: "[+]boot ok\n[+]loop ok\n[-]db failed: connection refused\n[+]cache ok\n[+]shutdown ok\n" +
				`warn: some health checks cannot be excluded: no matches for "db,cache"` + "\nreadyz check failed\n"},
		// A check that is not on the endpoint matches nothing there.
		{target: "/livez?exclude=db&verbose", code: 200,
			body: "[+]loop ok\n" + `warn: some health checks cannot be excluded: no matches for "db"` + "\nlivez check passed\n"},
	})
}

func TestExcludingTheSameCheckTwiceWarnsOfNoUnknownName(t *testing.T) {
	s := newProbeStack(t)
	s.db.fail("connection refused")
	s.run(t)
	checkProbes(t, s.h, []probeCase{
		{target: "/readyz?exclude=db&exclude=db&verbose", code: 200,
			body: "[+]boot ok\n[+]loop ok\n[+]db excluded: ok\n[+]cache ok\n[+]shutdown ok\nreadyz check passed\n"},
	})
	w := serveProbe(s.h, "", "/readyz?exclude=db&exclude=db&format=json", "")
	if notes, ok := ietf(t, w.Body.Bytes())["notes"]; ok {
		t.Errorf("JSON notes %v for a name that matched a check", notes)
	}
}

func TestDrainFailsReadyzWithAShutdownLineAndLeavesLivezAlone(t *testing.T) {
	s := newProbeStack(t)
	s.run(t)
	s.m.Drain()
	readyz := "[+]boot ok\n[+]loop ok\n[+]db ok\n[+]cache ok\n" +
		"[-]shutdown failed: process is shutting down\nreadyz check failed\n"
	checkProbes(t, s.h, []probeCase{
		{target: "/readyz", code: 503, body: readyz},
		{target: "/readyz?verbose", code: 503, body: readyz},
		{target: "/readyz?exclude=a", code: 503, body: "[+]boot ok\n[+]loop ok\n[+]db ok\n[+]cache ok\n" +
			"[-]shutdown failed: process is shutting down\n" +
			`warn: some health checks cannot be excluded: no matches for "a"` + "\nreadyz check failed\n"},
		{target: "/livez", code: 200, body: "ok"},
		{target: "/healthz", code: 200, body: "ok"},
		{target: "/startupz", code: 200, body: "ok"},
		// A check's own path still answers for the check.
		{target: "/readyz/db", code: 200, body: "ok"},
	})
	if s.m.Passing(health.Ready) {
		t.Error("Passing(Ready) after Drain")
	}
	checkJSON(t, serveProbe(s.h, "", "/readyz?format=json", ""), 503, map[string]any{
		"status": "fail",
		"output": "process is shutting down",
		"checks": map[string]any{
			"boot":     checkResult("status", "pass", "time", probeEpoch),
			"loop":     checkResult("status", "pass", "time", probeEpoch),
			"db":       checkResult("status", "pass", "time", probeEpoch, "componentType", "datastore"),
			"cache":    checkResult("status", "pass", "time", probeEpoch),
			"shutdown": checkResult("status", "fail", "output", "process is shutting down"),
		},
	})
}

func TestWithDetailsFalseWithholdsReasons(t *testing.T) {
	s := newProbeStack(t, health.WithDetails(false))
	s.db.fail("password authentication failed for user \"app\" (secret=hunter2)")
	s.run(t)
	checkProbes(t, s.h, []probeCase{
		{target: "/readyz", code: 503,
			body: "[+]boot ok\n[+]loop ok\n[-]db failed: reason withheld\n[+]cache ok\n[+]shutdown ok\nreadyz check failed\n"},
		{target: "/readyz/db", code: 503, body: "[-]db failed: reason withheld\n"},
	})
	w := serveProbe(s.h, "", "/readyz/db?format=json", "")
	checkJSON(t, w, 503, map[string]any{
		"status": "fail",
		"output": "readyz check failed",
		"checks": map[string]any{
			"db": checkResult("status", "fail", "time", probeEpoch, "output", "reason withheld", "componentType", "datastore"),
		},
	})
	if strings.Contains(w.Body.String(), "hunter2") {
		t.Errorf("JSON body leaks the reason: %s", w.Body)
	}
	err := s.m.Checker(health.Ready)(nil)
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("Checker(Ready) = %v, want an error without the reason", err)
	}
}

// HandlerWithDetails decides for each request: the one it shows is told
// why, the other reads "reason withheld" with the same codes and names, and
// the probe's path asks it nothing.
func TestHandlerWithDetailsDecidesForEachRequest(t *testing.T) {
	s := newProbeStack(t)
	s.db.fail("password authentication failed (secret=hunter2)")
	s.run(t)
	var asked int
	h := s.m.HandlerWithDetails(func(r *http.Request) bool {
		asked++
		return r.Header.Get("X-Shown") == "yes"
	})
	for _, c := range []struct{ shown, want string }{
		{"yes", "[-]db failed: password authentication failed (secret=hunter2)\n"},
		{"no", "[-]db failed: reason withheld\n"},
	} {
		r := httptest.NewRequest(http.MethodGet, "/readyz/db", nil)
		r.Header.Set("X-Shown", c.shown)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 503 || w.Body.String() != c.want {
			t.Errorf("shown %s: %d %q, want 503 %q", c.shown, w.Code, w.Body, c.want)
		}
	}
	asked = 0
	if w := serveProbe(h, "", "/livez", ""); w.Code != 200 || asked != 0 {
		t.Errorf("/livez: %d, asked %d times; want 200 without asking", w.Code, asked)
	}
}

func TestWithDetailsFalseWithholdsTheReasonOfAWarningAndOfAPendingCheck(t *testing.T) {
	db := passing()
	f := newProbeFixture(t, []health.Option{health.WithDetails(false)},
		health.Check{Name: "db", Level: health.Ready, Checker: db, Period: probePeriod,
			SuccessThreshold: 1, FailureThreshold: 3},
		health.Check{Name: "mq", Level: health.Ready, Checker: failing("secret=hunter2"), Period: probePeriod,
			SuccessThreshold: 1, FailureThreshold: 3},
	)
	f.run(t, "db", "mq")
	db.fail("secret=hunter2")
	advance(t, f.clk, 2, probePeriod)
	waitRuns(t, f.m, "db", 2)
	waitRuns(t, f.m, "mq", 2)
	checkProbes(t, f.h, []probeCase{
		{target: "/readyz", code: 503, body: "[+]db warn: reason withheld\n" +
			"[-]mq pending: 2 of 3 failures: reason withheld\n[+]shutdown ok\nreadyz check failed\n"},
	})
}

func TestMultiLineOutputIsFoldedOntoOneLine(t *testing.T) {
	s := newProbeStack(t)
	s.db.fail("dial tcp 10.0.0.7:5432: connection refused\n\tretried 3 times\r\nlast error: i/o timeout\n")
	s.run(t)
	line := "[-]db failed: dial tcp 10.0.0.7:5432: connection refused retried 3 times last error: i/o timeout\n"
	checkProbes(t, s.h, []probeCase{
		{target: "/readyz", code: 503, body: "[+]boot ok\n[+]loop ok\n" + line + "[+]cache ok\n[+]shutdown ok\nreadyz check failed\n"},
		{target: "/readyz/db", code: 503, body: line},
	})
}

func TestControlCharactersOfAnOutputReachNoReaderRaw(t *testing.T) {
	// What an exec check's command may print: a terminal title (OSC), a
	// screen clear, a bell, a NUL, a bidi override, a CRLF and a lone CR.
	s := newProbeStack(t, health.WithRedaction(func(s string) string { return strings.ReplaceAll(s, "hunter22", "xxxxx") }))
	s.db.fail("\x1b]0;pwned\x07\x1b[2Jgone\x00 abc\u202edcba hunter22\r\nok\rFAILED")
	s.run(t)
	kept := `\x1b]0;pwned\a\x1b[2Jgone\x00 abc\u202edcba xxxxx` + "\n" + `ok\rFAILED`
	line := `[-]db failed: \x1b]0;pwned\a\x1b[2Jgone\x00 abc\u202edcba xxxxx ok\rFAILED` + "\n"
	checkProbes(t, s.h, []probeCase{
		{target: "/readyz?verbose", code: 503, body: "[+]boot ok\n[+]loop ok\n" + line + "[+]cache ok\n[+]shutdown ok\nreadyz check failed\n"},
		{target: "/readyz/db", code: 503, body: line},
	})
	checkJSON(t, serveProbe(s.h, "", "/readyz/db?format=json", ""), 503, map[string]any{
		"status": "fail",
		"output": "readyz check failed",
		"checks": map[string]any{
			"db": checkResult("status", "fail", "time", probeEpoch, "output", strings.TrimPrefix(strings.TrimSuffix(line, "\n"), "[-]db failed: "), "componentType", "datastore"),
		},
	})
	st, _ := s.m.CheckState("db")
	if last, _ := st.Last(); last.Output != kept {
		t.Errorf("the snapshot keeps %q, want %q", last.Output, kept)
	}
	var failed []string
	for _, e := range s.m.Events(0) {
		if e.Type == health.EventCheckFailed {
			failed = append(failed, e.Output)
		}
	}
	if len(failed) != 1 || failed[0] != kept {
		t.Errorf("check-failed events with outputs %q, want one with %q", failed, kept)
	}
	// An event of the caller's is kept as a result's output is.
	if e := s.m.Emit(health.Event{Type: health.EventServiceExited, Reason: "exit \x1b[31mred\u202e hunter22"}); e.Reason != `exit \x1b[31mred\u202e xxxxx` {
		t.Errorf("an emitted event's reason is kept as %q", e.Reason)
	}
}

func TestAnEscapedOutputIsCappedWithNoEscapeCutInHalf(t *testing.T) {
	s := newProbeStack(t)
	s.db.fail(strings.Repeat("\u202e", health.MaxOutput))
	s.run(t)
	st, _ := s.m.CheckState("db")
	last, _ := st.Last()
	out := last.Output
	if len(out) > health.MaxOutput || !strings.HasSuffix(out, `\u202e [truncated]`) ||
		strings.Trim(strings.TrimSuffix(out, " [truncated]"), `\u202e`) != "" {
		t.Fatalf("capped output (%d bytes) ends %q", len(out), out[max(0, len(out)-30):])
	}
}

func TestPerCheckPathsAnswerForOneCheck(t *testing.T) {
	s := newProbeStack(t)
	s.db.fail("connection refused")
	s.run(t)
	checkProbes(t, s.h, []probeCase{
		{target: "/readyz/cache", code: 200, body: "ok"},
		{target: "/readyz/db", code: 503, body: "[-]db failed: connection refused\n"},
		{target: "/readyz/db?verbose", code: 503, body: "[-]db failed: connection refused\n"},
		// /readyz lists startup and live checks too, so it serves their paths.
		{target: "/readyz/boot", code: 200, body: "ok"},
		{target: "/readyz/loop", code: 200, body: "ok"},
		{target: "/livez/loop", code: 200, body: "ok"},
		{target: "/healthz/loop", code: 200, body: "ok"},
		{target: "/startupz/boot", code: 200, body: "ok"},
		// A check that is not on the endpoint, or no check at all.
		{target: "/livez/db", code: 404, body: "no check \"db\" on /livez\n"},
		{target: "/healthz/db", code: 404, body: "no check \"db\" on /healthz\n"},
		{target: "/startupz/db", code: 404, body: "no check \"db\" on /startupz\n"},
		{target: "/livez/boot", code: 404, body: "no check \"boot\" on /livez\n"},
		{target: "/readyz/nope", code: 404, body: "no check \"nope\" on /readyz\n"},
		{target: "/readyz/db/extra", code: 404, body: "no check \"db/extra\" on /readyz\n"},
		// The shutdown line has a path of its own, as in the kube-apiserver.
		{target: "/readyz/shutdown", code: 200, body: "ok"},
		{target: "/livez/shutdown", code: 404, body: "no check \"shutdown\" on /livez\n"},
	})
}

func TestUnknownPathsAreNotFound(t *testing.T) {
	s := newProbeStack(t)
	s.run(t)
	var cases []probeCase
	for _, target := range []string{"/readyz/", "/livez/", "/startupz/", "/healthz/", "/readyz/db/",
		"/", "/metrics", "/readyzz", "/ready", "/READYZ", "/health"} {
		cases = append(cases, probeCase{target: target, code: 404, body: "404 page not found\n", notProbe: true})
	}
	checkProbes(t, s.h, cases)
}

func TestHeadAnswersLikeGetWithoutABody(t *testing.T) {
	s := newProbeStack(t)
	s.db.fail("connection refused")
	s.run(t)
	for _, tc := range []struct {
		target, accept string
		code           int
	}{
		{"/livez", "", 200},
		{"/livez?verbose", "", 200},
		{"/readyz", "", 503},
		{"/readyz?verbose", "", 503},
		{"/readyz?exclude=db", "", 200},
		{"/readyz/db", "", 503},
		{"/readyz/cache", "", 200},
		{"/readyz?format=json", "", 503},
		{"/livez", probeJSON, 200},
		{"/healthz", "", 200},
		{"/startupz", "", 200},
	} {
		t.Run(tc.target+" "+tc.accept, func(t *testing.T) {
			get := serveProbe(s.h, http.MethodGet, tc.target, tc.accept)
			head := serveProbe(s.h, http.MethodHead, tc.target, tc.accept)
			if get.Code != tc.code || head.Code != tc.code {
				t.Errorf("GET %d, HEAD %d, want %d", get.Code, head.Code, tc.code)
			}
			if head.Body.Len() != 0 {
				t.Errorf("HEAD body %q, want none", head.Body)
			}
			if get.Body.Len() == 0 {
				t.Error("GET body is empty")
			}
			if !reflect.DeepEqual(head.Result().Header, get.Result().Header) {
				t.Errorf("HEAD headers %v, GET headers %v", head.Result().Header, get.Result().Header)
			}
			for k, want := range map[string]string{"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"} {
				if got := head.Header().Get(k); got != want {
					t.Errorf("HEAD %s %q, want %q", k, got, want)
				}
			}
		})
	}
}

func TestOtherMethodsAreNotAllowed(t *testing.T) {
	s := newProbeStack(t)
	s.run(t)
	var cases []probeCase
	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions} {
		for _, target := range []string{"/readyz", "/livez?verbose", "/readyz/db"} {
			cases = append(cases, probeCase{method: method, target: target, code: 405,
				body: fmt.Sprintf("method %s not allowed: use GET or HEAD\n", method), notProbe: true})
		}
	}
	checkProbes(t, s.h, cases)
	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		if got := serveProbe(s.h, method, "/readyz", "").Header().Values("Allow"); len(got) != 1 || got[0] != "GET, HEAD" {
			t.Errorf("%s: Allow %q, want \"GET, HEAD\"", method, got)
		}
	}
}

func TestHealthJSONFollowsTheIETFFormat(t *testing.T) {
	s := newProbeStack(t)
	s.db.fail("connection refused")
	s.run(t)
	fail := map[string]any{
		"status": "fail",
		"output": "readyz check failed",
		"checks": map[string]any{
			"boot":  checkResult("status", "pass", "time", probeEpoch),
			"loop":  checkResult("status", "pass", "time", probeEpoch),
			"db":    checkResult("status", "fail", "time", probeEpoch, "output", "connection refused", "componentType", "datastore"),
			"cache": checkResult("status", "pass", "time", probeEpoch),
		},
	}
	livePass := map[string]any{
		"status": "pass",
		"checks": map[string]any{"loop": checkResult("status", "pass", "time", probeEpoch)},
	}
	for _, tc := range []struct {
		target, accept string
		code           int
		want           map[string]any
	}{
		{"/readyz?format=json", "", 503, fail},
		{"/readyz", probeJSON, 503, fail},
		{"/readyz", "text/html, application/health+json;q=0.9, */*;q=0.8", 503, fail},
		{"/readyz?verbose", probeJSON, 503, fail},
		{"/livez?format=json", "", 200, livePass},
		{"/livez", probeJSON, 200, livePass},
		{"/healthz", probeJSON, 200, livePass},
		{"/startupz?format=json", "", 200, map[string]any{
			"status": "pass",
			"checks": map[string]any{"boot": checkResult("status", "pass", "time", probeEpoch)},
		}},
		// Excluded checks are left out; unknown names become a note.
		{"/readyz?format=json&exclude=db&exclude=nope", "", 200, map[string]any{
			"status": "pass",
			"notes":  []any{`some health checks cannot be excluded: no matches for "nope"`},
			"checks": map[string]any{
				"boot":  checkResult("status", "pass", "time", probeEpoch),
				"loop":  checkResult("status", "pass", "time", probeEpoch),
				"cache": checkResult("status", "pass", "time", probeEpoch),
			},
		}},
		// One check's path answers with that check only.
		{"/readyz/db?format=json", "", 503, map[string]any{
			"status": "fail",
			"output": "readyz check failed",
			"checks": map[string]any{
				"db": checkResult("status", "fail", "time", probeEpoch, "output", "connection refused", "componentType", "datastore"),
			},
		}},
		{"/readyz/cache", probeJSON, 200, map[string]any{
			"status": "pass",
			"checks": map[string]any{"cache": checkResult("status", "pass", "time", probeEpoch)},
		}},
	} {
		t.Run(tc.target+" "+tc.accept, func(t *testing.T) {
			checkJSON(t, serveProbe(s.h, "", tc.target, tc.accept), tc.code, tc.want)
		})
	}
}

func TestHealthJSONBytesAreStable(t *testing.T) {
	s := newProbeStack(t)
	s.run(t)
	w := serveProbe(s.h, "", "/startupz?format=json", "")
	want := `{"status":"pass","checks":{"boot":[{"status":"pass","time":"2026-01-01T00:00:00Z"}]}}` + "\n"
	checkAnswer(t, w, probeCase{code: 200, body: want, ctype: probeJSON})
}

func TestFormatTextOverridesAnAcceptForHealthJSON(t *testing.T) {
	s := newProbeStack(t)
	s.run(t)
	checkProbes(t, s.h, []probeCase{
		{target: "/readyz?format=text", accept: probeJSON, code: 200, body: "ok"},
		{target: "/livez?format=text&verbose", accept: probeJSON, code: 200, body: "[+]loop ok\nlivez check passed\n"},
		{target: "/readyz?format=text", accept: "application/json", code: 200, body: "ok"},
	})
}

func TestUnknownFormatIsABadRequest(t *testing.T) {
	s := newProbeStack(t)
	s.run(t)
	checkProbes(t, s.h, []probeCase{
		{target: "/readyz?format=yaml", code: 400, body: "unknown format \"yaml\": use json or text\n"},
		{target: "/livez?format=yaml", accept: probeJSON, code: 400, body: "unknown format \"yaml\": use json or text\n"},
		{target: "/readyz/db?format=xml", code: 400, body: "unknown format \"xml\": use json or text\n"},
	})
}

func TestHealthJSONStatusIsWarnWhenACheckWarns(t *testing.T) {
	db := passing()
	f := newProbeFixture(t, nil,
		health.Check{Name: "db", Level: health.Ready, Checker: db, Period: probePeriod,
			SuccessThreshold: 1, FailureThreshold: 3},
		oneRun("cache", health.Ready, passing()),
	)
	f.run(t, "db", "cache")
	db.fail("query took 1.2s")
	advance(t, f.clk, 2, probePeriod)
	waitRuns(t, f.m, "db", 2)
	waitRuns(t, f.m, "cache", 2)
	w := serveProbe(f.h, "", "/readyz?format=json", "")
	if w.Code != 200 {
		t.Errorf("status %d, want 200: a warning still passes", w.Code)
	}
	got := ietf(t, w.Body.Bytes())
	if got["status"] != "warn" {
		t.Errorf("status %v, want warn", got["status"])
	}
	if _, ok := got["output"]; ok {
		t.Errorf("top-level output %v on a passing answer", got["output"])
	}
	checks, _ := got["checks"].(map[string]any)
	dbRes, _ := checks["db"].([]any)
	if len(dbRes) != 1 {
		t.Fatalf("checks.db %v, want a single-element array", checks["db"])
	}
	d := dbRes[0].(map[string]any)
	if d["status"] != "warn" || d["time"] != "2026-01-01T00:00:10Z" {
		t.Errorf("checks.db %v, want status warn at the last run", d)
	}
	if out, _ := d["output"].(string); !strings.Contains(out, "query took 1.2s") {
		t.Errorf("checks.db output %q, want the failing run's output", out)
	}
	if !reflect.DeepEqual(checks["cache"], checkResult("status", "pass", "time", "2026-01-01T00:00:10Z")) {
		t.Errorf("checks.cache %v", checks["cache"])
	}
}

// The draft's output is the raw error output of a warn or fail; a failing
// check gives exactly that, and a warning should too: its status already
// says "warn".
func TestHealthJSONWarnOutputIsTheRawOutputLikeAFailure(t *testing.T) {
	db := passing()
	f := newProbeFixture(t, nil,
		health.Check{Name: "db", Level: health.Ready, Checker: db, Period: probePeriod,
			SuccessThreshold: 1, FailureThreshold: 3},
	)
	f.run(t, "db")
	db.fail("query took 1.2s")
	advance(t, f.clk, 1, probePeriod)
	waitRuns(t, f.m, "db", 2)
	checkJSON(t, serveProbe(f.h, "", "/readyz?format=json", ""), 200, map[string]any{
		"status": "warn",
		"checks": map[string]any{
			"db": checkResult("status", "warn", "time", "2026-01-01T00:00:10Z", "output", "query took 1.2s"),
		},
	})
}

func TestHealthJSONShowsAPendingLiveCheckAsAWarning(t *testing.T) {
	s := newProbeStack(t)
	s.boot.fail("not yet")
	s.probeFixture.run(t, "boot")
	checkJSON(t, serveProbe(s.h, "", "/livez?format=json", ""), 200, map[string]any{
		"status": "warn",
		"checks": map[string]any{
			"loop": checkResult("status", "warn", "output", "pending: waiting for startup checks"),
		},
	})
	checkJSON(t, serveProbe(s.h, "", "/startupz?format=json", ""), 503, map[string]any{
		"status": "fail",
		"output": "startupz check failed",
		"checks": map[string]any{
			"boot": checkResult("status", "fail", "time", probeEpoch, "output", "not yet"),
		},
	})
}

// measurer is a Measurer; its Check must not be called when Measure exists.
type measurer struct {
	obs health.Observation
	err error
}

func (c measurer) Measure(context.Context) (health.Observation, error) { return c.obs, c.err }

func (measurer) Check(context.Context) error {
	return errors.New("Check was called on a Measurer")
}

func TestHealthJSONShowsAMeasurersObservedValueAndUnit(t *testing.T) {
	latency := oneRun("api-latency", health.Ready,
		measurer{obs: health.Observation{Value: 12.5, Unit: "ms", Message: "fast enough"}})
	latency.ComponentType = "component"
	status := oneRun("upstream", health.Ready,
		measurer{obs: health.Observation{Value: 503, Unit: "status"}, err: errors.New("got HTTP 503, want 200")})
	status.ComponentType = "system"
	certs := oneRun("cert", health.Live,
		measurer{obs: health.Observation{Value: 0, Unit: "days"}})
	f := newProbeFixture(t, nil, latency, status, certs)
	f.run(t, "api-latency", "upstream", "cert")
	checkJSON(t, serveProbe(f.h, "", "/readyz?format=json", ""), 503, map[string]any{
		"status": "fail",
		"output": "readyz check failed",
		"checks": map[string]any{
			// Output is left out for pass, even when the run had a message.
			"api-latency": checkResult("status", "pass", "time", probeEpoch, "observedValue", 12.5,
				"observedUnit", "ms", "componentType", "component"),
			"upstream": checkResult("status", "fail", "time", probeEpoch, "output", "got HTTP 503, want 200",
				"observedValue", 503.0, "observedUnit", "status", "componentType", "system"),
			// A zero value is a value.
			"cert": checkResult("status", "pass", "time", probeEpoch, "observedValue", 0.0, "observedUnit", "days"),
		},
	})
	checkProbes(t, f.h, []probeCase{
		{target: "/readyz", code: 503, body: "[+]api-latency ok\n[-]upstream failed: got HTTP 503, want 200\n" +
			"[+]cert ok\n[+]shutdown ok\nreadyz check failed\n"},
	})
}

func TestHealthJSONDropsObservedValuesThatCannotBeEncoded(t *testing.T) {
	f := newProbeFixture(t, nil,
		oneRun("weird", health.Ready, measurer{obs: health.Observation{Value: make(chan int), Unit: "chan"}}),
		oneRun("fine", health.Ready, measurer{obs: health.Observation{Value: 7, Unit: "conns"}}),
	)
	f.run(t, "weird", "fine")
	checkJSON(t, serveProbe(f.h, "", "/readyz?format=json", ""), 200, map[string]any{
		"status": "pass",
		"checks": map[string]any{
			// Without their values, and so without their units.
			"weird": checkResult("status", "pass", "time", probeEpoch),
			"fine":  checkResult("status", "pass", "time", probeEpoch),
		},
	})
}

// A value is served with its unit or not at all, and a unit never alone:
// a number without its unit cannot be read. The Monitor keeps both as the
// checker gave them.
func TestHealthJSONServesAnObservedValueOnlyWithItsUnit(t *testing.T) {
	f := newProbeFixture(t, nil,
		oneRun("unitless", health.Ready, measurer{obs: health.Observation{Value: 12.5}}),
		oneRun("valueless", health.Ready, measurer{obs: health.Observation{Unit: "ms"}}),
		oneRun("both", health.Ready, measurer{obs: health.Observation{Value: 12.5, Unit: "ms"}}),
	)
	f.run(t, "unitless", "valueless", "both")
	checkJSON(t, serveProbe(f.h, "", "/readyz?format=json", ""), 200, map[string]any{
		"status": "pass",
		"checks": map[string]any{
			"unitless":  checkResult("status", "pass", "time", probeEpoch),
			"valueless": checkResult("status", "pass", "time", probeEpoch),
			"both":      checkResult("status", "pass", "time", probeEpoch, "observedValue", 12.5, "observedUnit", "ms"),
		},
	})
	if r, _ := waitRuns(t, f.m, "unitless", 1).Last(); r.ObservedValue != 12.5 || r.ObservedUnit != "" {
		t.Errorf("kept %v %q, want the value as the checker gave it", r.ObservedValue, r.ObservedUnit)
	}
}

// Heartbeats and watchdogs are the program's own loops: their componentType
// is component, and their values come with units.
func TestHealthJSONShowsHeartbeatsAndWatchdogsAsComponents(t *testing.T) {
	m, clk := fakeMonitor(t)
	hb, err := m.Heartbeat("loop", probePeriod, health.Live)
	if err != nil {
		t.Fatal(err)
	}
	wd, err := m.Watchdog("reconcile", time.Minute, health.Live)
	if err != nil {
		t.Fatal(err)
	}
	start(t, m)
	hb.Beat()
	done := wd.Begin()
	defer done()
	clk.Advance(time.Second)
	waitFor(t, "the heartbeat's and the watchdog's first results", func() bool {
		h, _ := m.CheckState("loop")
		w, _ := m.CheckState("reconcile")
		return h.Runs > 0 && w.Runs > 0
	})
	got := ietf(t, serveProbe(m.Handler(), "", "/livez?format=json", "").Body.Bytes())
	checks, _ := got["checks"].(map[string]any)
	for name, unit := range map[string]string{"loop": "s", "reconcile": "units"} {
		res, _ := checks[name].([]any)
		if len(res) != 1 {
			t.Fatalf("checks.%s %v, want one result", name, checks[name])
		}
		r := res[0].(map[string]any)
		if r["componentType"] != "component" || r["observedUnit"] != unit || r["observedValue"] == nil {
			t.Errorf("checks.%s %v, want componentType component and a value in %s", name, r, unit)
		}
	}
}

// The service's serviceId, version and releaseId top every JSON answer, in
// the draft's order, each left out while empty; the text answers do not
// change.
func TestHealthJSONSaysTheServiceAtItsTop(t *testing.T) {
	for _, tc := range []struct {
		info health.ServiceInfo
		top  string // the answer of /startupz?format=json up to "checks"
	}{
		{health.ServiceInfo{}, `{"status":"pass",`},
		{health.ServiceInfo{ServiceID: "checkout-7f9c6", Version: "2", ReleaseID: "1.4.2"},
			`{"status":"pass","version":"2","releaseId":"1.4.2","serviceId":"checkout-7f9c6",`},
		{health.ServiceInfo{ReleaseID: "3f2a9c1"}, `{"status":"pass","releaseId":"3f2a9c1",`},
		{health.ServiceInfo{ServiceID: "checkout"}, `{"status":"pass","serviceId":"checkout",`},
	} {
		t.Run(tc.top, func(t *testing.T) {
			s := newProbeStack(t, health.WithServiceInfo(tc.info))
			s.db.fail("connection refused")
			s.run(t)
			checkAnswer(t, serveProbe(s.h, "", "/startupz?format=json", ""), probeCase{code: 200, ctype: probeJSON,
				body: tc.top + `"checks":{"boot":[{"status":"pass","time":"2026-01-01T00:00:00Z"}]}}` + "\n"})
			want := map[string]any{}
			for key, v := range map[string]string{"serviceId": tc.info.ServiceID, "version": tc.info.Version, "releaseId": tc.info.ReleaseID} {
				if v != "" {
					want[key] = v
				}
			}
			for _, target := range []string{"/readyz?format=json", "/readyz/db?format=json", "/livez/loop?format=json&exclude=x"} {
				got := ietf(t, serveProbe(s.h, "", target, "").Body.Bytes())
				for _, key := range []string{"status", "output", "notes", "checks"} {
					delete(got, key)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: top %v, want %v", target, got, want)
				}
			}
			checkProbes(t, s.h, []probeCase{
				{target: "/livez", code: 200, body: "ok"},
				{target: "/readyz", code: 503, body: "[+]boot ok\n[+]loop ok\n[-]db failed: connection refused\n[+]cache ok\n[+]shutdown ok\nreadyz check failed\n"},
			})
		})
	}
}

// Accept chooses the format: a client that names application/health+json
// gets it; one that names application/json and not health+json gets the
// same document as application/json, the type it checks for; q=0 refuses a
// type; the wildcards of the kubelet and of browsers keep the text.
func TestAcceptChoosesTheFormatAndItsContentType(t *testing.T) {
	s := newProbeStack(t)
	s.run(t)
	const plainJSON = "application/json"
	document := serveProbe(s.h, "", "/readyz?format=json", "").Body.String()
	for _, tc := range []struct {
		target string
		accept []string // one Accept line each
		ctype  string   // "": text
	}{
		{"/readyz", []string{"application/json"}, plainJSON},
		{"/readyz", []string{"Application/JSON"}, plainJSON},
		{"/readyz", []string{"application/health+json"}, probeJSON},
		{"/readyz", []string{"application/json, application/health+json"}, probeJSON},
		{"/readyz", []string{"application/health+json;q=0, application/json"}, plainJSON},
		{"/readyz", []string{"text/html, application/json;q=0.9, */*;q=0.8"}, plainJSON},
		{"/readyz", []string{"application/json, text/plain, */*"}, plainJSON},
		{"/readyz", []string{"text/plain", "application/json"}, plainJSON},
		{"/readyz", []string{"application/json;q=0"}, ""},
		{"/readyz", []string{"application/json; Q=0.000"}, ""},
		{"/readyz", []string{"application/json;q=0.001"}, plainJSON},
		{"/readyz", []string{"application/json;charset=utf-8;q=1"}, plainJSON},
		{"/readyz", []string{"*/*"}, ""},
		{"/readyz", []string{"application/*"}, ""},
		{"/readyz", []string{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}, ""},
		{"/readyz", []string{"application/jsonl"}, ""},
		{"/readyz", []string{""}, ""},
		{"/readyz", nil, ""},
		{"/readyz?format=json", nil, probeJSON},
		{"/readyz?format=json", []string{"application/json"}, plainJSON},
		{"/readyz?format=text", []string{"application/json"}, ""},
		{"/readyz?verbose", []string{"application/json"}, plainJSON},
	} {
		t.Run(fmt.Sprintf("%s %q", tc.target, tc.accept), func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, tc.target, nil)
			r.Header["Accept"] = tc.accept
			w := httptest.NewRecorder()
			s.h.ServeHTTP(w, r)
			want := probeCase{code: 200, body: "ok", ctype: tc.ctype}
			if tc.ctype != "" {
				want.body = document
			}
			checkAnswer(t, w, want)
		})
	}
}

func TestCheckerReportsTheLevelsVerdictAsAnError(t *testing.T) {
	s := newProbeStack(t)
	s.run(t)
	for _, l := range []health.Level{health.Startup, health.Live, health.Ready} {
		if err := s.m.Checker(l)(nil); err != nil {
			t.Errorf("Checker(%v) = %v, want nil when passing", l, err)
		}
	}
	if err := s.m.Checker(health.Level(0))(nil); err == nil {
		t.Error("Checker(level 0) = nil, want an error")
	}

	s = newProbeStack(t)
	s.db.fail("connection refused")
	s.loop.fail("stuck")
	s.run(t)
	err := s.m.Checker(health.Ready)(httptest.NewRequest("GET", "/readyz", nil))
	if want := "readyz check failed: loop failed: stuck; db failed: connection refused"; err == nil || err.Error() != want {
		t.Errorf("Checker(Ready) = %v, want %q", err, want)
	}
	err = s.m.Checker(health.Live)(nil)
	if want := "livez check failed: loop failed: stuck"; err == nil || err.Error() != want {
		t.Errorf("Checker(Live) = %v, want %q", err, want)
	}
	if err := s.m.Checker(health.Startup)(nil); err != nil {
		t.Errorf("Checker(Startup) = %v, want nil", err)
	}

	s = newProbeStack(t)
	s.run(t)
	ready := s.m.Checker(health.Ready) // taken before Drain: it reads the state at each call
	s.m.Drain()
	if want := "readyz check failed: shutdown failed: process is shutting down"; ready(nil) == nil || ready(nil).Error() != want {
		t.Errorf("Checker(Ready) after Drain = %v, want %q", ready(nil), want)
	}
	if err := s.m.Checker(health.Live)(nil); err != nil {
		t.Errorf("Checker(Live) after Drain = %v, want nil", err)
	}
}

func TestProbesReadStateAndNeverRunAChecker(t *testing.T) {
	s := newProbeStack(t)
	s.db.fail("connection refused")
	s.run(t)
	before := [...]int64{s.boot.runs.Load(), s.loop.runs.Load(), s.db.runs.Load(), s.cache.runs.Load()}
	for range 50 {
		for _, target := range []string{"/readyz", "/livez", "/startupz", "/healthz", "/readyz?verbose",
			"/readyz/db", "/livez/loop", "/readyz?format=json"} {
			serveProbe(s.h, "", target, "")
		}
		s.m.Checker(health.Ready)(nil)
	}
	after := [...]int64{s.boot.runs.Load(), s.loop.runs.Load(), s.db.runs.Load(), s.cache.runs.Load()}
	if before != after {
		t.Errorf("checker runs went from %v to %v while only probes were served", before, after)
	}
}

// The code and the body come from one view of the state, so they agree even
// while a check flips under a stream of requests.
func TestStatusCodeAndBodyAgreeWhileAChecksFlips(t *testing.T) {
	s := newProbeStack(t)
	s.run(t)
	done := make(chan struct{})
	var wg sync.WaitGroup
	for _, target := range []string{"/readyz", "/readyz?verbose", "/readyz/db"} {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				w := serveProbe(s.h, "", target, "")
				body := w.Body.String()
				switch {
				case w.Code == 200 && !strings.Contains(body, "[-]") && (body == "ok" || strings.HasSuffix(body, "check passed\n")):
				case w.Code == 503 && strings.Contains(body, "[-]db failed: flapping\n"):
				default:
					t.Errorf("GET %s: %d %q", target, w.Code, body)
					return
				}
			}
		})
	}
	for i := range 20 {
		if i%2 == 0 {
			s.db.fail("flapping")
		} else {
			s.db.pass()
		}
		advance(t, s.clk, 3, probePeriod) // loop, db and cache sleep; boot has latched
		for _, name := range []string{"loop", "db", "cache"} {
			waitRuns(t, s.m, name, i+2)
		}
		if got, want := s.m.Passing(health.Ready), i%2 == 1; got != want {
			t.Fatalf("after flip %d: Passing(Ready) = %v, want %v", i, got, want)
		}
	}
	close(done)
	wg.Wait()
}

func TestCurlFailsOnReadyzWhenNotReady(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		testenv.Missing(t, "no curl: %v", err)
	}
	s := newProbeStack(t)
	s.run(t)
	srv := httptest.NewServer(s.h)
	defer srv.Close()
	get := func() (string, int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), settle)
		defer cancel()
		// -q ignores any .curlrc and --noproxy keeps a proxy setting from
		// intercepting the loopback server; the rest is the probe as written.
		cmd := exec.CommandContext(ctx, curl, "-q", "--noproxy", "*", "-fsS", srv.URL+"/readyz")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		switch {
		case err == nil:
			return stdout.String(), 0
		case errors.As(err, &exit):
			return stdout.String(), exit.ExitCode()
		default:
			t.Fatalf("curl: %v (stderr %q)", err, stderr.String())
			return "", -1
		}
	}
	if out, code := get(); code != 0 || out != "ok" {
		t.Errorf("ready: curl exited %d printing %q, want 0 and \"ok\"", code, out)
	}

	s.db.fail("connection refused")
	advance(t, s.clk, 3, probePeriod)
	if st := waitRuns(t, s.m, "db", 2); st.Status != health.Fail {
		t.Fatalf("db is %v, want fail", st.Status)
	}
	if out, code := get(); code != 22 || out != "" {
		t.Errorf("not ready: curl exited %d printing %q, want 22 and nothing", code, out)
	}
}

func TestTheEndpointsSayWhenTheMonitorHasNotStartedOrHasStopped(t *testing.T) {
	m, _ := fakeMonitor(t)
	h := m.Handler()
	get := func(target string) (int, string) {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
		return w.Code, w.Body.String()
	}
	for target, want := range map[string]string{
		"/startupz": "[-]monitor pending: the monitor has not started\nstartupz check failed\n",
		"/readyz":   "[-]monitor pending: the monitor has not started\n[+]shutdown ok\nreadyz check failed\n",
	} {
		if code, body := get(target); code != 503 || body != want {
			t.Errorf("GET %s before Start: %d %q, want 503 %q", target, code, body, want)
		}
	}
	if code, body := get("/livez"); code != 200 || body != "ok" {
		t.Errorf("GET /livez before Start: %d %q, want 200 ok", code, body)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m.Start(ctx)
	if code, _ := get("/readyz"); code != 200 {
		t.Errorf("GET /readyz once started with no checks: %d, want 200", code)
	}
	cancel()
	<-m.Done()
	want := "[-]monitor failed: the monitor has stopped\n[+]shutdown ok\nreadyz check failed\n"
	if code, body := get("/readyz"); code != 503 || body != want {
		t.Errorf("GET /readyz once stopped: %d %q, want 503 %q", code, body, want)
	}
	if code, body := get("/startupz"); code != 200 || body != "ok" {
		t.Errorf("GET /startupz once stopped: %d %q, want 200 ok (startup latched)", code, body)
	}
}
