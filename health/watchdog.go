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
// A unit that begins and ends in calls that share no closure (two requests
// to an API, two commands of a script) takes an id instead: BeginID, then
// End(id).
//
// An idle watchdog passes, so a controller with nothing to do stays live. It
// fails the moment the oldest unfinished unit reaches the limit, with an output
// that says how long it has run, and recovers the moment that unit finishes.
// Units may overlap; each is timed on its own. A unit never expires: one
// that hangs keeps the check failing until it ends (or, with
// EndUnitsOnReset, until a Reset).
type Watchdog struct {
	name       string
	clock      Clock
	limit      time.Duration
	woken      chan struct{}
	endOnReset bool // EndUnitsOnReset

	mu      sync.Mutex
	oldest  *unit // running units, oldest first
	newest  *unit
	running int
	failing bool             // the last judgement; done wakes the worker only then
	lastID  uint64           // the last id BeginID gave; ids are never given twice
	byID    map[uint64]*unit // the running units begun with BeginID
}

type unit struct {
	start      time.Time
	prev, next *unit
	finished   bool
	id         uint64 // 0 for a unit begun with Begin
}

// MaxUnitIDs is how many units of work begun with BeginID may run at once
// on one watchdog: far more than a workload runs at once, and a bound on
// what a client that never ends its units costs (about 100 bytes a unit).
// Units begun with Begin are not counted: a program ends its own.
const MaxUnitIDs = 1000

// Watchdog adds a watchdog check. limit must be positive: make it longer than
// the slowest healthy unit of work, since exceeding it is taken for a hang.
// It fails the moment a unit reaches the limit (its failure threshold is
// EventFailureThreshold, 1). opts may give it a StableFor, and
// EndUnitsOnReset.
func (m *Monitor) Watchdog(name string, limit time.Duration, level Level, opts ...TimedOption) (*Watchdog, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("watchdog %q: limit %v is not positive: %w", name, limit, ErrInvalidCheck)
	}
	if level == Startup {
		// An idle watchdog passes, so at startup it would latch before any work.
		return nil, fmt.Errorf("watchdog %q: a watchdog cannot be a startup check, since it passes while idle: %w", name, ErrInvalidCheck)
	}
	o := timedOpts(opts)
	w := &Watchdog{name: name, clock: m.clock, limit: limit, woken: make(chan struct{}, 1), endOnReset: o.endUnitsOnReset,
		byID: map[uint64]*unit{}}
	if err := m.addTimed(name, level, w, "watchdog", o); err != nil {
		return nil, err
	}
	return w, nil
}

// Begin marks the start of a unit of work and returns the function that marks
// its end. Calling done more than once is harmless.
func (w *Watchdog) Begin() (done func()) {
	u, _ := w.begin(false) // only a unit begun by id can be refused
	return func() { w.finish(u) }
}

// BeginID marks the start of a unit of work, as Begin does, and returns its
// id, which End takes to mark its end. Ids count up from 1 and are never
// given twice by one watchdog, so the id of a unit that ended (or that a
// Reset ended) ends no other. It fails, wrapping ErrTooManyUnits, while
// MaxUnitIDs units begun by id are running.
func (w *Watchdog) BeginID() (uint64, error) {
	u, err := w.begin(true)
	if err != nil {
		return 0, err
	}
	return u.id, nil
}

// End marks the end of the unit of work that BeginID gave id to. It reports
// false when no such unit is running: it has ended already, a Reset ended
// it (EndUnitsOnReset), or no unit had that id.
func (w *Watchdog) End(id uint64) bool {
	w.mu.Lock()
	u := w.byID[id]
	w.mu.Unlock()
	return u != nil && w.finish(u)
}

func (w *Watchdog) begin(byID bool) (*unit, error) {
	w.mu.Lock()
	if byID && len(w.byID) >= MaxUnitIDs {
		w.mu.Unlock()
		return nil, fmt.Errorf("watchdog %q: %d units of work begun by id are running, the most it keeps: %w", w.name, MaxUnitIDs, ErrTooManyUnits)
	}
	u := &unit{start: w.clock.Now()} // read under the lock, so the list stays in start order
	if w.newest == nil {
		w.oldest = u
	} else {
		w.newest.next, u.prev = u, w.newest
	}
	w.newest = u
	w.running++
	if byID {
		w.lastID++
		u.id = w.lastID
		w.byID[u.id] = u
	}
	first := w.running == 1
	w.mu.Unlock()
	if first {
		notify(w.woken) // a new deadline, sooner than none
	}
	return u, nil
}

// finish ends u; false when it had ended already.
func (w *Watchdog) finish(u *unit) bool {
	w.mu.Lock()
	if u.finished {
		w.mu.Unlock()
		return false
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
	delete(w.byID, u.id)
	failing := w.failing
	w.mu.Unlock()
	if failing {
		notify(w.woken)
	}
	return true
}

// Running returns how many units of work have begun and not finished.
func (w *Watchdog) Running() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.running
}

func (w *Watchdog) activate(time.Time) {}

// reset keeps the units of work under way: they belong to the program, which
// goes on across a Reset, and one that hangs still hangs. With
// EndUnitsOnReset they belong to the instance that the Reset starts over,
// and end with it.
func (w *Watchdog) reset() {
	if !w.endOnReset {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for u := w.oldest; u != nil; u = u.next {
		u.finished = true
	}
	w.oldest, w.newest, w.running, w.failing = nil, nil, 0, false
	clear(w.byID)
}

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
	oldest := "the oldest"
	if w.oldest.id != 0 {
		oldest = fmt.Sprintf("the oldest, unit %d,", w.oldest.id)
	}
	r.OK = false
	r.Output = fmt.Sprintf("%d of %d units of work have run longer than %v; %s began %v ago",
		over, w.running, w.limit, oldest, age.Round(time.Millisecond))
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
