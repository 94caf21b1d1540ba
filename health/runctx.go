package health

import (
	"context"
	"sync"
	"time"
)

// runContext is the context of a scheduled run. Each worker has one, armed
// again for every run it takes, so that a run allocates nothing:
// context.WithTimeout would make a context, a timer and, once its Done is
// asked for, a channel. The scheduler ends it at its deadline, the Monitor
// when the check stops, and the worker when the run returns.
//
// A run that asked for its Done channel or registered an AfterFunc (a
// derived context, as net/http's transport makes) handed its context to
// something that may watch it after the run: its worker takes a new one for
// its next run (handedOut), so that what watches it sees it ended, for good,
// as a context.WithTimeout would be. Runs of checkers that only read their
// deadline (most quick checks) share one.
type runContext struct {
	mu       sync.Mutex
	values   context.Context // the Monitor's Start context, without its cancellation: Value reads it; set once
	deadline time.Time
	done     chan struct{} // made when first asked for, and kept for the next run until it is closed
	err      error
	after    []afterFunc // AfterFunc's functions, called when the run ends
	seq      uint64      // numbers AfterFunc's functions, so that a stop from an earlier run removes nothing

	// the run under way
	id        uint64         // counts the runs, so that a late timer cannot end a later one
	start     time.Time      // when it started
	sched     schedule       // the schedule it runs under, for whoever finishes it
	state     runState       // running, returned or abandoned
	late      chan<- outcome // set when it is abandoned: where its outcome goes once it returns
	cancelled bool           // ended because the check stopped, not by its deadline
	handed    bool           // Done or AfterFunc was called: it is not armed again
}

type runState uint8

const (
	runReturned  runState = iota // no run under way
	runRunning                   // the checker has not returned
	runAbandoned                 // the checker outlived its deadline and grace: its result was given for it
)

type afterFunc struct {
	id uint64
	f  func()
}

// closedDone is the Done channel of a run that ended before Done was asked
// for.
var closedDone = func() chan struct{} { ch := make(chan struct{}); close(ch); return ch }()

var _ context.Context = (*runContext)(nil)

func (c *runContext) Deadline() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.deadline, true
}

func (c *runContext) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.handed = true
	if c.done == nil {
		if c.err != nil {
			return closedDone
		}
		c.done = make(chan struct{})
	}
	return c.done
}

func (c *runContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *runContext) Value(key any) any {
	if key == (timeoutKey{}) {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.deadline.Sub(c.start)
	}
	return c.values.Value(key)
}

// AfterFunc calls f in its own goroutine once the run ends. A context that
// has it is one that context.WithCancel and WithTimeout derive from without
// starting a goroutine to watch it (as net/http's transport does for every
// request).
func (c *runContext) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.handed = true
	if c.err != nil {
		go f()
		return func() bool { return false }
	}
	c.seq++
	id := c.seq
	c.after = append(c.after, afterFunc{id, f})
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, a := range c.after {
			if a.id == id {
				c.after = append(c.after[:i], c.after[i+1:]...)
				return true
			}
		}
		return false
	}
}

// arm makes the context that of a new run, due to end at deadline, and
// returns the run's id.
func (c *runContext) arm(start, deadline time.Time, s schedule) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deadline, c.start, c.sched = deadline, start, s
	if c.err != nil {
		c.err, c.done = nil, nil // its channel is closed: the next Done makes a new one
	}
	clear(c.after)
	c.after = c.after[:0]
	c.id++
	c.state, c.late, c.cancelled = runRunning, nil, false
	return c.id
}

// end ends run id with err, unless it has ended already; it reports whether
// it did.
func (c *runContext) end(id uint64, err error) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.id != id || c.state != runRunning || c.err != nil {
		return false
	}
	c.cancelled = err == context.Canceled
	c.closeLocked(err)
	return true
}

// release ends run id, which has returned, if nothing ended it: the
// functions of AfterFunc run, and Done is closed, as a cancel of
// context.WithTimeout does once its run is over, so that what a checker
// left waiting on its context (an HTTP response it did not close) is let go.
func (c *runContext) release(id uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.id != id || c.err != nil {
		return
	}
	c.closeLocked(context.Canceled)
}

// closeLocked ends the context with err: Done is closed and the functions
// of AfterFunc run.
func (c *runContext) closeLocked(err error) {
	c.err = err
	if c.done == nil {
		c.done = closedDone
	} else {
		close(c.done)
	}
	for _, a := range c.after {
		go a.f()
	}
	clear(c.after)
	c.after = c.after[:0]
}

// returned is the checker of run id returning with o: it reports true when
// the run is its caller's to finish, false when it was abandoned (its
// outcome then goes to whoever waits for the late run).
func (c *runContext) returned(id uint64, o outcome) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.id == id && c.state == runRunning {
		c.state = runReturned
		return true
	}
	if c.late != nil {
		c.late <- o // buffered, and sent to once
	}
	return false
}

// abandon gives run id up, if it has not returned: its outcome will go to
// late. It returns the run's start and schedule, and whether the check
// stopped it (rather than its deadline), for whoever finishes it instead.
func (c *runContext) abandon(id uint64, late chan<- outcome) (start time.Time, s schedule, cancelled, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.id != id || c.state != runRunning {
		return time.Time{}, schedule{}, false, false
	}
	c.state, c.late = runAbandoned, late
	return c.start, c.sched, c.cancelled, true
}

// handedOut reports whether the run handed the context to something that
// may watch it after the run (Done, AfterFunc): then it is not armed again.
func (c *runContext) handedOut() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.handed
}

// running is the id of the run under way, and whether one is.
func (c *runContext) running() (uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.id, c.state == runRunning
}
