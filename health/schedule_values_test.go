package health_test

import (
	"context"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
)

type reviewKey struct{}

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
					_ = bg.Value(reviewKey{})
					time.Sleep(time.Millisecond)
				}
			}()
			return nil
		})})
	start(t, m)
	waitRuns(t, m, "v", 10)
	time.Sleep(50 * time.Millisecond)
}
