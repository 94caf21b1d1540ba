package health_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
)

// A checker that ignores its context holds its worker; a run dispatched
// behind it in the last tick before shutdown is never taken, and Done never
// closes.
// Done closes once the context ends, though checkers that ignore their
// contexts hold every worker and runs wait behind them.
func TestRealtimeDoneClosesThoughHungCheckersHoldEveryWorker(t *testing.T) {
	hung := 0
	for trial := 0; trial < 5; trial++ {
		release := make(chan struct{})
		m := rtMonitor()
		for i := range 30 {
			m.Add(health.Check{Name: fmt.Sprintf("hung-%02d", i), Level: health.Ready, Period: time.Hour, Timeout: 50 * time.Millisecond,
				InitialDelay: time.Duration(i) * 10 * time.Millisecond,
				Checker:      health.CheckerFunc(func(context.Context) error { <-release; return nil })})
		}
		ctx, cancel := context.WithCancel(context.Background())
		m.Start(ctx)
		time.Sleep(150 * time.Millisecond)
		cancel()
		select {
		case <-m.Done():
		case <-time.After(settle):
			hung++
		}
		close(release)
		<-m.Done()
	}
	if hung > 0 {
		t.Fatalf("Done did not close within %v of cancel in %d of 5 trials (the checkers ignore their context)", settle, hung)
	}
}

// A run's context ends when its checker returns, as a cancel of
// context.WithTimeout would: what waits on it is let go.
func TestRealtimeARunsContextEndsWhenItReturns(t *testing.T) {
	var live atomic.Int64
	m := rtMonitor()
	m.Add(health.Check{Name: "w", Level: health.Ready, Period: 10 * time.Millisecond, Timeout: 5 * time.Millisecond,
		Checker: health.CheckerFunc(func(ctx context.Context) error {
			live.Add(1)
			go func() { <-ctx.Done(); live.Add(-1) }()
			return nil
		})})
	start(t, m)
	waitRuns(t, m, "w", 30)
	waitFor(t, "the goroutines waiting on the runs' contexts to end", func() bool { return live.Load() <= 1 })
}
