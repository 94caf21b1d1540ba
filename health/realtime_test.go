package health_test

// Real-time tests: the system clock, short periods. They check what only real
// concurrency shows (a checker stuck for good, a panic on another goroutine,
// the probe endpoints hammered while checks flip, goroutines left behind) and
// that heartbeats and watchdogs keep their deadlines on the real clock.
//
// They never assert that something happened within a wall-clock bound: every
// wait is a poll or WaitEvents guarded by settle, so a loaded machine makes
// them slower, not red. Lower bounds (a check must not fail before its ttl)
// are asserted, since no scheduling delay can make them false.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
)

// rtMonitor returns a Monitor on the system clock, with the default jitter and
// no logs.
func rtMonitor(opts ...health.Option) *health.Monitor {
	return health.New(append([]health.Option{health.WithLogger(slog.New(slog.DiscardHandler))}, opts...)...)
}

// rtWaitCheckEvent waits for the next event of type typ about check, skipping
// any other event, and moves the cursor past it.
func rtWaitCheckEvent(t *testing.T, m *health.Monitor, cursor *uint64, check string, typ health.EventType) health.Event {
	t.Helper()
	for {
		ev := waitEvent(t, m, cursor)
		if ev.Check == check && ev.Type == typ {
			return ev
		}
	}
}

// rtState returns a check's state, failing the test when there is no such check.
func rtState(t *testing.T, m *health.Monitor, name string) health.CheckState {
	t.Helper()
	st, ok := m.CheckState(name)
	if !ok {
		t.Fatalf("no check %q", name)
	}
	return st
}

// rtGet serves one GET through h and returns the status code, body and
// Content-Type.
func rtGet(h http.Handler, target string) (int, string, string) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	return rec.Code, rec.Body.String(), rec.Header().Get("Content-Type")
}

// rtMaxer keeps the maximum of the values it is shown.
type rtMaxer struct{ v atomic.Int64 }

func (x *rtMaxer) see(n int64) {
	for {
		old := x.v.Load()
		if n <= old || x.v.CompareAndSwap(old, n) {
			return
		}
	}
}

func TestRealtimeAStuckCheckerTimesOutIsNeverEnteredTwiceAndRecovers(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock) // registered first, so it runs after the monitor stopped

	var inside, entries atomic.Int64
	var most rtMaxer
	stuck := health.CheckerFunc(func(ctx context.Context) error {
		most.see(inside.Add(1))
		defer inside.Add(-1)
		entries.Add(1)
		<-release // ignores ctx
		return nil
	})
	m := rtMonitor()
	if err := m.Add(health.Check{Name: "stuck", Level: health.Live, Checker: stuck,
		Timeout: 20 * time.Millisecond, Period: 50 * time.Millisecond, FailureThreshold: 1}); err != nil {
		t.Fatal(err)
	}
	var cursor uint64
	start(t, m)

	ev := rtWaitCheckEvent(t, m, &cursor, "stuck", health.EventCheckFailed)
	if ev.Output != "timed out after 20ms" {
		t.Errorf("check-failed output %q, want %q", ev.Output, "timed out after 20ms")
	}
	if ev.From != health.Pending || ev.To != health.Fail {
		t.Errorf("check-failed from %v to %v, want pending to fail", ev.From, ev.To)
	}

	st := waitRuns(t, m, "stuck", 4)
	if st.Status != health.Fail {
		t.Errorf("status %v while the checker is stuck, want fail", st.Status)
	}
	first := st.History[0]
	if first.OK || first.Output != "timed out after 20ms" || first.Duration != 20*time.Millisecond {
		t.Errorf("first result ok=%v output=%q duration=%v, want failed, %q, 20ms",
			first.OK, first.Output, first.Duration, "timed out after 20ms")
	}
	for i, r := range st.History[1:] {
		if r.OK || !strings.Contains(r.Output, "previous run has not returned") {
			t.Errorf("result %d while the first run is stuck: ok=%v output=%q, want a failure saying the previous run has not returned",
				i+2, r.OK, r.Output)
		}
	}
	if n := entries.Load(); n != 1 {
		t.Errorf("the stuck checker was entered %d times over %d periods, want once", n, st.Runs)
	}
	if code, body, _ := rtGet(m.Handler(), "/livez?verbose"); code != http.StatusServiceUnavailable ||
		!strings.Contains(body, "[-]stuck failed: the previous run has not returned") {
		t.Errorf("/livez?verbose while stuck: %d %q, want 503 naming the stuck run", code, body)
	}

	unblock()
	rtWaitCheckEvent(t, m, &cursor, "stuck", health.EventCheckPassed)
	after := rtState(t, m, "stuck").Runs
	waitRuns(t, m, "stuck", after+3) // it keeps running after recovering
	if n := entries.Load(); n < 2 {
		t.Errorf("the checker was entered %d times, want it run again after it returned", n)
	}
	if n := most.v.Load(); n != 1 {
		t.Errorf("the checker was entered %d times at once, want at most 1", n)
	}
}

func TestRealtimeAPanickingCheckerFailsWithItsMessageAndKeepsBeingScheduled(t *testing.T) {
	var calls atomic.Int64
	var calm atomic.Bool
	boom := health.CheckerFunc(func(context.Context) error {
		calls.Add(1)
		if !calm.Load() {
			panic("kaboom")
		}
		return nil
	})
	boomErr := health.CheckerFunc(func(context.Context) error {
		panic(fmt.Errorf("wrapped %d", 42))
	})
	m := rtMonitor()
	for _, c := range []health.Check{
		{Name: "boom", Level: health.Live, Checker: boom, Period: 20 * time.Millisecond, FailureThreshold: 1},
		{Name: "boom-err", Level: health.Ready, Checker: boomErr, Period: 20 * time.Millisecond, FailureThreshold: 1},
	} {
		if err := m.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	var cursor uint64
	start(t, m)

	for name, want := range map[string]string{"boom": "panic: kaboom", "boom-err": "panic: wrapped 42"} {
		// Wait for three runs that panicked. A run can also be recorded as
		// timed out when the recovery (which formats a stack) outlasts the
		// 20ms timeout on a loaded machine; that is allowed, anything else not.
		var st health.CheckState
		waitFor(t, name+": three panicking runs recorded", func() bool {
			st = rtState(t, m, name)
			n := 0
			for _, r := range st.History {
				if r.Output == want {
					n++
				}
			}
			return n >= 3
		})
		for i, r := range st.History {
			switch {
			case r.OK:
				t.Errorf("%s: result %d passed, want every run of a panicking checker failed", name, i+1)
			case r.Output == want:
			case strings.HasPrefix(r.Output, "timed out after"), strings.Contains(r.Output, "previous run has not returned"):
				t.Logf("%s: result %d: %q (the machine is slow)", name, i+1, r.Output)
			default:
				t.Errorf("%s: result %d output %q, want %q", name, i+1, r.Output, want)
			}
		}
		if st.Status != health.Fail {
			t.Errorf("%s: status %v, want fail", name, st.Status)
		}
	}
	if code, body, _ := rtGet(m.Handler(), "/livez?verbose"); code != http.StatusServiceUnavailable ||
		!strings.Contains(body, "[-]boom failed: panic: kaboom\n") {
		t.Errorf("/livez?verbose: %d %q, want 503 with the panic message", code, body)
	}

	// The process lives on, and so does the check: once the checker stops
	// panicking, it passes.
	calm.Store(true)
	rtWaitCheckEvent(t, m, &cursor, "boom", health.EventCheckPassed)
	if n := calls.Load(); n < 4 {
		t.Errorf("checker called %d times, want it scheduled on after the panics", n)
	}
}

// rtJSON is the IETF health+json answer, as much of it as the tests read.
type rtJSON struct {
	Status string `json:"status"`
	Output string `json:"output"`
	Checks map[string][]struct {
		Status string `json:"status"`
		Output string `json:"output"`
	} `json:"checks"`
}

// rtCheckText checks a text answer of an aggregate endpoint: "ok" for a quiet
// 200, otherwise one line per check and a trailer that agrees with the code.
func rtCheckText(endpoint string, verbose bool, checks, code int, body string) error {
	if code == http.StatusOK && !verbose {
		if body != "ok" {
			return fmt.Errorf("200 with body %q, want %q", body, "ok")
		}
		return nil
	}
	verdict := "passed"
	if code != http.StatusOK {
		verdict = "failed"
	}
	trailer := endpoint + " check " + verdict + "\n"
	if !strings.HasSuffix(body, trailer) {
		return fmt.Errorf("%d with body %q, want it to end with %q", code, body, trailer)
	}
	lines := strings.Split(strings.TrimSuffix(body, trailer), "\n")
	lines = lines[:len(lines)-1] // the text before the trailer ends in a newline
	if len(lines) != checks {
		return fmt.Errorf("%d with %d check lines, want %d: %q", code, len(lines), checks, body)
	}
	failed := 0
	for _, ln := range lines {
		switch {
		case strings.HasPrefix(ln, "[-]"):
			failed++
		case strings.HasPrefix(ln, "[+]"):
		default:
			return fmt.Errorf("line %q is neither [+] nor [-] in %q", ln, body)
		}
	}
	if (code == http.StatusOK) != (failed == 0) {
		return fmt.Errorf("%d with %d failed lines: %q", code, failed, body)
	}
	return nil
}

func rtCheckJSON(checks, code int, body, contentType string) error {
	if contentType != "application/health+json" {
		return fmt.Errorf("Content-Type %q, want application/health+json", contentType)
	}
	var res rtJSON
	if err := json.Unmarshal([]byte(body), &res); err != nil {
		return fmt.Errorf("%d with a body that is not JSON: %v: %q", code, err, body)
	}
	if len(res.Checks) != checks {
		return fmt.Errorf("%d with %d checks, want %d: %q", code, len(res.Checks), checks, body)
	}
	failed, warned := 0, 0
	for name, crs := range res.Checks {
		if len(crs) != 1 {
			return fmt.Errorf("check %q has %d results, want 1: %q", name, len(crs), body)
		}
		switch crs[0].Status {
		case "fail":
			failed++
		case "warn":
			warned++
		case "pass":
		default:
			return fmt.Errorf("check %q has status %q: %q", name, crs[0].Status, body)
		}
	}
	want := "pass"
	switch {
	case code != http.StatusOK:
		want = "fail"
	case warned > 0:
		want = "warn"
	}
	if res.Status != want || (code == http.StatusOK) != (failed == 0) {
		return fmt.Errorf("%d with status %q, %d failed and %d warned checks: %q", code, res.Status, failed, warned, body)
	}
	return nil
}

func TestRealtimeTheEndpointsStayConsistentWhileChecksFlip(t *testing.T) {
	const n, live = 10, 3 // checks 0, 4 and 8 are live, the rest ready
	m := rtMonitor()
	checks := make([]*switchable, n)
	for i := range checks {
		checks[i] = passing()
		level := health.Ready
		if i%4 == 0 {
			level = health.Live
		}
		if err := m.Add(health.Check{Name: fmt.Sprintf("c%d", i), Level: level, Checker: checks[i],
			Period: 5 * time.Millisecond, FailureThreshold: 1 + i%2}); err != nil {
			t.Fatal(err)
		}
	}
	start(t, m)
	h := m.Handler()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var problems atomic.Int64
	report := func(format string, args ...any) {
		if problems.Add(1) <= 10 {
			t.Errorf(format, args...)
		}
	}

	// The flipper: every 2ms, half of the time all checks pass (so that 200s
	// happen), the other half a random check flips.
	wg.Go(func() {
		rng := rand.New(rand.NewPCG(1, 2))
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if i/25%2 == 0 {
				for _, c := range checks {
					c.pass()
				}
				continue
			}
			if c := checks[rng.IntN(n)]; rng.IntN(2) == 0 {
				c.fail("flipped\nto failing") // a newline, which the text format must fold
			} else {
				c.pass()
			}
		}
	})

	type tally struct{ ok, unavailable atomic.Int64 }
	targets := []string{"/readyz", "/readyz?verbose", "/livez", "/readyz?format=json", "/livez?verbose", "/healthz"}
	tallies := make([]tally, len(targets))
	for g := range 8 {
		wg.Go(func() {
			for i := g; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				runtime.Gosched() // as a server blocked on its network would
				k := i % len(targets)
				target := targets[k]
				code, body, ctype := rtGet(h, target)
				switch code {
				case http.StatusOK:
					tallies[k].ok.Add(1)
				case http.StatusServiceUnavailable:
					tallies[k].unavailable.Add(1)
				default:
					report("GET %s: status %d, want 200 or 503: %q", target, code, body)
					continue
				}
				var err error
				switch target {
				case "/readyz", "/readyz?verbose":
					// n checks and the shutdown line, which is ok: nothing drains.
					err = rtCheckText("readyz", target != "/readyz", n+1, code, body)
					if err == nil && body != "ok" && !strings.Contains(body, "\n[+]shutdown ok\nreadyz check ") {
						err = fmt.Errorf("%d without [+]shutdown ok as its last check line: %q", code, body)
					}
				case "/livez", "/livez?verbose", "/healthz":
					ep := strings.TrimPrefix(strings.TrimSuffix(target, "?verbose"), "/")
					err = rtCheckText(ep, target == "/livez?verbose", live, code, body)
				case "/readyz?format=json":
					err = rtCheckJSON(n, code, body, ctype)
				}
				if err != nil {
					report("GET %s: %v", target, err)
				}
			}
		})
	}

	// State readers: the snapshot's verdicts must agree with its checks, since
	// both are copied under one lock.
	var snapshots atomic.Int64
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			s := m.Snapshot()
			snapshots.Add(1)
			if len(s.Checks) != n {
				report("snapshot has %d checks, want %d", len(s.Checks), n)
				continue
			}
			liveOK, readyOK := true, true
			for _, c := range s.Checks {
				switch c.Level {
				case health.Live:
					liveOK = liveOK && c.Status != health.Fail
				case health.Ready:
					readyOK = readyOK && (c.Status == health.Pass || c.Status == health.Warn)
				}
				if c.Runs < len(c.History) {
					report("check %s: %d runs but %d results kept", c.Name, c.Runs, len(c.History))
				}
			}
			readyOK = readyOK && liveOK && s.Startup && !s.Draining
			if s.Live != liveOK || s.Ready != readyOK || !s.Startup {
				report("snapshot says startup=%v live=%v ready=%v, its checks say live=%v ready=%v",
					s.Startup, s.Live, s.Ready, liveOK, readyOK)
			}
			_ = m.Passing(health.Ready)
			_ = m.Checker(health.Ready)(nil)
		}
	})
	var events atomic.Int64
	wg.Go(func() {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() { <-stop; cancel() }()
		var cursor uint64
		for {
			evs, err := m.WaitEvents(ctx, cursor)
			if err != nil {
				return
			}
			if evs[0].ID <= cursor {
				report("WaitEvents after %d returned event %d", cursor, evs[0].ID)
			}
			for i := 1; i < len(evs); i++ {
				if evs[i].ID != evs[i-1].ID+1 {
					report("events %d and %d follow each other", evs[i-1].ID, evs[i].ID)
				}
			}
			cursor = evs[len(evs)-1].ID
			events.Add(int64(len(evs)))
		}
	})
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			evs := m.Events(0)
			for i := 1; i < len(evs); i++ {
				if evs[i].ID != evs[i-1].ID+1 {
					report("Events(0): events %d and %d follow each other", evs[i-1].ID, evs[i].ID)
				}
			}
		}
	})

	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()
	for k, target := range targets {
		t.Logf("GET %-20s 200×%d 503×%d", target, tallies[k].ok.Load(), tallies[k].unavailable.Load())
	}
	runs := 0
	for _, c := range m.Snapshot().Checks {
		runs += c.Runs
	}
	t.Logf("%d check runs, %d snapshots, %d events read", runs, snapshots.Load(), events.Load())

	// Once everything passes again, readiness comes back.
	for _, c := range checks {
		c.pass()
	}
	waitFor(t, "readiness back once every check passes", func() bool { return m.Passing(health.Ready) })
	if code, body, _ := rtGet(h, "/readyz"); code != http.StatusOK || body != "ok" {
		t.Errorf("/readyz with every check passing: %d %q, want 200 ok", code, body)
	}
}

// rtGoroutineDump is every goroutine's stack, for a failure message.
func rtGoroutineDump() string {
	var b bytes.Buffer
	pprof.Lookup("goroutine").WriteTo(&b, 1)
	return b.String()
}

func TestRealtimeNoGoroutineIsLeftBehind(t *testing.T) {
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// honest blocks until its context ends, so every run of it times out.
	honest := health.CheckerFunc(func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	})
	add := func(m *health.Monitor, c health.Check) {
		t.Helper()
		if err := m.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	const p = 5 * time.Millisecond

	// m passes startup: its live and ready checks, heartbeat and watchdog run.
	m := rtMonitor()
	add(m, health.Check{Name: "boot", Level: health.Startup, Checker: passing(), Period: p})
	add(m, health.Check{Name: "ping", Level: health.Live, Checker: passing(), Period: p})
	add(m, health.Check{Name: "db", Level: health.Ready, Checker: failing("refused"), Period: p})
	add(m, health.Check{Name: "slow", Level: health.Ready, Checker: honest, Period: 30 * time.Millisecond, Timeout: 10 * time.Millisecond})
	hb, err := m.Heartbeat("loop", 50*time.Millisecond, health.Live)
	if err != nil {
		t.Fatal(err)
	}
	wd, err := m.Watchdog("reconcile", 50*time.Millisecond, health.Ready)
	if err != nil {
		t.Fatal(err)
	}

	// m2 never passes startup: its other checks wait behind the gate.
	m2 := rtMonitor()
	add(m2, health.Check{Name: "never", Level: health.Startup, Checker: failing("not yet"), Period: p})
	add(m2, health.Check{Name: "gated", Level: health.Live, Checker: passing(), Period: p})
	if _, err := m2.Heartbeat("gated-loop", 50*time.Millisecond, health.Ready); err != nil {
		t.Fatal(err)
	}
	if _, err := m2.Watchdog("gated-work", 50*time.Millisecond, health.Live); err != nil {
		t.Fatal(err)
	}

	m.Start(ctx)
	m2.Start(ctx)
	beating := make(chan struct{})
	var beater sync.WaitGroup
	beater.Go(func() {
		tick := time.NewTicker(p)
		defer tick.Stop()
		for {
			select {
			case <-beating:
				return
			case <-tick.C:
				hb.Beat()
			}
		}
	})
	finished := wd.Begin()
	wd.Begin() // never finished: a unit hung at shutdown

	waitRuns(t, m, "ping", 3)
	waitRuns(t, m, "slow", 2)
	waitRuns(t, m, "reconcile", 2)
	waitRuns(t, m2, "never", 3)
	finished()
	add(m, health.Check{Name: "late", Level: health.Ready, Checker: passing(), Period: p})
	waitRuns(t, m, "late", 2)
	if err := m.Remove("db"); err != nil {
		t.Fatal(err)
	}
	close(beating)
	beater.Wait()

	cancel()
	for _, mon := range []*health.Monitor{m, m2} {
		select {
		case <-mon.Done():
		case <-time.After(settle):
			t.Fatalf("Done not closed within %v of the context ending\n%s", settle, rtGoroutineDump())
		}
	}
	deadline := time.Now().Add(settle)
	for {
		now := runtime.NumGoroutine()
		if now <= before {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines %v after the monitors stopped, %d before they started:\n%s",
				now, settle, before, rtGoroutineDump())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// rtBeatUntilPass beats once and waits for the heartbeat to be judged; should
// the judgement come more than its ttl after the beat (a stalled machine), it
// beats again. It returns the time taken just before the beat that passed.
func rtBeatUntilPass(t *testing.T, m *health.Monitor, hb *health.Heartbeat, name string) time.Time {
	t.Helper()
	for attempt := 1; ; attempt++ {
		runs := rtState(t, m, name).Runs
		before := time.Now()
		hb.Beat()
		var st health.CheckState
		waitFor(t, name+" judged after a beat", func() bool {
			st = rtState(t, m, name)
			return st.Runs > runs
		})
		if st.Status == health.Pass {
			return before
		}
		if attempt == 20 {
			t.Fatalf("%s still %v after %d beats: %+v", name, st.Status, attempt, st.History)
		}
		t.Logf("%s judged %v after a beat (the machine is slow); beating again", name, st.Status)
	}
}

func TestRealtimeAHeartbeatPassesOnBeatsFailsAfterItsTTLAndRecovers(t *testing.T) {
	const ttl = 100 * time.Millisecond
	m := rtMonitor()
	hb, err := m.Heartbeat("loop", ttl, health.Live)
	if err != nil {
		t.Fatal(err)
	}
	var cursor uint64
	h := m.Handler()
	started := time.Now()
	start(t, m)

	// Pending before the first beat. Only checked while less than the ttl has
	// passed since Start, since after that a hung loop must fail.
	st := rtState(t, m, "loop")
	code, body, _ := rtGet(h, "/livez?verbose")
	if waited := time.Since(started); waited < ttl {
		if st.Status != health.Pending || st.Runs != 0 {
			t.Errorf("before the first beat: status %v after %d results, want pending with none", st.Status, st.Runs)
		}
		if code != http.StatusOK || !strings.Contains(body, "[+]loop pending: waiting for the first beat\n") {
			t.Errorf("/livez?verbose before the first beat: %d %q, want 200 with loop pending", code, body)
		}
	} else {
		t.Logf("%v passed before the state was read; not checking pending", waited)
	}

	rtBeatUntilPass(t, m, hb, "loop")
	rtWaitCheckEvent(t, m, &cursor, "loop", health.EventCheckPassed)
	if !m.Passing(health.Live) {
		t.Errorf("/livez fails with the heartbeat passing")
	}

	// A second beat right away — and then none. (Beat is the cheap path here.)
	last := time.Now()
	hb.Beat()
	ev := rtWaitCheckEvent(t, m, &cursor, "loop", health.EventCheckFailed)
	if gap := ev.Time.Sub(last); gap < ttl {
		t.Errorf("failed %v after the last beat, before its ttl of %v", gap, ttl)
	}
	if !strings.HasPrefix(ev.Output, "no beat for ") || !strings.HasSuffix(ev.Output, " (ttl 100ms)") {
		t.Errorf("check-failed output %q, want \"no beat for ... (ttl 100ms)\"", ev.Output)
	}
	if ev.From != health.Pass || ev.To != health.Fail {
		t.Errorf("check-failed from %v to %v, want pass to fail", ev.From, ev.To)
	}
	if m.Passing(health.Live) {
		t.Errorf("/livez passes with the heartbeat failed")
	}
	if code, body, _ := rtGet(h, "/livez?verbose"); code != http.StatusServiceUnavailable ||
		!strings.Contains(body, "[-]loop failed: no beat for ") {
		t.Errorf("/livez?verbose after the ttl: %d %q, want 503 naming the heartbeat", code, body)
	}

	rtBeatUntilPass(t, m, hb, "loop")
	ev = rtWaitCheckEvent(t, m, &cursor, "loop", health.EventCheckPassed)
	if ev.From != health.Fail {
		t.Errorf("check-passed from %v, want from fail", ev.From)
	}
	if !m.Passing(health.Live) {
		t.Errorf("/livez fails after the heartbeat recovered")
	}
}

func TestRealtimeAWatchdogFailsOnAnOverrunningUnitAndRecoversWhenItEnds(t *testing.T) {
	const limit = 100 * time.Millisecond
	m := rtMonitor()
	wd, err := m.Watchdog("reconcile", limit, health.Live)
	if err != nil {
		t.Fatal(err)
	}
	var cursor uint64
	start(t, m)
	rtWaitCheckEvent(t, m, &cursor, "reconcile", health.EventCheckPassed) // idle passes

	began := time.Now()
	done := wd.Begin()
	if n := wd.Running(); n != 1 {
		t.Errorf("Running() = %d after Begin, want 1", n)
	}
	ev := rtWaitCheckEvent(t, m, &cursor, "reconcile", health.EventCheckFailed)
	if gap := ev.Time.Sub(began); gap < limit {
		t.Errorf("failed %v after the unit began, before its limit of %v", gap, limit)
	}
	if want := "1 of 1 units of work have run longer than 100ms"; !strings.Contains(ev.Output, want) {
		t.Errorf("check-failed output %q, want it to contain %q", ev.Output, want)
	}
	if m.Passing(health.Live) {
		t.Errorf("/livez passes with a unit of work overrunning")
	}

	done()
	ev = rtWaitCheckEvent(t, m, &cursor, "reconcile", health.EventCheckPassed)
	if ev.From != health.Fail {
		t.Errorf("check-passed from %v, want from fail", ev.From)
	}
	if !m.Passing(health.Live) {
		t.Errorf("/livez fails once the overrunning unit ended")
	}

	// done again is harmless: it neither finishes another unit nor miscounts.
	done()
	if n := wd.Running(); n != 0 {
		t.Errorf("Running() = %d after done twice, want 0", n)
	}
	next := wd.Begin()
	done()
	if n := wd.Running(); n != 1 {
		t.Errorf("Running() = %d after a new Begin and an old done, want 1", n)
	}
	next()
	next()
	if n := wd.Running(); n != 0 {
		t.Errorf("Running() = %d after every unit ended, want 0", n)
	}
	wd.Begin()() // a unit that ends in time changes nothing
	waitFor(t, "the watchdog passing with no unit running", func() bool {
		return rtState(t, m, "reconcile").Status == health.Pass
	})
}
