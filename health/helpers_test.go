package health_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/health/healthtest"
)

// settle bounds how long a test waits for goroutines to do what the fake
// clock told them to. It is a guard against hanging, never a measurement.
const settle = 10 * time.Second

// fakeMonitor returns a Monitor on a fake clock with no jitter and no logs.
// The caller adds checks and then calls start.
func fakeMonitor(t *testing.T, opts ...health.Option) (*health.Monitor, *healthtest.Clock) {
	t.Helper()
	clk := healthtest.NewClock(time.Time{})
	opts = append([]health.Option{health.WithClock(clk), health.WithJitter(0),
		health.WithLogger(slog.New(slog.DiscardHandler))}, opts...)
	return health.New(opts...), clk
}

// start starts m until the test ends and waits for its workers to stop then.
func start(tb testing.TB, m *health.Monitor) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	m.Start(ctx)
	tb.Cleanup(func() {
		cancel()
		select {
		case <-m.Done():
		case <-time.After(settle):
			tb.Errorf("monitor workers did not stop within %v of the context ending", settle)
		}
	})
}

// waitFor polls cond until it holds, failing after settle. It sleeps between
// looks, leaving the CPUs to the goroutines it waits for.
func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(settle)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("%s: not within %v", what, settle)
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// stuckChecker is a checker that ignores its context and stays inside until
// the test ends; it tracks the most runs ever inside at once.
func stuckChecker(t *testing.T) (c health.Checker, mostAtOnce func() int32) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	var inside, most atomic.Int32
	c = health.CheckerFunc(func(context.Context) error {
		n := inside.Add(1)
		defer inside.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-release
		return nil
	})
	return c, most.Load
}

// switchable is a checker whose answer the test sets; it counts its runs.
type switchable struct {
	err  atomic.Pointer[error]
	runs atomic.Int64
}

func passing() *switchable { return &switchable{} }

func failing(msg string) *switchable {
	s := &switchable{}
	s.fail(msg)
	return s
}

func (s *switchable) Check(context.Context) error {
	s.runs.Add(1)
	if p := s.err.Load(); p != nil {
		return *p
	}
	return nil
}

func (s *switchable) pass() { s.err.Store(nil) }

func (s *switchable) fail(msg string) {
	err := errors.New(msg)
	s.err.Store(&err)
}

// waitRuns waits until the check has recorded n results and returns its state.
func waitRuns(t *testing.T, m *health.Monitor, name string, n int) health.CheckState {
	t.Helper()
	var st health.CheckState
	waitFor(t, fmt.Sprintf("check %q to record %d results", name, n), func() bool {
		var ok bool
		if st, ok = m.CheckState(name); !ok {
			t.Fatalf("no check %q", name)
		}
		return st.Runs >= n
	})
	return st
}

// waitEvent waits for the next event after *cursor and moves the cursor on.
func waitEvent(t *testing.T, m *health.Monitor, cursor *uint64) health.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), settle)
	defer cancel()
	evs, err := m.WaitEvents(ctx, *cursor)
	if err != nil {
		t.Fatalf("no event after id %d within %v", *cursor, settle)
	}
	*cursor = evs[0].ID
	return evs[0]
}

// advance moves the clock once the monitor's workers have set at least
// sleepers timers, so that time never passes under a worker still running.
func advance(t *testing.T, clk *healthtest.Clock, sleepers int, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), settle)
	defer cancel()
	if err := clk.WaitPending(ctx, sleepers); err != nil {
		t.Fatalf("only %d timers pending, want %d, within %v", clk.Pending(), sleepers, settle)
	}
	clk.Advance(d)
}

// waitResultAt waits until the check has a result from at or after at and
// returns the latest. Unlike waitRuns it does not depend on how many
// judgements a heartbeat or watchdog made on its way there.
func waitResultAt(t *testing.T, m *health.Monitor, name string, at time.Time) health.Result {
	t.Helper()
	var r health.Result
	waitFor(t, fmt.Sprintf("check %q to have a result from %v", name, at), func() bool {
		st, _ := m.CheckState(name)
		var ok bool
		r, ok = st.Last()
		return ok && !r.Time.Before(at)
	})
	return r
}

// waitCheckEvent waits for the next change of a check's status, passing over
// level and membership events, and moves the cursor on.
func waitCheckEvent(t *testing.T, m *health.Monitor, cursor *uint64) health.Event {
	t.Helper()
	for {
		if ev := waitEvent(t, m, cursor); ev.Type.Transition() {
			return ev
		}
	}
}
