package health

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime/debug"
	"strings"
	"time"
)

// worker is what a heartbeat's or watchdog's goroutine is given when it
// starts, under the Monitor's mutex.
type worker struct {
	gen     uint64        // the check's generation: its results count while it is current
	startup chan struct{} // closed when startup latches
}

// step is one wake of a check's life, the loop of the kubelet's worker cut at
// its sleeps: settle the check if its wait to be stable is over, wait for the
// run to be due and for startup to pass, run, record, and queue the next
// wake: at the next due time, spread by the jitter, or sooner to settle. The
// scheduler calls it on a worker at each wake; a run whose checker outlives
// its deadline and grace is finished by graceThenAbandon instead. sc.due
// starts as when the check began to count (Start, Add after Start, or Reset)
// plus its initial delay.
func (m *Monitor) step(e *entry, sc schedule, rc *runContext) {
	c := e.check
	if !m.sched.current(e, sc.life) || c.StableFor > 0 && stops(c.Level, m.settle(e, sc.gen).status) {
		m.workers.Done()
		return
	}
	now := m.clock.Now()
	if now.Before(sc.due) { // woken to settle the check, or to sleep until it is stable
		m.sched.next(e, sc)
		m.workers.Done()
		return
	}
	if c.Level != Startup && !fired(sc.startup) {
		// Parked until startup passes: then it runs at once, and every
		// period from then.
		m.sched.parkUntilStartup(e, sc)
		m.workers.Done()
		return
	}
	e.runMu.Lock() // behind RunNow, or the run of the life before, for a while
	now = m.clock.Now()
	if m.lateRun(c.Name) {
		m.finish(e, sc, stillRunning(now, c.Timeout), false)
		return
	}
	id := rc.arm(now, now.Add(c.Timeout), sc)
	if !m.sched.watch(e, sc.life, rc, id, now.Add(c.Timeout)) {
		// The check stopped while the step waited: nothing runs.
		rc.end(id, context.Canceled)
		m.returned(e, rc, id, outcome{err: context.Canceled, end: now})
		return
	}
	returned := false
	defer func() {
		if !returned { // the checker called runtime.Goexit, which ends this worker too
			m.returned(e, rc, id, outcome{err: errGoexit, end: m.clock.Now()})
		}
	}()
	o := call(rc, m.clock, m.logger, m.output, c.Name, c.Checker)
	returned = true
	m.returned(e, rc, id, o)
}

// returned finishes run id of e, whose checker returned o, unless it was
// abandoned: then o goes to whoever waits for the late run.
func (m *Monitor) returned(e *entry, rc *runContext, id uint64, o outcome) {
	if !rc.returned(id, o) {
		return
	}
	m.sched.unwatch(e, id)
	rc.mu.Lock()
	start, sc, cancelled := rc.start, rc.sched, rc.cancelled
	rc.mu.Unlock()
	r := result(start, o, rc, e.check.Timeout)
	rc.release(id) // as a cancel of context.WithTimeout would: what waits on it is let go
	m.finish(e, sc, r, cancelled)
}

// finish records a run's result, releases the check's runMu and queues its
// next wake, unless the run was cut short by its check stopping (which says
// nothing about the check) or the check stops here (a passed startup check).
func (m *Monitor) finish(e *entry, sc schedule, r Result, cancelled bool) {
	defer m.workers.Done()
	if cancelled || !m.sched.current(e, sc.life) {
		e.runMu.Unlock()
		return
	}
	status := m.record(e, r, sc.gen).status
	e.runMu.Unlock()
	if stops(e.check.Level, status) {
		return
	}
	sc.due = m.nextDue(sc.due, e.check.Period)
	m.sched.next(e, sc)
}

// graceThenAbandon gives run id of e, whose context has ended, timeoutGrace
// to return; if it has not by then, the run is given up: it is finished as
// timed out (or not recorded, when its check stopped) and kept in
// m.inflight until its checker returns, so that no run of the check overlaps
// it.
func (m *Monitor) graceThenAbandon(e *entry, rc *runContext, id uint64) {
	time.AfterFunc(timeoutGrace, func() {
		late := make(chan outcome, 1)
		start, sc, cancelled, ok := rc.abandon(id, late)
		if !ok {
			return // it returned in time
		}
		m.mu.Lock()
		m.inflight[e.check.Name] = late
		m.mu.Unlock()
		m.sched.unwatch(e, id)
		r := Result{Time: start, Duration: e.check.Timeout, Output: timedOut(e.check.Timeout)}
		m.finish(e, sc, r, cancelled)
	})
}

// lateRun reports whether a run of the check named name (even before a
// Remove) outlived its timeout and has not returned yet: then nothing runs,
// since two runs of one check never overlap.
func (m *Monitor) lateRun(name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	late, ok := m.inflight[name]
	if ok && fired(late) {
		delete(m.inflight, name)
		ok = false
	}
	return ok
}

// stillRunning is the result of a period in which the last run, which
// outlived its timeout, has still not returned.
func stillRunning(now time.Time, timeout time.Duration) Result {
	return Result{Time: now, Output: fmt.Sprintf(
		"the previous run has not returned (timeout %v): its checker ignores its context", timeout)}
}

// waitStartup waits for the startup level to latch (gate to close); false
// when ctx ends first.
func waitStartup(ctx context.Context, gate <-chan struct{}) bool {
	select {
	case <-gate:
		return true
	case <-ctx.Done():
		return false
	}
}

// outcome is what a checker returned.
type outcome struct {
	err error
	obs Observation
	end time.Time
}

var errGoexit = errors.New("the checker ended its goroutine (runtime.Goexit) without returning")

// runOnce runs the check once, unless a run of it (under this name, even before
// a Remove) outlived its timeout and has not returned yet: then it runs
// nothing and reports ran false, since two runs of one check never overlap. A
// run that outlives its timeout is kept in m.inflight until it returns.
func (m *Monitor) runOnce(ctx context.Context, e *entry) (r Result, ran bool) {
	c := e.check
	if m.lateRun(c.Name) {
		return Result{}, false
	}
	r, late := run(ctx, m.clock, m.logger, m.output, c.Name, c.Checker, c.Timeout)
	if late != nil {
		m.mu.Lock()
		m.inflight[c.Name] = late
		m.mu.Unlock()
	}
	return r, true
}

// Run runs a checker once, now, as a Monitor runs each check: under a context
// that ends after timeout, with a panic turned into a failed result and a
// Measurer's observation kept. It returns by the timeout (and a 20ms grace)
// even when the checker ignores its context; such a checker goes on in its
// goroutine until it returns. It is what a one-shot probe needs.
func Run(ctx context.Context, c Checker, timeout time.Duration) Result {
	r, _ := run(ctx, systemClock{}, slog.Default(), capOutput, "", c, timeout)
	return r
}

// run runs c once under timeout. late is nil unless the checker outlived its
// timeout; then it yields once the checker returns.
func run(ctx context.Context, clock Clock, logger *slog.Logger, redact func(string) string, name string, c Checker, timeout time.Duration) (r Result, late <-chan outcome) {
	start := clock.Now()
	runCtx, cancel := clock.WithTimeout(ctx, timeout)
	defer cancel()
	runCtx = context.WithValue(runCtx, timeoutKey{}, timeout)
	done := make(chan outcome, 1) // buffered: a run that returns late never blocks
	go func() {
		o := outcome{err: errGoexit}
		defer func() { done <- o }() // sent even when the checker calls runtime.Goexit
		o = call(runCtx, clock, logger, redact, name, c)
	}()
	select {
	case o := <-done:
		return result(start, o, runCtx, timeout), nil
	case <-runCtx.Done():
		grace := time.NewTimer(timeoutGrace)
		defer grace.Stop()
		select {
		case o := <-done: // returned as its context ended: take its own answer
			return result(start, o, runCtx, timeout), nil
		case <-grace.C:
		}
		if !errors.Is(runCtx.Err(), context.DeadlineExceeded) {
			// The caller's context ended first (a shutdown, an interrupt): the
			// check did not time out, it was stopped.
			took := clock.Now().Sub(start)
			return Result{Time: start, Duration: took, Output: fmt.Sprintf("cancelled after %v", took.Round(time.Millisecond))}, done
		}
		return Result{Time: start, Duration: timeout, Output: timedOut(timeout)}, done
	}
}

// timeoutGrace is how long, in real time, a run's result is awaited after its
// timeout. A checker that honours its context returns just after it ends, and
// its own error ("dial tcp …: i/o timeout") says more than a bare timeout; one
// that ignores it is recorded as timed out this much later.
const timeoutGrace = 20 * time.Millisecond

func timedOut(d time.Duration) string { return fmt.Sprintf("timed out after %v", d) }

// timeoutKey is the context key of a run's timeout (RunTimeout).
type timeoutKey struct{}

// RunTimeout is the timeout of the run whose context ctx is (or derives
// from): the check's Timeout, or Run's. A checker that says its timeout in
// its own words (an exec probe's `command "…" timed out after 1s`) reads it
// here, since the time left at its start is less by however long the run
// took to begin.
func RunTimeout(ctx context.Context) (time.Duration, bool) {
	d, ok := ctx.Value(timeoutKey{}).(time.Duration)
	return d, ok
}

// call runs the checker, turning a panic into a failed run.
func call(ctx context.Context, clock Clock, logger *slog.Logger, redact func(string) string, name string, c Checker) (o outcome) {
	defer func() {
		if p := recover(); p != nil {
			o = outcome{err: fmt.Errorf("panic: %v", p), end: clock.Now()}
			if logger.Enabled(ctx, slog.LevelError) { // a stack is dear; build it only to log it
				logger.Error("check panicked", "check", name, "panic", redact(fmt.Sprint(p)), "stack", string(debug.Stack()))
			}
		}
	}()
	if ms, ok := c.(Measurer); ok {
		obs, err := ms.Measure(ctx)
		return outcome{err: err, obs: obs, end: clock.Now()}
	}
	return outcome{err: c.Check(ctx), end: clock.Now()}
}

// result makes a Result of an outcome. A failure at the run's deadline says
// it timed out: a bare context error becomes "timed out after 1s", and any
// other (a dial's "i/o timeout") is prefixed with it, unless it says so
// already (an exec probe's `command "…" timed out after 1s`, a gRPC probe's
// kubelet wording "timeout: failed to connect service …").
func result(start time.Time, o outcome, runCtx context.Context, timeout time.Duration) Result {
	r := Result{Time: start, Duration: o.end.Sub(start), OK: o.err == nil,
		Undecided: o.err != nil && errors.Is(o.err, ErrUndecided), ObservedValue: o.obs.Value, ObservedUnit: o.obs.Unit}
	// The run's own timer may fire a moment after a socket inside the checker
	// saw the deadline pass: a run that ended at its deadline timed out.
	deadline, hasDeadline := runCtx.Deadline()
	timedOutNow := errors.Is(runCtx.Err(), context.DeadlineExceeded) || hasDeadline && !o.end.Before(deadline)
	msg := ""
	if o.err != nil {
		msg = o.err.Error()
	}
	switch {
	case o.err == nil:
		r.Output = o.obs.Message
	case timedOutNow && msg == context.DeadlineExceeded.Error():
		r.Output = timedOut(timeout)
	case timedOutNow && !strings.Contains(msg, "timed out") && !strings.HasPrefix(msg, "timeout: "):
		// Whatever broke at the deadline (a read's "i/o timeout", a closed
		// connection) broke because of it.
		r.Output = timedOut(timeout) + ": " + msg
	default:
		r.Output = msg
	}
	return r
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

// notify wakes whoever waits on ch, a channel with room for one, without
// waiting: a wake already pending covers this one.
func notify(ch chan<- struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// sleepUntil waits until the clock reaches due, wake or waits yields, or ctx
// ends; it reports false for the last.
func (m *Monitor) sleepUntil(ctx context.Context, due time.Time, wake, waits <-chan struct{}) bool {
	d := due.Sub(m.clock.Now())
	if d <= 0 {
		return ctx.Err() == nil
	}
	var t Timer
	if at, ok := m.clock.(TimerAt); ok {
		t = at.NewTimerAt(due)
	} else {
		t = m.clock.NewTimer(d)
	}
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-wake:
		return true
	case <-waits:
		return true
	case <-ctx.Done():
		return false
	}
}

// nextDue is one period after due, spread by the jitter. A run due less than
// a period ago runs now; runs missed for longer, while the process was stopped,
// are skipped, not made up in a burst.
func (m *Monitor) nextDue(due time.Time, period time.Duration) time.Time {
	step := period
	if m.jitter > 0 {
		spread := time.Duration(m.jitter * float64(period))
		step += time.Duration(rand.Int64N(int64(spread)+1)) - spread/2
	}
	next := due.Add(step)
	now := m.clock.Now()
	if late := now.Sub(next); late >= period {
		next = next.Add(late.Truncate(period))
	}
	return next
}

// timedCheck is a check judged from timestamps instead of by running anything:
// a heartbeat or a watchdog. Its answer changes at known deadlines (a ttl or a
// limit passing) or when the program signals (a beat, a unit of work ending),
// so its worker sleeps until exactly then and the probe answers at that moment,
// not up to a period later.
type timedCheck interface {
	// activate is called once per worker, when the check starts to count
	// (after startup for live and ready checks).
	activate(now time.Time)
	// reset forgets what the program signalled before the checks started
	// over (Reset). It is called under the Monitor's mutex, not the entry's
	// runMu, so it touches atomics only, or a lock of its own that is never
	// held while the Monitor's is taken.
	reset()
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
// failing check, such as how long the oldest unit of work has run), and
// settle it the moment it is stable (StableFor).
func (m *Monitor) runTimed(ctx context.Context, e *entry, w worker) {
	c, t := e.check, e.timed
	if c.Level != Startup && !waitStartup(ctx, w.startup) {
		return
	}
	now := m.clock.Now()
	e.runMu.Lock() // RunNow judges it too
	t.activate(now)
	e.runMu.Unlock()
	due := now
	state := checkState{} // what was last recorded, to tell a change
	for {
		select {
		case <-t.wake(): // this judgement covers whatever the signal was for
		default:
		}
		now = m.clock.Now()
		periodic := !due.After(now)
		// A judgement is a result when the period is due or it changes the
		// status: a wake that changes nothing (a unit of work begun on an idle
		// watchdog) leaves no trace in the history.
		// A judgement is also a result when it starts or ends a wait to be
		// stable.
		e.runMu.Lock()
		if c.StableFor > 0 {
			state = m.settle(e, w.gen)
		}
		if r, decided := t.evaluate(now); decided {
			if next, tr := state.after(r, e.thresholds(), now); periodic || tr != nil || next.waiting != state.waiting {
				state = m.record(e, r, w.gen)
			}
		}
		e.runMu.Unlock()
		if stops(c.Level, state.status) {
			return
		}
		if periodic {
			due = m.nextDue(due, c.Period)
		}
		next := due
		if d := t.deadline(now); !d.IsZero() && d.Before(next) {
			next = d
		}
		if at, waiting := state.stableAt(e.thresholds()); waiting && at.Before(next) {
			next = at
		}
		if !m.sleepUntil(ctx, next, t.wake(), e.waits) {
			return
		}
	}
}
