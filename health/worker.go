package health

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime/debug"
	"time"
)

// runChecker is the whole life of one check, in one loop (the kubelet's worker
// is the model): wait for the initial delay, wait for startup to pass, run,
// record, and again every period, until ctx ends. A startup check stops once it
// passes. added is when the check began to count: Start, or Add after Start.
func (m *Monitor) runChecker(ctx context.Context, e *entry, added time.Time) {
	c := e.check
	due := added.Add(c.InitialDelay)
	var overrun <-chan outcome // the last run that outlived its timeout: it yields once it returns
	for {
		if !m.sleepUntil(ctx, due, nil) {
			return
		}
		if c.Level != Startup && !fired(m.startupGate) {
			// Gated: run as soon as startup passes, then every period from then.
			select {
			case <-m.startupGate:
				due = m.clock.Now()
			case <-ctx.Done():
				return
			}
		}
		var r Result
		if overrun != nil && !fired(overrun) {
			r = Result{Time: m.clock.Now(), Output: fmt.Sprintf(
				"the previous run has not returned (timeout %v): its checker ignores its context", c.Timeout)}
		} else {
			r, overrun = m.runOnce(ctx, e)
		}
		if ctx.Err() != nil {
			return // a run cut short by shutdown or removal says nothing about the check
		}
		if m.record(e, r) == Pass && c.Level == Startup {
			return // latched: startup checks stop once passed
		}
		due = m.nextDue(due, c.Period)
	}
}

// fired reports whether ch is closed or yields a value now, without waiting.
func fired[T any](ch <-chan T) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// outcome is what a checker returned.
type outcome struct {
	err error
	obs Observation
	end time.Time
}

// runOnce runs the checker once with the check's timeout. It returns when the
// checker does or when the timeout passes, whichever is first; in the second
// case the run is recorded as failed and the returned channel yields when the
// checker finally returns, so that no second run is started meanwhile.
func (m *Monitor) runOnce(ctx context.Context, e *entry) (Result, <-chan outcome) {
	c := e.check
	start := m.clock.Now()
	runCtx, cancel := m.clock.WithTimeout(ctx, c.Timeout)
	defer cancel()
	done := make(chan outcome, 1) // buffered: a run that returns late never blocks
	go func() { done <- m.call(runCtx, c) }()
	select {
	case o := <-done:
		return result(start, o, runCtx, c.Timeout), nil
	case <-runCtx.Done():
		select {
		case o := <-done: // returned at the deadline: take its own answer
			return result(start, o, runCtx, c.Timeout), nil
		default:
		}
		return Result{Time: start, Duration: c.Timeout, Output: timedOut(c.Timeout)}, done
	}
}

func timedOut(d time.Duration) string { return fmt.Sprintf("timed out after %v", d) }

// call runs the checker, turning a panic into a failed run.
func (m *Monitor) call(ctx context.Context, c Check) (o outcome) {
	defer func() {
		if p := recover(); p != nil {
			o = outcome{err: fmt.Errorf("panic: %v", p), end: m.clock.Now()}
			if m.logger.Enabled(ctx, slog.LevelError) { // a stack is dear; build it only to log it
				m.logger.Error("check panicked", "check", c.Name, "panic", p, "stack", string(debug.Stack()))
			}
		}
	}()
	if ms, ok := c.Checker.(Measurer); ok {
		obs, err := ms.Measure(ctx)
		return outcome{err: err, obs: obs, end: m.clock.Now()}
	}
	return outcome{err: c.Checker.Check(ctx), end: m.clock.Now()}
}

func result(start time.Time, o outcome, runCtx context.Context, timeout time.Duration) Result {
	r := Result{Time: start, Duration: o.end.Sub(start), OK: o.err == nil,
		ObservedValue: o.obs.Value, ObservedUnit: o.obs.Unit}
	switch {
	case o.err == nil:
		r.Output = o.obs.Message
	case errors.Is(runCtx.Err(), context.DeadlineExceeded) && o.err.Error() == context.DeadlineExceeded.Error():
		r.Output = timedOut(timeout) // the checker handed back its context's bare error
	default:
		r.Output = o.err.Error()
	}
	return r
}

// sleepUntil waits until the clock reaches due, wake yields, or ctx ends; it
// reports false for the last.
func (m *Monitor) sleepUntil(ctx context.Context, due time.Time, wake <-chan struct{}) bool {
	d := due.Sub(m.clock.Now())
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := m.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-wake:
		return true
	case <-ctx.Done():
		return false
	}
}

// nextDue is one period after due, spread by the jitter, and never in the past:
// runs missed while the process was stopped are skipped, not made up in a burst.
func (m *Monitor) nextDue(due time.Time, period time.Duration) time.Time {
	step := period
	if m.jitter > 0 {
		spread := time.Duration(m.jitter * float64(period))
		step += time.Duration(rand.Int64N(int64(spread)+1)) - spread/2
	}
	next := due.Add(step)
	if now := m.clock.Now(); next.Before(now) {
		next = next.Add(now.Sub(next).Truncate(period) + period)
	}
	return next
}

// timedCheck is a check judged from timestamps instead of by running anything:
// a heartbeat or a watchdog. Its answer changes at known deadlines (a ttl or a
// limit passing) or when the program signals (a beat, a unit of work ending),
// so its worker sleeps until exactly then and the probe answers at that moment,
// not up to a period later.
type timedCheck interface {
	// activate is called once, when the check starts to count (after startup
	// for live and ready checks).
	activate(now time.Time)
	// evaluate judges the check at now; decided is false while it is pending.
	evaluate(now time.Time) (r Result, decided bool)
	// deadline is the next moment after now at which evaluate's answer changes
	// with time alone; zero when none.
	deadline(now time.Time) time.Time
	// wake yields when the answer may have changed for another reason.
	wake() <-chan struct{}
}

// runTimed is the loop of a heartbeat or watchdog: judge it now, then again at
// its deadline, on a wake, or every period (which refreshes the output of a
// failing check, such as how long the oldest unit of work has run).
func (m *Monitor) runTimed(ctx context.Context, e *entry) {
	c, t := e.check, e.timed
	if c.Level != Startup {
		select {
		case <-m.startupGate:
		case <-ctx.Done():
			return
		}
	}
	now := m.clock.Now()
	t.activate(now)
	due := now
	status := Pending
	for {
		select {
		case <-t.wake(): // this judgement covers whatever the signal was for
		default:
		}
		now = m.clock.Now()
		periodic := !due.After(now)
		// A judgement is a result when the period is due or the status changes:
		// a wake that changes nothing (a unit of work begun on an idle
		// watchdog) leaves no trace in the history.
		if r, decided := t.evaluate(now); decided && (periodic || r.OK != (status == Pass)) {
			if status = m.record(e, r); status == Pass && c.Level == Startup {
				return
			}
		}
		if periodic {
			due = m.nextDue(due, c.Period)
		}
		next := due
		if d := t.deadline(now); !d.IsZero() && d.Before(next) {
			next = d
		}
		if !m.sleepUntil(ctx, next, t.wake()) {
			return
		}
	}
}
