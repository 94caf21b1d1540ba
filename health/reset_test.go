package health_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/health/healthtest"
)

func TestResetStartsEveryCheckOverWithStartupFirst(t *testing.T) {
	m, clk := fakeMonitor(t)
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, n := range []string{"boot", "loop", "db"} {
			st, _ := m.CheckState(n)
			for _, r := range st.History {
				t.Logf("%s %v %v", n, r.Time, r.OK)
			}
			t.Logf("%s status %v pending timers %d now %v", n, st.Status, clk.Pending(), clk.Now())
		}
	})
	boot, loop, db := passing(), passing(), passing()
	m.Add(health.Check{Name: "boot", Level: health.Startup, Checker: boot, Period: time.Second})
	m.Add(health.Check{Name: "loop", Level: health.Live, Checker: loop, Period: time.Second})
	m.Add(health.Check{Name: "db", Level: health.Ready, Checker: db, Period: time.Second, InitialDelay: 2 * time.Second})
	start(t, m)
	waitRuns(t, m, "loop", 1)
	advance(t, clk, 2, 2*time.Second)
	waitRuns(t, m, "db", 1)
	if !m.Passing(health.Ready) {
		t.Fatal("not ready before the reset")
	}
	cursor := lastEventID(m)
	boot.fail("not listening yet")
	m.Reset("the workload restarted")

	// At once: every check pending, startup and readiness failing, liveness not.
	for _, name := range []string{"boot", "loop", "db"} {
		if st, _ := m.CheckState(name); st.Status != health.Pending || st.ConsecutiveSuccesses != 0 {
			t.Errorf("%s after Reset: %v with %d successes, want pending with none", name, st.Status, st.ConsecutiveSuccesses)
		}
	}
	if m.Passing(health.Startup) || m.Passing(health.Ready) || !m.Passing(health.Live) {
		t.Fatalf("after Reset: startup %v ready %v live %v, want false false true",
			m.Passing(health.Startup), m.Passing(health.Ready), m.Passing(health.Live))
	}
	want := []struct {
		typ   health.EventType
		level health.Level
	}{{health.EventChecksReset, 0}, {health.EventLevelFailed, health.Startup}, {health.EventLevelFailed, health.Ready}}
	for _, w := range want {
		ev := waitEvent(t, m, &cursor)
		if ev.Type != w.typ || ev.Level != w.level {
			t.Fatalf("event %+v, want %s %v", ev, w.typ, w.level)
		}
		if ev.Type == health.EventChecksReset && ev.Output != "the workload restarted" {
			t.Fatalf("checks-reset says %q, want the reason given", ev.Output)
		}
	}

	// Startup first: live and ready checks wait for it to pass again.
	reset := clk.Now()
	runs := func(name string) int { st, _ := m.CheckState(name); return st.Runs }
	loopRuns, dbRuns := runs("loop"), runs("db")
	st := waitRuns(t, m, "boot", 1) // results count from the Reset on
	if last, _ := st.Last(); last.OK || !last.Time.Equal(reset) {
		t.Fatalf("startup check's first run after Reset: %+v, want a failure at %v", last, reset)
	}
	// The workers of the new instance sleep: the startup check until its next
	// period, the ready check until its initial delay, counted from the Reset.
	waitDeadlines(t, clk, reset.Add(time.Second), reset.Add(2*time.Second))
	clk.Advance(time.Second)
	waitRuns(t, m, "boot", 2)
	if runs("loop") != loopRuns || runs("db") != dbRuns {
		t.Fatal("live and ready checks ran before startup passed again")
	}
	boot.pass()
	waitDeadlines(t, clk, reset.Add(2*time.Second), reset.Add(2*time.Second))
	clk.Advance(time.Second)
	waitRuns(t, m, "boot", 3)
	// The ready check's initial delay counts from the Reset: 2s, just passed.
	passedAt := reset.Add(2 * time.Second)
	if r := waitResultAt(t, m, "loop", passedAt); !r.Time.Equal(passedAt) {
		t.Fatalf("live check ran at %v, want when startup passed, %v", r.Time, passedAt)
	}
	if r := waitResultAt(t, m, "db", passedAt); !r.Time.Equal(passedAt) {
		t.Fatalf("ready check ran at %v, want when its initial delay from the Reset passed, %v", r.Time, passedAt)
	}
	waitFor(t, "readiness to pass again", func() bool { return m.Passing(health.Ready) })
	if s := m.Snapshot(); !s.StartupPassed.Equal(passedAt) {
		t.Fatalf("startup passed at %v, want %v", s.StartupPassed, passedAt)
	}
	// The history goes on across the Reset; the runs count from it.
	if st, _ := m.CheckState("boot"); st.Runs != 3 || len(st.History) != 4 {
		t.Fatalf("startup check: %d runs, %d kept, want 3 since the Reset and 4 kept", st.Runs, len(st.History))
	}
	// A check that has not run since the Reset says so, not what it did
	// before.
	boot.fail("not listening yet")
	m.Reset("again")
	if body := serveProbe(m.Handler(), "GET", "/livez?verbose", "").Body.String(); !strings.Contains(body, "[+]loop pending: waiting for startup checks") {
		t.Fatalf("/livez?verbose after a Reset:\n%s", body)
	}
}

func TestResetDropsTheResultOfARunBegunBeforeIt(t *testing.T) {
	m, _ := fakeMonitor(t)
	entered, release := make(chan struct{}), make(chan error)
	calls := 0
	m.Add(health.Check{Name: "ui", Level: health.Live, Period: time.Second, FailureThreshold: 1,
		Checker: health.CheckerFunc(func(context.Context) error {
			calls++
			if calls > 1 {
				return nil // runs after the Reset pass
			}
			close(entered)
			return <-release // ignores its context: it answers when told
		})})
	start(t, m)
	<-entered
	m.Reset("the workload restarted")
	release <- errUnhealthy // the old instance's answer arrives after the Reset
	st := waitRuns(t, m, "ui", 1)
	if last, _ := st.Last(); !last.OK {
		t.Fatalf("result after Reset: %+v; want the new run's pass, not the failure begun before the Reset", last)
	}
	if st.Status != health.Pass {
		t.Fatalf("status %v, want pass", st.Status)
	}
}

func TestResetMakesAHeartbeatWaitForABeatOfTheNewInstance(t *testing.T) {
	m, clk := fakeMonitor(t)
	hb, err := m.Heartbeat("loop", 5*time.Second, health.Live)
	if err != nil {
		t.Fatal(err)
	}
	start(t, m)
	hb.Beat()
	waitFor(t, "the first beat to pass", func() bool { st, _ := m.CheckState("loop"); return st.Status == health.Pass })
	m.Reset("the workload restarted")
	if st, _ := m.CheckState("loop"); st.Status != health.Pending {
		t.Fatalf("heartbeat after Reset: %v, want pending", st.Status)
	}
	// No beat from the new instance: the old instance's beat does not make
	// it pass; it fails once ttl has passed since the Reset.
	cursor := lastEventID(m)
	reset := clk.Now()
	for i := 0; ; i++ {
		if st, _ := m.CheckState("loop"); st.Status == health.Fail {
			break
		}
		if i == 20 {
			t.Fatal("the heartbeat did not fail within 20s of a Reset with no beat since")
		}
		advance(t, clk, 1, time.Second)
		time.Sleep(time.Millisecond) // let the worker judge before the next step
	}
	for {
		ev := waitEvent(t, m, &cursor)
		if ev.Check != "loop" {
			continue
		}
		if ev.Type != health.EventCheckFailed {
			t.Fatalf("first heartbeat event after the Reset: %s %q, want check-failed", ev.Type, ev.Output)
		}
		if ev.Time.Before(reset.Add(5 * time.Second)) {
			t.Fatalf("failed at %v, before ttl had passed since the Reset at %v", ev.Time, reset)
		}
		break
	}
	hb.Beat()
	waitFor(t, "a beat of the new instance to pass", func() bool { st, _ := m.CheckState("loop"); return st.Status == health.Pass })
}

func TestResetAfterTheMonitorStoppedDoesNothing(t *testing.T) {
	m, _ := fakeMonitor(t)
	m.Add(health.Check{Name: "ui", Level: health.Live, Checker: passing()})
	ctx, cancel := context.WithCancel(context.Background())
	m.Start(ctx)
	waitRuns(t, m, "ui", 1)
	cancel()
	<-m.Done()
	before := lastEventID(m)
	m.Reset("too late")
	if st, _ := m.CheckState("ui"); st.Status != health.Pass {
		t.Fatalf("status %v after a Reset of a stopped Monitor, want pass kept", st.Status)
	}
	if after := lastEventID(m); after != before {
		t.Fatalf("a Reset of a stopped Monitor emitted events %d..%d", before+1, after)
	}
}

var errUnhealthy = errors.New("503 Service Unavailable")

// lastEventID is the ID of the latest event, 0 when there is none.
func lastEventID(m *health.Monitor) uint64 {
	evs := m.Events(0)
	if len(evs) == 0 {
		return 0
	}
	return evs[len(evs)-1].ID
}

// waitDeadlines waits until the pending timers are exactly those due at want.
func waitDeadlines(t *testing.T, clk *healthtest.Clock, want ...time.Time) {
	t.Helper()
	waitFor(t, fmt.Sprintf("timers due at %v", want), func() bool {
		got := clk.Deadlines()
		return slices.EqualFunc(got, want, time.Time.Equal)
	})
}

func TestARunNowBegunBeforeAResetIsNotRecorded(t *testing.T) {
	m, _ := fakeMonitor(t)
	entered, release := make(chan struct{}), make(chan error)
	var calls atomic.Int32
	m.Add(health.Check{Name: "ui", Level: health.Live, Period: time.Hour, FailureThreshold: 1,
		Checker: health.CheckerFunc(func(context.Context) error {
			if calls.Add(1) != 2 {
				return nil
			}
			close(entered)
			return <-release // the run by hand, of the old instance
		})})
	start(t, m)
	waitRuns(t, m, "ui", 1)
	got := make(chan health.Result, 1)
	go func() {
		r, _ := m.RunNow(context.Background(), "ui")
		got <- r
	}()
	<-entered
	m.Reset("the workload restarted")
	release <- errUnhealthy
	if r := <-got; r.OK {
		t.Fatalf("RunNow answered %+v, want its own failure", r)
	}
	// The new worker runs once the run by hand has returned: it passes, and
	// the failure of the old instance was never recorded.
	st := waitRuns(t, m, "ui", 1)
	if st.Status != health.Pass || len(st.History) != 2 || !st.History[1].OK {
		t.Fatalf("after the Reset: %v with history %+v; want pass, the old failure not kept", st.Status, st.History)
	}
	for _, e := range m.Events(0) {
		if e.Type == health.EventCheckFailed {
			t.Fatalf("event %+v: a failure begun before the Reset was recorded", e)
		}
	}
}

func TestPausedChecksRunNothingUntilReset(t *testing.T) {
	m, clk := fakeMonitor(t)
	ui := failing("connection refused")
	m.Add(health.Check{Name: "ui", Level: health.Live, Checker: ui, Period: time.Second, FailureThreshold: 1})
	hb, _ := m.Heartbeat("loop", time.Second, health.Live)
	start(t, m)
	waitRuns(t, m, "ui", 1)
	m.Pause("the workload exited: restarting in 1s")
	runs := ui.runs.Load()
	if m.Passing(health.Startup) || m.Passing(health.Ready) || !m.Passing(health.Live) {
		t.Fatalf("paused: startup %v ready %v live %v, want false false true",
			m.Passing(health.Startup), m.Passing(health.Ready), m.Passing(health.Live))
	}
	if body := serveProbe(m.Handler(), "GET", "/readyz?verbose", "").Body.String(); !strings.Contains(body, "[-]monitor pending: paused: the workload exited: restarting in 1s") {
		t.Fatalf("/readyz?verbose while paused:\n%s", body)
	}
	for range 5 {
		clk.Advance(time.Second)
	}
	if r, _ := m.RunNow(context.Background(), "loop"); r.OK {
		t.Fatalf("a heartbeat judged while paused: %+v", r)
	}
	if _, err := m.RunNow(context.Background(), "ui"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ui", "loop"} {
		if st, _ := m.CheckState(name); st.Status != health.Pending || st.Runs != 0 {
			t.Fatalf("%s while paused: %v after %d runs, want pending with none recorded", name, st.Status, st.Runs)
		}
	}
	if n := ui.runs.Load(); n != runs+1 {
		t.Fatalf("the checker ran %d times while paused, want only the run by hand", n-runs)
	}
	ui.pass()
	m.Reset("the workload started again")
	if st := waitRuns(t, m, "ui", 1); st.Status != health.Pass {
		t.Fatalf("after Reset: %v, want the new instance judged", st.Status)
	}
	hb.Beat()
	waitFor(t, "a beat after the Reset to pass", func() bool { st, _ := m.CheckState("loop"); return st.Status == health.Pass })
}
