package health_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
)

type valueKey struct{}

// As net/http's transport does with a dial it lets go on after the request
// was cancelled (context.WithoutCancel keeps the values).
// A goroutine a checker leaves reading its context's values does not race
// with the worker's next run.
func TestRealtimeAContextsValuesOutliveItsRun(t *testing.T) {
	m := rtMonitor()
	m.Add(health.Check{Name: "v", Level: health.Ready, Period: 10 * time.Millisecond, Timeout: 10 * time.Millisecond,
		Checker: health.CheckerFunc(func(ctx context.Context) error {
			bg := context.WithoutCancel(ctx)
			go func() {
				for end := time.Now().Add(30 * time.Millisecond); time.Now().Before(end); {
					_ = bg.Value(valueKey{})
					time.Sleep(time.Millisecond)
				}
			}()
			return nil
		})})
	start(t, m)
	waitRuns(t, m, "v", 10)
	time.Sleep(50 * time.Millisecond)
}

// Contexts derived from a run's (as net/http's transport derives one for
// every request) see it ended for good, however soon the worker takes its
// next run: many runs ended at their deadlines, each with a derived context
// that learns of it from another goroutine.
func TestRealtimeContextsDerivedFromARunSeeItEnded(t *testing.T) {
	m := rtMonitor()
	var ended atomic.Int64
	for i := range 20 {
		m.Add(health.Check{Name: fmt.Sprintf("d-%02d", i), Level: health.Ready, Period: 10 * time.Millisecond, Timeout: 2 * time.Millisecond,
			Checker: health.CheckerFunc(func(ctx context.Context) error {
				derived, cancel := context.WithCancel(ctx)
				defer cancel()
				if i%2 == 0 {
					<-derived.Done() // ended at the deadline
					if derived.Err() == nil {
						t.Error("a derived context's Done closed with no error")
					}
				} else {
					// Back just after the deadline, as a socket's own
					// deadline returns: the context learns of its end
					// from another goroutine, after the run.
					deadline, _ := ctx.Deadline()
					time.Sleep(time.Until(deadline) + 50*time.Microsecond)
				}
				ended.Add(1)
				return nil
			})})
	}
	start(t, m)
	waitFor(t, "600 runs ended at their deadlines", func() bool { return ended.Load() >= 600 })
}
