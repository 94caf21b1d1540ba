package health_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/health/healthtest"
)

// The scheduler wakes once per tick for every run due in it: a run due
// between two ticks starts at the next one, never before it is due.
func TestARunDueBetweenTicksStartsAtTheNextTickNeverBefore(t *testing.T) {
	m, clk := fakeMonitor(t)
	m.Add(health.Check{Name: "db", Level: health.Ready, Checker: passing(), Period: 10 * time.Second,
		InitialDelay: time.Second + health.Tick/2})
	start(t, m)
	advance(t, clk, 1, time.Second+health.Tick/2) // due now, but the tick is yet to come
	if err := clk.WaitPending(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if st, _ := m.CheckState("db"); st.Runs != 0 {
		t.Fatalf("%d runs before the tick, want 0", st.Runs)
	}
	advance(t, clk, 1, health.Tick/2)
	st := waitRuns(t, m, "db", 1)
	if at, want := st.History[0].Time, healthtest.Epoch.Add(time.Second+health.Tick); !at.Equal(want) {
		t.Fatalf("first run at %v, want %v: the tick after it was due", at, want)
	}
	// Later runs keep their schedule, one period after the run was due, not
	// after the tick it ran at.
	advance(t, clk, 1, 10*time.Second-health.Tick/2) // 11s and half a tick: due
	if err := clk.WaitPending(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if st, _ := m.CheckState("db"); st.Runs != 1 {
		t.Fatalf("%d runs before the tick, want 1", st.Runs)
	}
	advance(t, clk, 1, health.Tick/2)
	if st := waitRuns(t, m, "db", 2); !st.History[1].Time.Equal(healthtest.Epoch.Add(11*time.Second + health.Tick)) {
		t.Fatalf("second run at %v, want at the tick after %v", st.History[1].Time, healthtest.Epoch.Add(11*time.Second+health.Tick/2))
	}
}

// A run's deadline is not rounded to the tick: its checker's context ends
// exactly at its timeout.
func TestATimeoutEndsTheRunExactlyNotAtATick(t *testing.T) {
	m, clk := fakeMonitor(t)
	timeout := 500*time.Millisecond + health.Tick/3
	m.Add(health.Check{Name: "db", Level: health.Ready, Timeout: timeout, Period: 10 * time.Second, FailureThreshold: 1,
		Checker: health.CheckerFunc(func(ctx context.Context) error {
			<-ctx.Done()
			return ctx.Err()
		})})
	start(t, m)
	advance(t, clk, 1, timeout) // the run's deadline is the one timer
	r := waitRuns(t, m, "db", 1).History[0]
	if r.OK || r.Duration != timeout || r.Output != fmt.Sprintf("timed out after %v", timeout) {
		t.Fatalf("result ok=%v duration %v output %q, want a failure timed out after %v", r.OK, r.Duration, r.Output, timeout)
	}
}

// On the system clock, one worker takes a tick's runs; a checker that takes
// long holds its worker, not the other checks: they get workers of their own.
func TestRealtimeChecksThatHoldTheirWorkersDoNotHoldUpTheOthers(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) }) // after the monitor stopped
	const slow = 20
	var inside atomic.Int64
	m := rtMonitor()
	for i := range slow {
		m.Add(health.Check{Name: fmt.Sprintf("slow-%02d", i), Level: health.Ready, Period: time.Hour, Timeout: time.Hour,
			Checker: health.CheckerFunc(func(ctx context.Context) error {
				inside.Add(1)
				select {
				case <-release:
				case <-ctx.Done():
				}
				return nil
			})})
	}
	m.Add(health.Check{Name: "quick", Level: health.Ready, Period: 10 * time.Millisecond, Checker: passing()})
	start(t, m)
	waitFor(t, "every slow checker to be running", func() bool { return inside.Load() == slow })
	runs := waitRuns(t, m, "quick", 20).Runs
	if n := inside.Load(); n != slow {
		t.Fatalf("%d slow checkers running, want %d", n, slow)
	}
	if runs < 20 {
		t.Fatalf("quick ran %d times", runs)
	}
}
