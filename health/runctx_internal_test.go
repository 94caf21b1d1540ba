package health

import (
	"context"
	"log/slog"
	"testing"
	"time"
)

// The interleaving: A's run outlives deadline and grace; graceThenAbandon
// has abandoned it but not yet unwatched A (it waits for Monitor.mu); A's
// checker returns, its worker takes B's run with the same runContext and
// watches it; then A is stopped. stop reads A's stale place.running and the
// rc's current run id: it ends B's run.
// Stopping a check whose run was given up ends nothing of the run its
// worker's context has gone on to, another check's.
func TestStoppingACheckWhoseRunWasGivenUpLeavesAnotherChecksRun(t *testing.T) {
	m := New(WithLogger(slog.New(slog.DiscardHandler)))
	ok := func(context.Context) error { return nil }
	m.Add(Check{Name: "a", Level: Ready, Period: time.Hour, Checker: CheckerFunc(ok)})
	m.Add(Check{Name: "b", Level: Ready, Period: time.Hour, Checker: CheckerFunc(ok)})
	a, b := m.byName["a"], m.byName["b"]
	m.values = context.Background()
	s := m.sched
	gate := make(chan struct{})
	close(gate)
	now := time.Now()
	s.base = now
	s.start(a, 0, gate, now.Add(time.Hour))
	s.start(b, 0, gate, now.Add(time.Hour))
	rc := &runContext{values: context.Background()}

	a.runMu.Lock()
	idA := rc.arm(now, now.Add(50*time.Millisecond), a.place.schedule)
	s.watch(a, a.place.life, rc, idA, now.Add(50*time.Millisecond))
	rc.end(idA, context.DeadlineExceeded) // the loop, at A's deadline
	late := make(chan outcome, 1)
	rc.abandon(idA, late)                     // graceThenAbandon, before it takes m.mu
	m.returned(a, rc, idA, outcome{end: now}) // A's checker returns: the worker moves on

	b.runMu.Lock()
	m.workers.Add(1) // B's job
	idB := rc.arm(now, now.Add(time.Hour), b.place.schedule)
	if !s.watch(b, b.place.life, rc, idB, now.Add(time.Hour)) {
		t.Fatal("watch b")
	}
	m.mu.Lock()
	m.stopWorkerLocked(a) // StopCheck("a"), Remove, Reset or shutdown
	m.mu.Unlock()
	if err := rc.Err(); err != nil {
		t.Errorf("stopping check a ended check b's run %d: %v", idB, err)
	}
	time.Sleep(50 * time.Millisecond) // the grace of the stray graceThenAbandon(a, rc, idB)
	m.returned(b, rc, idB, outcome{end: time.Now()})
	if b.runMu.TryLock() {
		b.runMu.Unlock()
	} else {
		t.Errorf("check b's runMu is held for good")
	}
	s.mu.Lock()
	t.Logf("b: life %d, queued index %d; m.inflight has %v", b.place.life, b.place.index, func() []string {
		var n []string
		for k := range m.inflight {
			n = append(n, k)
		}
		return n
	}())
	s.mu.Unlock()
}
