// Package healthtest has what tests of code built on package health need: a
// fake clock, so that schedules, timeouts, heartbeat ttls and watchdog limits
// are tested by moving time by hand rather than by waiting.
//
//	clk := healthtest.NewClock(time.Time{})
//	m := health.New(health.WithClock(clk), health.WithJitter(0))
//	...
//	clk.Advance(10 * time.Second) // fires every timer due by then, in order
//
// Advance fires timers; it does not wait for the goroutines they wake. A test
// waits for what it expects (a result, an event), and moves time by at most
// one period at a time, after WaitPending says the goroutines it drives have
// gone back to sleep.
package healthtest

import (
	"container/heap"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/vitals-dev/vitals/health"
)

// Clock is a fake health.Clock. Time moves only by Advance. Safe for
// concurrent use.
type Clock struct {
	mu      sync.Mutex
	now     time.Time
	timers  timerHeap // pending, soonest first
	seq     uint64    // orders timers due at the same moment by creation
	changed chan struct{}
}

var _ health.Clock = (*Clock)(nil)

// Epoch is where a Clock made from the zero time starts. Read it; do not
// change it.
var Epoch = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// NewClock returns a fake clock reading start, or Epoch for the zero time.
func NewClock(start time.Time) *Clock {
	if start.IsZero() {
		start = Epoch
	}
	return &Clock{now: start, changed: make(chan struct{})}
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// NewTimer returns a timer that fires when Advance reaches now+d; d <= 0 fires
// at once.
func (c *Clock) NewTimer(d time.Duration) health.Timer {
	t := &timer{clock: c, ch: make(chan time.Time, 1), index: -1}
	c.schedule(t, d)
	return t
}

// NewTimerAt returns a timer that fires when Advance reaches at, or at once
// when the clock is there already (health.TimerAt).
func (c *Clock) NewTimerAt(at time.Time) health.Timer {
	t := &timer{clock: c, ch: make(chan time.Time, 1), index: -1}
	c.mu.Lock()
	c.scheduleLocked(t, at)
	return t
}

// AfterFunc calls f in its own goroutine when Advance reaches now+d.
func (c *Clock) AfterFunc(d time.Duration, f func()) health.Timer {
	t := &timer{clock: c, f: f, index: -1}
	c.schedule(t, d)
	return t
}

func (c *Clock) schedule(t *timer, d time.Duration) {
	c.mu.Lock()
	c.scheduleLocked(t, c.now.Add(d))
}

// scheduleLocked sets t to fire at at, and unlocks the clock.
func (c *Clock) scheduleLocked(t *timer, at time.Time) {
	t.at = at
	if !at.After(c.now) {
		now := c.now
		c.mu.Unlock()
		t.fire(now)
		return
	}
	c.seq++
	t.seq = c.seq
	heap.Push(&c.timers, t)
	c.notifyLocked()
	c.mu.Unlock()
}

// WithTimeout returns a context that ends with context.DeadlineExceeded when
// Advance reaches now+d, or when parent ends. Its Deadline is in the fake
// clock's time, which means nothing to real network calls: give a checker
// that dials this context only where it also honours Done.
func (c *Clock) WithTimeout(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	ctx := &timeoutContext{Context: parent, deadline: c.Now().Add(d), done: make(chan struct{})}
	t := c.AfterFunc(d, func() { ctx.end(context.DeadlineExceeded) })
	stopParent := context.AfterFunc(parent, func() {
		t.Stop()
		ctx.end(parent.Err())
	})
	return ctx, func() {
		stopParent()
		t.Stop()
		ctx.end(context.Canceled)
	}
}

// Advance moves the clock forward by d, firing every timer due by then in the
// order of their deadlines, each with the time it was due.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	for len(c.timers) > 0 && !c.timers[0].at.After(end) {
		t := heap.Pop(&c.timers).(*timer)
		c.now = t.at
		c.notifyLocked()
		c.mu.Unlock()
		t.fire(t.at)
		c.mu.Lock()
	}
	c.now = end
	c.notifyLocked()
	c.mu.Unlock()
}

// Pending returns how many timers wait to fire.
func (c *Clock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// Deadlines returns when the pending timers fire, soonest first. A test
// tells by them that the timers it waits for are the new ones, not those of
// goroutines on their way out.
func (c *Clock) Deadlines() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	at := make([]time.Time, len(c.timers))
	for i, t := range c.timers {
		at[i] = t.at
	}
	slices.SortFunc(at, time.Time.Compare)
	return at
}

// WaitPending blocks until at least n timers wait to fire, or ctx ends. A test
// uses it to know that the goroutines it drives have gone to sleep before it
// moves time. Every pending timer counts, a run's timeout among them.
func (c *Clock) WaitPending(ctx context.Context, n int) error {
	for {
		c.mu.Lock()
		pending, changed := len(c.timers), c.changed
		c.mu.Unlock()
		if pending >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (c *Clock) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

type timer struct {
	clock *Clock
	at    time.Time
	seq   uint64
	index int            // in the heap; -1 once fired or stopped
	ch    chan time.Time // for NewTimer
	f     func()         // for AfterFunc
}

func (t *timer) C() <-chan time.Time { return t.ch }

func (t *timer) Stop() bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.index < 0 {
		return false
	}
	heap.Remove(&c.timers, t.index)
	c.notifyLocked()
	return true
}

// timerHeap is a container/heap of pending timers ordered by deadline, then
// creation, so that Advance and Stop cost O(log n) with thousands of timers.
type timerHeap []*timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if c := h[i].at.Compare(h[j].at); c != 0 {
		return c < 0
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *timerHeap) Push(x any) {
	t := x.(*timer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	t.index = -1
	*h = old[:len(old)-1]
	return t
}

func (t *timer) fire(now time.Time) {
	if t.f != nil {
		go t.f()
		return
	}
	select {
	case t.ch <- now:
	default:
	}
}

type timeoutContext struct {
	context.Context // the parent, for Value
	deadline        time.Time
	done            chan struct{}
	mu              sync.Mutex
	err             error
}

func (c *timeoutContext) Deadline() (time.Time, bool) { return c.deadline, true }
func (c *timeoutContext) Done() <-chan struct{}       { return c.done }

func (c *timeoutContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *timeoutContext) end(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = err
		close(c.done)
	}
}
