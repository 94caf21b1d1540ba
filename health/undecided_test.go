package health_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
)

// A check whose runs decide nothing yet (a rate whose window has one sample)
// stays pending, fails readiness as any pending check does, says why on the
// probe endpoints, keeps its runs as results that are neither passes nor
// failures, and passes at its first run that decides.
func TestARunThatDecidesNothingKeepsTheCheckPending(t *testing.T) {
	m, clk := fakeMonitor(t)
	var decided atomic.Bool
	checker := health.CheckerFunc(func(context.Context) error {
		if !decided.Load() {
			return health.Undecided("rate(x[1m]) needs two scrapes in its 1m window, and has 1 so far")
		}
		return nil
	})
	m.Add(health.Check{Name: "progress", Level: health.Ready, Checker: checker, FailureThreshold: 1})
	start(t, m)
	for i := 1; i <= 3; i++ {
		st := waitRuns(t, m, "progress", i)
		if st.Status != health.Pending || st.ConsecutiveFailures != 0 || st.ConsecutiveSuccesses != 0 {
			t.Fatalf("after %d undecided runs: %s, %d failures, %d successes; want pending, none counted", i, st.Status, st.ConsecutiveFailures, st.ConsecutiveSuccesses)
		}
		last, _ := st.Last()
		if last.OK || !last.Undecided || !strings.HasPrefix(last.Output, "rate(x[1m]) needs two scrapes") {
			t.Fatalf("the result of an undecided run: %+v", last)
		}
		advance(t, clk, 1, 10*time.Second)
	}
	if m.Passing(health.Ready) {
		t.Fatal("ready while the ready check decided nothing")
	}
	w := httptest.NewRecorder()
	m.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/readyz?verbose", nil))
	if want := "[-]progress pending: rate(x[1m]) needs two scrapes in its 1m window, and has 1 so far\n"; !strings.Contains(w.Body.String(), want) {
		t.Fatalf("/readyz?verbose:\n%s\nwant a line\n%s", w.Body.String(), want)
	}
	decided.Store(true)
	advance(t, clk, 1, 10*time.Second)
	waitFor(t, "the check to pass at its first run that decides", func() bool { return m.Passing(health.Ready) })
}

// An undecided run is its checker's error that is ErrUndecided, however
// wrapped; Run keeps it so.
func TestUndecidedIsAnError(t *testing.T) {
	err := health.Undecided("waiting for a second sample")
	if !errors.Is(err, health.ErrUndecided) || err.Error() != "waiting for a second sample" {
		t.Fatalf("Undecided: %v, Is ErrUndecided %v", err, errors.Is(err, health.ErrUndecided))
	}
	wrapped := health.CheckerFunc(func(context.Context) error { return errors.Join(err) })
	if r := health.Run(context.Background(), wrapped, time.Second); r.OK || !r.Undecided || r.Output != "waiting for a second sample" {
		t.Fatalf("Run of a checker that decides nothing: %+v", r)
	}
	if r := health.Run(context.Background(), health.CheckerFunc(func(context.Context) error { return errors.New("x") }), time.Second); r.Undecided {
		t.Fatalf("Run of a checker that fails: %+v, want decided", r)
	}
}
