package health_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/health/healthtest"
)

// stableFor is how long the checks of these tests must pass before they
// count: not a multiple of probePeriod, so that the check becomes stable
// between two runs.
const stableFor = 25 * time.Second

func TestAStableForCheckPassesTheMomentItHasPassedThatLongAndSaysWhenMeanwhile(t *testing.T) {
	mq := passing()
	f := newProbeFixture(t, nil, health.Check{Name: "mq", Level: health.Ready, Checker: mq, Period: probePeriod, StableFor: stableFor})
	f.run(t, "mq")
	at12s := healthtest.Epoch.Add(12 * time.Second)
	if st, _ := f.m.CheckState("mq"); st.Status != health.Pending || !st.StableAt.Equal(healthtest.Epoch.Add(stableFor)) || st.StableFor != stableFor {
		t.Fatalf("after its first pass: %v, stable at %v, stable for %v; want pending, stable at 25s", st.Status, st.StableAt, st.StableFor)
	}
	if f.m.Passing(health.Ready) {
		t.Fatal("readiness passes before the check is stable")
	}
	advance(t, f.clk, 1, 10*time.Second)
	waitRuns(t, f.m, "mq", 2)
	advance(t, f.clk, 1, 2*time.Second)
	checkProbes(t, f.h, []probeCase{
		{target: "/readyz?verbose", code: http.StatusServiceUnavailable,
			body: "[-]mq pending: pass, stable in 13s\n[+]shutdown ok\nreadyz check failed\n"},
		{target: "/readyz/mq", code: http.StatusServiceUnavailable, body: "[-]mq pending: pass, stable in 13s\n"},
		{target: "/readyz?format=json", code: http.StatusServiceUnavailable, ctype: probeJSON,
			body: `{"status":"fail","output":"readyz check failed","checks":{"mq":[{"status":"fail","time":"2026-01-01T00:00:10Z","output":"pass, stable in 13s"}]}}` + "\n"},
	})
	if f.clk.Now() != at12s {
		t.Fatalf("the clock moved to %v", f.clk.Now())
	}
	var cursor uint64
	for _, e := range f.m.Events(0) {
		cursor = e.ID
	}
	advance(t, f.clk, 1, 8*time.Second) // 20s: the third run
	waitRuns(t, f.m, "mq", 3)
	advance(t, f.clk, 1, 5*time.Second-time.Nanosecond)
	if st, _ := f.m.CheckState("mq"); st.Status != health.Pending {
		t.Fatalf("a nanosecond before it is stable: %v, want pending", st.Status)
	}
	advance(t, f.clk, 1, time.Nanosecond)
	ev := waitCheckEvent(t, f.m, &cursor)
	if ev.Type != health.EventCheckPassed || ev.From != health.Pending || !ev.Time.Equal(healthtest.Epoch.Add(stableFor)) ||
		ev.Output != "stable for 25s" {
		t.Fatalf("event %+v, want check-passed from pending at exactly 25s, saying it is stable", ev)
	}
	if ev := waitEvent(t, f.m, &cursor); ev.Type != health.EventLevelPassed || ev.Level != health.Ready {
		t.Fatalf("event %+v, want readiness to pass with it", ev)
	}
	if st, _ := f.m.CheckState("mq"); st.Runs != 3 || !st.StableAt.IsZero() || !st.Since.Equal(healthtest.Epoch.Add(stableFor)) {
		t.Fatalf("once stable: %d runs, stable at %v, since %v; want 3 runs (no run to pass it), no wait, since 25s", st.Runs, st.StableAt, st.Since)
	}
}

func TestAFailureInTheWaitStartsItOver(t *testing.T) {
	m, clk := fakeMonitor(t)
	mq := passing()
	m.Add(health.Check{Name: "mq", Level: health.Ready, Checker: mq, Period: probePeriod, StableFor: stableFor})
	start(t, m)
	waitRuns(t, m, "mq", 1)
	mq.fail("connection to MQ lost")
	advance(t, clk, 1, probePeriod) // 10s
	if st := waitRuns(t, m, "mq", 2); st.Status != health.Pending || !st.StableAt.IsZero() {
		t.Fatalf("after a failure in the wait: %v, stable at %v; want pending, waiting for nothing", st.Status, st.StableAt)
	}
	mq.pass()
	advance(t, clk, 1, probePeriod) // 20s: the wait starts over
	if st := waitRuns(t, m, "mq", 3); !st.StableAt.Equal(healthtest.Epoch.Add(20*time.Second + stableFor)) {
		t.Fatalf("stable at %v, want 25s after the pass at 20s", st.StableAt.Sub(healthtest.Epoch))
	}
	var cursor uint64
	for _, d := range []time.Duration{probePeriod, probePeriod, 5*time.Second - time.Nanosecond} { // 30s, 40s, 44.999…s
		advance(t, clk, 1, d)
	}
	if st, _ := m.CheckState("mq"); st.Status != health.Pending {
		t.Fatalf("at the first wait's end and after: %v, want pending", st.Status)
	}
	advance(t, clk, 1, time.Nanosecond)
	if ev := waitCheckEvent(t, m, &cursor); ev.Type != health.EventCheckPassed || !ev.Time.Equal(healthtest.Epoch.Add(45*time.Second)) {
		t.Fatalf("event %+v, want check-passed at 45s", ev)
	}
}

func TestAFailedCheckStaysFailedUntilItIsStableAgain(t *testing.T) {
	m, clk := fakeMonitor(t)
	mq := failing("connection refused")
	m.Add(health.Check{Name: "mq", Level: health.Ready, Checker: mq, Period: probePeriod, FailureThreshold: 1, StableFor: stableFor})
	start(t, m)
	if st := waitRuns(t, m, "mq", 1); st.Status != health.Fail {
		t.Fatalf("after a failure: %v, want fail", st.Status)
	}
	mq.pass()
	advance(t, clk, 1, probePeriod)
	waitRuns(t, m, "mq", 2)
	checkProbes(t, m.Handler(), []probeCase{
		{target: "/readyz/mq", code: http.StatusServiceUnavailable, body: "[-]mq failed: pass, stable in 25s\n"},
	})
	var cursor uint64
	for _, e := range m.Events(0) {
		cursor = e.ID
	}
	advance(t, clk, 1, probePeriod)
	advance(t, clk, 1, probePeriod)
	advance(t, clk, 1, 5*time.Second)
	if ev := waitCheckEvent(t, m, &cursor); ev.Type != health.EventCheckPassed || ev.From != health.Fail ||
		!ev.Time.Equal(healthtest.Epoch.Add(probePeriod+stableFor)) {
		t.Fatalf("event %+v, want check-passed from fail at 35s", ev)
	}
}

func TestTheWaitStartsOverWithTheChecks(t *testing.T) {
	m, clk := fakeMonitor(t)
	m.Add(health.Check{Name: "mq", Level: health.Ready, Checker: passing(), Period: probePeriod, StableFor: stableFor})
	start(t, m)
	waitRuns(t, m, "mq", 1)
	advance(t, clk, 1, 20*time.Second-probePeriod)
	advance(t, clk, 1, probePeriod) // 20s
	waitRuns(t, m, "mq", 3)
	m.Reset("the workload restarted")
	waitFor(t, "the first run after the reset", func() bool {
		st, _ := m.CheckState("mq")
		return st.Runs == 1
	})
	if st, _ := m.CheckState("mq"); st.Status != health.Pending || !st.StableAt.Equal(healthtest.Epoch.Add(20*time.Second+stableFor)) {
		t.Fatalf("after the reset: %v, stable at %v; want pending, 25s after the reset", st.Status, st.StableAt.Sub(healthtest.Epoch))
	}
	advance(t, clk, 1, 5*time.Second) // 25s: the old wait's end
	if st, _ := m.CheckState("mq"); st.Status != health.Pending {
		t.Fatalf("when the wait before the reset would have ended: %v, want pending", st.Status)
	}
}

func TestAWaitThatRunNowStartsEndsOnTimeWithoutARun(t *testing.T) {
	m, clk := fakeMonitor(t)
	mq := failing("no consumer yet")
	m.Add(health.Check{Name: "mq", Level: health.Ready, Checker: mq, Period: time.Hour, StableFor: stableFor})
	start(t, m)
	waitRuns(t, m, "mq", 1)
	advance(t, clk, 1, 5*time.Second)
	mq.pass()
	if r, _ := m.RunNow(context.Background(), "mq"); !r.OK {
		t.Fatalf("RunNow: %+v", r)
	}
	var cursor uint64
	for _, e := range m.Events(0) {
		cursor = e.ID
	}
	advance(t, clk, 1, stableFor)
	if ev := waitCheckEvent(t, m, &cursor); ev.Type != health.EventCheckPassed || !ev.Time.Equal(healthtest.Epoch.Add(5*time.Second+stableFor)) {
		t.Fatalf("event %+v, want check-passed 25s after RunNow, not at the next run an hour later", ev)
	}
	if st, _ := m.CheckState("mq"); st.Runs != 2 {
		t.Fatalf("%d runs, want 2: stability passed it, not a run", st.Runs)
	}
}

func TestAStartupCheckLatchesOnceStable(t *testing.T) {
	m, clk := fakeMonitor(t)
	boot := passing()
	m.Add(health.Check{Name: "boot", Level: health.Startup, Checker: boot, Period: probePeriod, StableFor: stableFor})
	m.Add(health.Check{Name: "db", Level: health.Ready, Checker: passing(), Period: probePeriod})
	start(t, m)
	waitRuns(t, m, "boot", 1)
	for range 2 {
		advance(t, clk, 1, probePeriod)
	}
	if m.Passing(health.Startup) {
		t.Fatal("startup passed before its check was stable")
	}
	advance(t, clk, 1, 5*time.Second) // 25s
	waitFor(t, "startup to latch", func() bool { return m.Passing(health.Startup) })
	waitRuns(t, m, "db", 1)
	advance(t, clk, 1, time.Hour)
	if st, _ := m.CheckState("boot"); st.Runs != 3 || boot.runs.Load() != 3 {
		t.Fatalf("a stable startup check ran on: %d runs", st.Runs)
	}
}

func TestAHeartbeatWithStableForPassesOnceBeatenThatLong(t *testing.T) {
	m, clk := fakeMonitor(t)
	hb, err := m.Heartbeat("loop", 10*time.Second, health.Ready, health.StableFor(stableFor))
	if err != nil {
		t.Fatal(err)
	}
	start(t, m)
	hb.Beat()
	waitResultAt(t, m, "loop", healthtest.Epoch)
	if st, _ := m.CheckState("loop"); st.Status != health.Pending || !st.StableAt.Equal(healthtest.Epoch.Add(stableFor)) {
		t.Fatalf("after the first beat: %v, stable at %v; want pending until 25s", st.Status, st.StableAt)
	}
	var cursor uint64
	for _, d := range []time.Duration{8 * time.Second, 8 * time.Second, 8 * time.Second} {
		advance(t, clk, 1, d)
		hb.Beat()
	}
	advance(t, clk, 1, time.Second) // 25s
	if ev := waitCheckEvent(t, m, &cursor); ev.Type != health.EventCheckPassed || !ev.Time.Equal(healthtest.Epoch.Add(stableFor)) {
		t.Fatalf("event %+v, want check-passed at 25s", ev)
	}
	if _, err := m.Heartbeat("bad", time.Second, health.Ready, health.StableFor(-time.Second)); err == nil {
		t.Fatal("a negative stable time was taken")
	}
}

func TestTheRecorderHearsOfACheckBecomingStable(t *testing.T) {
	var mu sync.Mutex
	var got []health.Recorded
	m, clk := fakeMonitor(t, health.WithRecorder(func(r health.Recorded) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, r)
	}))
	m.Add(health.Check{Name: "mq", Level: health.Ready, Checker: passing(), Period: time.Hour, StableFor: stableFor})
	start(t, m)
	waitRuns(t, m, "mq", 1)
	advance(t, clk, 1, stableFor)
	waitFor(t, "the recorder to hear of it", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) == 2
	})
	if r := got[1]; !r.Stable || r.From != health.Pending || r.To != health.Pass || !r.Result.OK || r.Check != "mq" {
		t.Fatalf("recorded %+v, want a stable change from pending to pass", r)
	}
	if r := got[0]; r.Stable || r.From != health.Pending || r.To != health.Pending {
		t.Fatalf("recorded first %+v, want the run, pending still", r)
	}
}

// A check stopped the moment it becomes stable, and started again, is
// counted in the levels once: its worker settles a check only while it runs,
// so readiness passes with it. (The worker's wake-up to settle and the
// stop's cancellation come together; either may be seen first.)
func TestACheckStoppedAsItBecomesStableIsCountedOnceWhenStartedAgain(t *testing.T) {
	for range 20 {
		m, clk := fakeMonitor(t)
		m.Add(health.Check{Name: "mq", Level: health.Ready, Checker: passing(), Period: time.Hour, StableFor: stableFor})
		start(t, m)
		waitRuns(t, m, "mq", 1)
		advance(t, clk, 1, stableFor)
		if err := m.StopCheck("mq"); err != nil {
			t.Fatal(err)
		}
		if err := m.StartCheck("mq"); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			st, _ := m.CheckState("mq")
			if st.Status == health.Pass {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the check is %v after its start, not pass", st.Status)
			}
		}
		if !m.Passing(health.Ready) {
			t.Fatal("the check passes and readiness does not: the levels counted it twice")
		}
	}
}

// A run under way when the wait ends, whose result comes after it, passes
// the check for being stable, and its event says so, as when the wait ends
// between runs: the worker, busy with the run, could not settle it first.
func TestARunThatEndsAfterTheWaitSaysTheCheckIsStable(t *testing.T) {
	m, clk := fakeMonitor(t, health.WithJitter(0))
	release := make(chan struct{})
	var runs sync.WaitGroup
	checker := health.CheckerFunc(func(ctx context.Context) error {
		if clk.Now().After(healthtest.Epoch) {
			runs.Done()
			<-release // the second run: under way while the clock passes the end of the wait
		}
		return nil
	})
	runs.Add(1)
	m.Add(health.Check{Name: "mq", Level: health.Ready, Checker: checker, Period: 10 * time.Second, Timeout: 9 * time.Second, StableFor: 12 * time.Second})
	start(t, m)
	waitRuns(t, m, "mq", 1)
	var cursor uint64
	for _, e := range m.Events(0) {
		cursor = e.ID
	}
	advance(t, clk, 1, 10*time.Second)
	runs.Wait()
	advance(t, clk, 1, 3*time.Second) // 13s: the wait ended at 12s, the run goes on
	close(release)
	ev := waitCheckEvent(t, m, &cursor)
	if ev.Type != health.EventCheckPassed || !ev.Time.Equal(healthtest.Epoch.Add(13*time.Second)) || ev.Output != "stable for 12s" {
		t.Fatalf("event %+v, want check-passed at 13s, saying it is stable", ev)
	}
}
