package health

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"time"
)

// This file is one run of a checker, whoever asks for it (a check's life,
// RunNow, Run): under its timeout, a panic made a failed run, and what it
// returned made a Result that says whether it timed out.

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

// outcome is what a checker returned.
type outcome struct {
	err error
	obs Observation
	end time.Time
}

var errGoexit = errors.New("the checker ended its goroutine (runtime.Goexit) without returning")

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
