package health

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"
)

// Heartbeat is a check fed by the program itself: a loop calls Beat on every
// pass, idle ones included, and the check fails once ttl passes without a beat.
// It catches what a constant "return nil" liveness check cannot: a loop that
// hangs.
//
// It is pending until the first beat, but for at most ttl after it starts to
// count (at Start, or once startup passes for a live or ready heartbeat): a
// loop that hangs before its first beat is hung too. It passes while the last
// beat is younger than ttl and fails the moment it is not.
type Heartbeat struct {
	clock Clock
	ttl   time.Duration
	base  time.Time    // beats are kept as nanoseconds since base, on the monotonic clock
	last  atomic.Int64 // the last beat, or never
	// failing is true unless the check last judged itself passing; Beat wakes
	// the worker only then, so that a beat on the happy path is two atomics.
	failing atomic.Bool
	woken   chan struct{}
	// start is when the check started to count, as nanoseconds since base;
	// never until then, and again after a Reset.
	start atomic.Int64
}

const never = math.MinInt64

// Heartbeat adds a heartbeat check. ttl must be positive. The check is judged
// again every default period, which refreshes how long ago the last beat was.
// It fails the moment the ttl passes (its failure threshold is
// EventFailureThreshold, 1). opts may give it a StableFor.
func (m *Monitor) Heartbeat(name string, ttl time.Duration, level Level, opts ...TimedOption) (*Heartbeat, error) {
	if ttl <= 0 {
		return nil, fmt.Errorf("heartbeat %q: ttl %v is not positive: %w", name, ttl, ErrInvalidCheck)
	}
	h := &Heartbeat{clock: m.clock, ttl: ttl, base: m.clock.Now(), woken: make(chan struct{}, 1)}
	h.last.Store(never)
	h.start.Store(never)
	h.failing.Store(true)
	if err := m.addTimed(name, level, h, "heartbeat", opts); err != nil {
		return nil, err
	}
	return h, nil
}

// Beat records that the program is making progress. It is cheap and safe to
// call from any goroutine, as often as you like.
func (h *Heartbeat) Beat() {
	h.last.Store(int64(h.clock.Now().Sub(h.base)))
	if h.failing.Load() {
		notify(h.woken)
	}
}

func (h *Heartbeat) activate(now time.Time) { h.start.Store(int64(now.Sub(h.base))) }

// reset forgets the last beat: after a Reset (the workload restarted), the
// check waits for a beat of the new instance, for at most ttl once it counts.
func (h *Heartbeat) reset() {
	h.last.Store(never)
	h.start.Store(never)
	h.failing.Store(true)
}

func (h *Heartbeat) wake() <-chan struct{} { return h.woken }

func (h *Heartbeat) evaluate(now time.Time) (Result, bool) {
	last := h.last.Load()
	r, decided := h.judge(now, last)
	if !r.OK {
		// Store first, then look again: a Beat either sees failing and wakes the
		// worker, or stored its beat before this second load.
		h.failing.Store(true)
		if again := h.last.Load(); again != last {
			r, decided = h.judge(now, again)
		}
	}
	h.failing.Store(!r.OK)
	return r, decided
}

func (h *Heartbeat) judge(now time.Time, last int64) (Result, bool) {
	r := Result{Time: now, ObservedUnit: "s"}
	start := h.start.Load()
	if last == never && start == never {
		return r, false // not counting yet: waiting for Start, or for startup
	}
	if last == never {
		waited := now.Sub(h.base.Add(time.Duration(start)))
		if waited < h.ttl {
			return r, false
		}
		r.Output = fmt.Sprintf("no beat since the check started %v ago (ttl %v)", waited.Round(time.Millisecond), h.ttl)
		return r, true
	}
	age := now.Sub(h.base.Add(time.Duration(last)))
	r.ObservedValue = age.Seconds()
	if age < h.ttl {
		r.OK = true
		return r, true
	}
	r.Output = fmt.Sprintf("no beat for %v (ttl %v)", age.Round(time.Millisecond), h.ttl)
	return r, true
}

func (h *Heartbeat) deadline(now time.Time) time.Time {
	var d time.Time
	if start := h.start.Load(); start != never {
		d = h.base.Add(time.Duration(start) + h.ttl)
	}
	if last := h.last.Load(); last != never {
		d = h.base.Add(time.Duration(last) + h.ttl)
	}
	if d.After(now) {
		return d
	}
	return time.Time{} // already past: only a beat changes the answer now
}
