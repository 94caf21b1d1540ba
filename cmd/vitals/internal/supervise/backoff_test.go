package supervise

import (
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/health/healthtest"
)

// A crashing service waits out its backoff on the supervisor's clock:
// backoff.initial, then twice that, each give or take a tenth; seen on the
// fake clock, with no wait of the test's own.
func TestACrashingServiceWaitsItsBackoffOnTheClock(t *testing.T) {
	clock := healthtest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	spec := Spec{Service: config.Service{Restart: config.RestartOnFailure, BackoffInitial: time.Second, BackoffMax: time.Minute, StopTimeout: time.Second}, Clock: clock}
	_, ev, _ := workload(t, spec, "exits", "1", "1")
	started := func() int {
		n := 0
		for _, e := range ev.list() {
			if e.Type == health.EventServiceStarted {
				n++
			}
		}
		return n
	}
	for i, wait := range []time.Duration{time.Second, 2 * time.Second} {
		// The run exits 1: the supervisor waits on a timer of its clock.
		waitFor(t, "the backoff's timer", func() bool { return clock.Pending() > 0 && started() == i+1 })
		clock.Advance(wait * 85 / 100) // short of the least the jitter gives
		time.Sleep(50 * time.Millisecond)
		if n := started(); n != i+1 {
			t.Fatalf("restart %d came %v into a backoff of %v", i+1, wait*85/100, wait)
		}
		clock.Advance(wait * 30 / 100) // past the most the jitter gives
		waitFor(t, "the restart", func() bool { return started() == i+2 })
	}
}
