package health_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
)

// The same on the fake clock.
func TestDoneClosesThoughHungCheckersHoldEveryWorker(t *testing.T) {
	for trial := 0; trial < 5; trial++ {
		release := make(chan struct{})
		m, clk := fakeMonitor(t)
		for i := range 30 {
			m.Add(health.Check{Name: fmt.Sprintf("hung-%02d", i), Level: health.Ready, Period: time.Hour, Timeout: 50 * time.Millisecond,
				InitialDelay: time.Duration(i) * 10 * time.Millisecond,
				Checker:      health.CheckerFunc(func(context.Context) error { <-release; return nil })})
		}
		ctx, cancel := context.WithCancel(context.Background())
		m.Start(ctx)
		for range 15 {
			clk.Advance(10 * time.Millisecond)
			time.Sleep(time.Millisecond)
		}
		cancel()
		select {
		case <-m.Done():
		case <-time.After(settle):
			t.Errorf("trial %d: Done did not close", trial)
		}
		close(release)
		<-m.Done()
	}
}
