package health

import (
	"fmt"
	"sync"
	"time"
)

// Watchdog is a check that fails while any unit of work has run longer than a
// limit: the hung-reconciler detector. Wrap each unit (a Reconcile call, a job,
// a request to a dependency) in Begin and its done:
//
//	done := wd.Begin()
//	defer done()
//
// An idle watchdog passes, so a controller with nothing to do stays live. It
// fails the moment the oldest unfinished unit reaches the limit, with an output
// that says how long it has run, and recovers the moment that unit finishes.
// Units may overlap; each is timed on its own.
type Watchdog struct {
	clock Clock
	limit time.Duration
	woken chan struct{}

	mu      sync.Mutex
	oldest  *unit // running units, oldest first
	newest  *unit
	running int
	failing bool // the last judgement; done wakes the worker only then
}

type unit struct {
	start      time.Time
	prev, next *unit
	finished   bool
}

// Watchdog adds a watchdog check. limit must be positive: make it longer than
// the slowest healthy unit of work, since exceeding it is taken for a hang.
// It fails the moment a unit reaches the limit (its failure threshold is
// EventFailureThreshold, 1). opts may give it a StableFor.
func (m *Monitor) Watchdog(name string, limit time.Duration, level Level, opts ...TimedOption) (*Watchdog, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("watchdog %q: limit %v is not positive: %w", name, limit, ErrInvalidCheck)
	}
	if level == Startup {
		// An idle watchdog passes, so at startup it would latch before any work.
		return nil, fmt.Errorf("watchdog %q: a watchdog cannot be a startup check, since it passes while idle: %w", name, ErrInvalidCheck)
	}
	w := &Watchdog{clock: m.clock, limit: limit, woken: make(chan struct{}, 1)}
	if err := m.addTimed(name, level, w, "watchdog", opts); err != nil {
		return nil, err
	}
	return w, nil
}

// Begin marks the start of a unit of work and returns the function that marks
// its end. Calling done more than once is harmless.
func (w *Watchdog) Begin() (done func()) {
	u := &unit{}
	w.mu.Lock()
	u.start = w.clock.Now() // read under the lock, so the list stays in start order
	if w.newest == nil {
		w.oldest = u
	} else {
		w.newest.next, u.prev = u, w.newest
	}
	w.newest = u
	w.running++
	first := w.running == 1
	w.mu.Unlock()
	if first {
		notify(w.woken) // a new deadline, sooner than none
	}
	return func() { w.finish(u) }
}

func (w *Watchdog) finish(u *unit) {
	w.mu.Lock()
	if u.finished {
		w.mu.Unlock()
		return
	}
	u.finished = true
	if u.prev == nil {
		w.oldest = u.next
	} else {
		u.prev.next = u.next
	}
	if u.next == nil {
		w.newest = u.prev
	} else {
		u.next.prev = u.prev
	}
	w.running--
	failing := w.failing
	w.mu.Unlock()
	if failing {
		notify(w.woken)
	}
}

// Running returns how many units of work have begun and not finished.
func (w *Watchdog) Running() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.running
}

func (w *Watchdog) activate(time.Time) {}

// reset keeps the units of work under way: they belong to the program, which
// goes on across a Reset, and one that hangs still hangs.
func (w *Watchdog) reset() {}

func (w *Watchdog) wake() <-chan struct{} { return w.woken }

func (w *Watchdog) evaluate(now time.Time) (Result, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := Result{Time: now, OK: true, ObservedValue: w.running, ObservedUnit: "units"}
	if w.oldest == nil {
		w.failing = false
		return r, true
	}
	age := now.Sub(w.oldest.start)
	if age < w.limit {
		w.failing = false
		return r, true
	}
	over := 0
	for u := w.oldest; u != nil && now.Sub(u.start) >= w.limit; u = u.next {
		over++
	}
	r.OK = false
	r.Output = fmt.Sprintf("%d of %d units of work have run longer than %v; the oldest began %v ago",
		over, w.running, w.limit, age.Round(time.Millisecond))
	w.failing = true
	return r, true
}

func (w *Watchdog) deadline(now time.Time) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.oldest == nil {
		return time.Time{}
	}
	if d := w.oldest.start.Add(w.limit); d.After(now) {
		return d
	}
	return time.Time{}
}
