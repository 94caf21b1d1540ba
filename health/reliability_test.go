package health_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
)

// R2 of the reliability suite: a checker that panics on every run, run
// 100,000 times, never takes the process down, and every run is a failed
// result that carries the panic's message, whatever the panic's value.
func TestAHundredThousandPanicsAreAHundredThousandFailedRuns(t *testing.T) {
	const runs = 100_000
	m, _ := fakeMonitor(t)
	var n int
	values := []func(int) any{
		func(i int) any { return fmt.Sprintf("boom %d", i) },
		func(i int) any { return fmt.Errorf("error %d", i) },
		func(i int) any { return i },
		func(int) any { return nil }, // panic(nil): a *runtime.PanicNilError since Go 1.21
	}
	want := []func(int) string{
		func(i int) string { return fmt.Sprintf("panic: boom %d", i) },
		func(i int) string { return fmt.Sprintf("panic: error %d", i) },
		func(i int) string { return fmt.Sprintf("panic: %d", i) },
		func(int) string { return "panic: panic called with nil argument" },
	}
	boom := health.CheckerFunc(func(context.Context) error { panic(values[n%len(values)](n)) })
	if err := m.Add(health.Check{Name: "boom", Level: health.Live, Checker: boom, Period: time.Hour, FailureThreshold: 1}); err != nil {
		t.Fatal(err)
	}
	start(t, m)
	waitRuns(t, m, "boom", 1) // the scheduled first run
	ctx := context.Background()
	for n = 1; n <= runs; n++ {
		r, err := m.RunNow(ctx, "boom")
		if err != nil {
			t.Fatalf("run %d: %v", n, err)
		}
		if r.OK || !strings.HasPrefix(r.Output, want[n%len(want)](n)) {
			t.Fatalf("run %d: result %+v, want failed with %q", n, r, want[n%len(want)](n))
		}
	}
	st, ok := m.CheckState("boom")
	if !ok || st.Runs != runs+1 || st.Status != health.Fail {
		t.Fatalf("after %d panics: runs %d, status %v, want %d and fail", runs, st.Runs, st.Status, runs+1)
	}
	if m.Passing(health.Live) {
		t.Fatal("liveness passes with its only check failing")
	}
}
