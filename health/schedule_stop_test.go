package health_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
)

// A check stopped while its run's result is on its way is not recorded: a
// check out of the levels says nothing to them, and counts in them again as
// it was once started.
func TestARunOfACheckStoppedBeforeItsResultIsRecordedIsNotCounted(t *testing.T) {
	inRedact, proceed := make(chan struct{}), make(chan struct{})
	m, clk := fakeMonitor(t, health.WithRedaction(func(s string) string {
		if s == "trigger" {
			close(inRedact)
			<-proceed
		}
		return s
	}))
	c := passing()
	m.Add(health.Check{Name: "c", Level: health.Ready, Period: 10 * time.Second, SuccessThreshold: 1, FailureThreshold: 1, Checker: c})
	start(t, m)
	waitRuns(t, m, "c", 1)
	c.fail("trigger")
	advance(t, clk, 1, 10*time.Second)
	<-inRedact // the run returned; its result is being recorded
	if err := m.StopCheck("c"); err != nil {
		t.Fatal(err)
	}
	close(proceed)
	if err := clk.WaitPending(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the run's worker to finish", func() bool {
		st, _ := m.CheckState("c")
		return st.Runs == 1 && m.Passing(health.Ready)
	})
	c.pass()
	if err := m.StartCheck("c"); err != nil {
		t.Fatal(err)
	}
	waitRuns(t, m, "c", 2)
	waitFor(t, "readiness to pass with its only check passing", func() bool { return m.Passing(health.Ready) })
}

// A step that waited for RunNow's run while its check was stopped runs
// nothing: the check is stopped.
func TestRealtimeAStepWhoseCheckStoppedWhileItWaitedRunsNothing(t *testing.T) {
	stopped := make(chan struct{})
	var calls atomic.Int64
	m := rtMonitor()
	m.Add(health.Check{Name: "h", Level: health.Ready, Period: time.Hour, InitialDelay: 20 * time.Millisecond,
		Checker: health.CheckerFunc(func(context.Context) error {
			if calls.Add(1) == 1 {
				<-stopped // RunNow's run, which holds the check until it is stopped
			}
			return nil
		})})
	start(t, m)
	go func() {
		time.Sleep(100 * time.Millisecond) // the scheduled run is due, and waits behind RunNow's
		m.StopCheck("h")
		close(stopped)
	}()
	m.RunNow(context.Background(), "h")
	time.Sleep(50 * time.Millisecond) // room for a run that should not be
	if n := calls.Load(); n != 1 {
		t.Fatalf("the checker was called %d times, want once (RunNow's): a stopped check ran", n)
	}
}
