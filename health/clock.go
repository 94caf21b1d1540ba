package health

import (
	"context"
	"time"
)

// Clock is the source of time for a Monitor: every schedule, timeout, heartbeat
// deadline and result timestamp is read from it. The default is the system clock;
// tests pass a fake (see package healthtest) so that timing logic runs without
// waiting and without flaking.
type Clock interface {
	Now() time.Time
	// NewTimer returns a timer that fires once after d; d <= 0 fires at once.
	NewTimer(d time.Duration) Timer
	// WithTimeout is context.WithTimeout measured on this clock: the context's
	// Err is context.DeadlineExceeded once d has passed.
	WithTimeout(parent context.Context, d time.Duration) (context.Context, context.CancelFunc)
}

// TimerAt is what a Clock may also do: a timer that fires at a given time.
// A fake clock that moves in jumps implements it, so that a worker that
// computes its next run just as time jumps still wakes at that run, not a
// jump later; on the system clock, NewTimer(until) is the same.
type TimerAt interface {
	NewTimerAt(at time.Time) Timer
}

// Timer is the part of *time.Timer a Monitor uses.
type Timer interface {
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it was still pending.
	Stop() bool
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) NewTimer(d time.Duration) Timer { return systemTimer{time.NewTimer(d)} }

func (systemClock) WithTimeout(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(parent, d)
}

type systemTimer struct{ t *time.Timer }

func (t systemTimer) C() <-chan time.Time { return t.t.C }
func (t systemTimer) Stop() bool          { return t.t.Stop() }
