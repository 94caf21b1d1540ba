package health

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// This file is one check's life, all of it: what the Monitor keeps of the
// check (entry) and what the endpoints read of it (checkView); how a life
// starts and stops; its loop, which for a check the scheduler runs is a step
// from one wake to the next and for a heartbeat or watchdog a goroutine of
// its own; how a result is recorded, counted in the levels and published;
// and a run outside the loop (RunNow). What a result does to the check's
// status is state.go's; how a checker runs once, run.go's; when the check
// wakes, the scheduler's.

// entry is one check's configuration and state.
type entry struct {
	check Check // with defaults applied; never changes
	// timed is set for heartbeats and watchdogs, which are judged from
	// timestamps by a goroutine each; nil for the checks the scheduler
	// runs, which are most (what only the former need is kept apart, so
	// that an entry of 10,000 fits a smaller size class).
	timed *timedLife

	runMu sync.Mutex // held for a run and its record: the worker's or RunNow's, never both
	place place      // its place in the scheduler, guarded by the scheduler's mutex

	// guarded by Monitor.mu
	state   checkState
	history history
	removed bool
	stopped bool   // by StopCheck, or added so (Check.Disabled): not run, not counted in the levels
	pause   *pause // the owner's PauseChecks that holds it, until that owner's ResetChecks; nil when none does
	// gen counts the times the check started over (Reset, Pause,
	// ResetChecks, PauseChecks): a run begun before the latest is not
	// recorded.
	gen uint64
	// startup is the startup gate its latest worker took: a live or ready
	// check runs once it is closed. It may be an older gate than the
	// Monitor's, when the checks of one owner started startup over.
	startup chan struct{}

	view atomic.Pointer[checkView] // what the probe endpoints read
	// The time and observation of the latest result, for the JSON probe
	// endpoint: they change with every run, and the view need not.
	lastAt  atomic.Int64 // unix nanoseconds; 0 before the first result
	lastObs atomic.Pointer[observed]
}

// checkView is one check's state as the probe endpoints show it. It is
// published anew only when it changes, so that a run that changes nothing
// (a passing check passing again) allocates nothing.
type checkView struct {
	status  Status
	reason  string // why the status is what it is: the output of the run that explains it
	stopped bool
	pause   *pause // the owner's pause that holds it
	ran     bool   // it has a result
	lastOK  bool
	// undecided: the last result decided nothing, and reason says what the
	// check waits for.
	undecided bool
	// successes and failures are counted while it is pending only, where
	// they are shown.
	successes, failures int
	waiting             bool // to be stable, since stableFrom
	stableFrom          time.Time
}

// observed is a latest result's observed value, with its unit.
type observed struct {
	value any
	unit  string
}

func (e *entry) thresholds() thresholds {
	return thresholds{success: e.check.SuccessThreshold, failure: e.check.FailureThreshold, stableFor: e.check.StableFor}
}

// stableAt is when the check the view is of passes, if it waits to be
// stable.
func (v *checkView) stableAt(e *entry) (time.Time, bool) {
	return v.stableFrom.Add(e.check.StableFor), v.waiting
}

// startWorkerLocked starts the check's life, unless it does not run at the
// moment: its first run is due at added plus its initial delay, and, for a
// live or ready check, once the startup gate of now is closed.
func (m *Monitor) startWorkerLocked(e *entry, added time.Time) {
	m.startWorkerGatedLocked(e, added, m.startupGate)
}

// passedGate is a startup gate that is open: the gate of checks started
// over with no startup check of theirs, which startup waits for nothing
// of (another owner's startup check, started over, does not hold them).
var passedGate = func() chan struct{} { ch := make(chan struct{}); close(ch); return ch }()

// startWorkerGatedLocked is startWorkerLocked with the startup gate that a
// live or ready check waits for.
func (m *Monitor) startWorkerGatedLocked(e *entry, added time.Time, gate chan struct{}) {
	if m.levels.stopped || m.heldLocked(e) || m.ctx.Err() != nil {
		return
	}
	e.startup = gate
	if e.timed == nil {
		m.sched.start(e, e.gen, gate, added.Add(e.check.InitialDelay))
		return
	}
	ctx, cancel := context.WithCancel(m.ctx)
	e.timed.cancel = cancel
	w := worker{gen: e.gen, startup: gate}
	m.workers.Add(1)
	go func() {
		defer m.workers.Done()
		defer cancel()
		m.runTimed(ctx, e, w)
	}()
}

// stopWorkerLocked ends the check's life: it is no longer run, and a run
// under way is cut short and not recorded.
func (m *Monitor) stopWorkerLocked(e *entry) {
	if e.timed == nil {
		m.sched.stop(e)
	} else if e.timed.cancel != nil {
		e.timed.cancel()
	}
}

// heldLocked reports whether the check does not run at the moment, whatever
// startup does: it is stopped or removed, paused (Pause, or its owner's
// PauseChecks), or a startup check that has passed. Its worker does not
// start, and neither RunNow nor a wait to be stable that ends changes it.
func (m *Monitor) heldLocked(e *entry) bool {
	return m.runFactsLocked(e, true).held() != notHeld
}

// runFactsLocked is what says whether e runs now, as the Monitor knows it
// but for startedUp, whether startup has passed for it, which only the
// caller knows: the gate of its life, or of the life it would start.
func (m *Monitor) runFactsLocked(e *entry, startedUp bool) runFacts {
	return runFacts{level: e.check.Level, status: e.state.status, off: e.stopped || e.removed,
		paused: m.levels.pausedAll || e.pause != nil, startedUp: startedUp}
}

// step is one wake of a check's life, the loop of the kubelet's worker cut at
// its sleeps: settle the check if its wait to be stable is over, wait for the
// run to be due and for startup to pass, run, record, and queue the next
// wake: at the next due time, at the check's phase, or sooner to settle. The
// scheduler calls it on a worker at each wake; a run whose checker outlives
// its deadline and grace is finished by graceThenAbandon instead. sc.due
// starts as when the check began to count (Start, Add after Start, or Reset)
// plus its initial delay.
func (m *Monitor) step(e *entry, sc schedule, rc *runContext) {
	c := e.check
	if !m.sched.current(e, sc.life) {
		m.workers.Done()
		return
	}
	// Whether it runs now, from what the step knows without the Monitor's
	// mutex: a current life is neither stopped nor paused (StopCheck,
	// Remove, Pause and PauseChecks end it under that mutex), and the status
	// is looked at only where a wait to be stable may have ended; elsewhere
	// the run that passes a startup check ends its life in finish. (One that
	// RunNow passes keeps its life until a run of its own passes too.)
	var status Status
	if c.StableFor > 0 {
		status = m.settle(e, sc.gen).status
	}
	now := m.clock.Now()
	held := runFacts{level: c.Level, status: status, startedUp: fired(sc.startup)}.held()
	switch {
	case held == heldPassed:
		m.workers.Done()
		return
	case now.Before(sc.due): // woken to settle the check, or to sleep until it is stable
		m.sched.next(e, sc)
		m.workers.Done()
		return
	case held == heldForStartup:
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
	// The life's phase moves its second run, and with it every later one.
	sc.due, sc.phase = m.nextDue(sc.due.Add(sc.phase), e.check.Period), 0
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

// nextDue is one period after due. A run due less than a period ago runs
// now; runs missed for longer, while the process was stopped, are skipped,
// not made up in a burst.
func (m *Monitor) nextDue(due time.Time, period time.Duration) time.Time {
	next := due.Add(period)
	now := m.clock.Now()
	if late := now.Sub(next); late >= period {
		next = next.Add(late.Truncate(period))
	}
	return next
}

// phases is how many places in its period a check's runs can take after
// its first (WithJitter): the checks of one period that begin together run
// in at most this many wake-ups a period, a quarter of them in each. Each
// wake-up costs about as much as the run of a simple check (the kernel wakes
// a thread, the runtime its timers), so that 100 checks of a second run from
// four wake-ups a second, not from the sixty that a phase of any tick
// would give them; a shared dependency still sees a quarter of them at once,
// not all.
const phases = 4

// phase is the place in its period of a check's life, drawn at its start
// and kept: one of phases steps of a phases-th of the jitter's spread of
// period, each a whole number of ticks (0 when a step is shorter than one).
func (m *Monitor) phase(period time.Duration) time.Duration {
	step := (time.Duration(m.jitter*float64(period)) / phases).Truncate(Tick)
	if step <= 0 {
		return 0
	}
	return time.Duration(rand.IntN(phases)) * step
}

// worker is what a heartbeat's or watchdog's goroutine is given when it
// starts, under the Monitor's mutex.
type worker struct {
	gen     uint64        // the check's generation: its results count while it is current
	startup chan struct{} // closed when startup latches
}

// timedLife is a heartbeat's or watchdog's part of its entry.
type timedLife struct {
	check timedCheck // never changes
	// waits wakes its goroutine when a result recorded outside its loop
	// (RunNow) starts a wait to be stable; nil without a StableFor.
	waits chan struct{}
	// cancel ends its goroutine; guarded by Monitor.mu.
	cancel context.CancelFunc
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
	c, t := e.check, e.timed.check
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
		if !m.sleepUntil(ctx, next, t.wake(), e.timed.waits) {
			return
		}
	}
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

// record applies one result of a run begun in generation gen to a check's
// state and returns its new state. A run begun before the check was removed
// or started over (Reset) is not recorded.
func (m *Monitor) record(e *entry, r Result, gen uint64) checkState {
	r.Output = m.output(r.Output)
	m.mu.Lock()
	defer m.unlockAndLog()
	if e.removed || e.stopped || m.levels.stopped || e.gen != gen {
		return e.state // a run of a check no longer counted says nothing
	}
	// Events are stamped when recorded, not when the run began, so that their
	// times grow with their ids.
	now := m.clock.Now()
	next, tr := e.state.after(r, e.thresholds(), now)
	if next.waiting && !e.state.waiting {
		// The check wakes when it is stable, or at its next run.
		if e.timed != nil {
			notify(e.timed.waits)
		} else {
			at, _ := next.stableAt(e.thresholds())
			m.sched.wakeBy(e, at)
		}
	}
	// A run at the moment the wait ends passes the check as settle would:
	// it passes for being stable, and says so.
	stable := tr != nil && tr.to.passing() && e.state.waiting
	e.state = next
	e.history.add(r)
	e.publishView()
	from := next.status
	if tr != nil {
		from = tr.from
		output := r.Output
		if stable {
			output = stableOutput(e.check.StableFor, r.Output)
		}
		m.transitionLocked(e, *tr, output, now)
	}
	if m.recorder != nil {
		m.recorded = append(m.recorded, Recorded{Check: e.check.Name, Level: e.check.Level, Kind: e.check.Kind,
			Result: r, From: from, To: next.status})
	}
	return next
}

// settle passes a check of generation gen whose wait to be stable is over
// by now, and returns its state.
func (m *Monitor) settle(e *entry, gen uint64) checkState {
	m.mu.Lock()
	defer m.unlockAndLog()
	// As a run's result is recorded only while the check counts: a stopped
	// check is out of the levels (StopCheck took it out), and its worker may
	// see the wake-up to settle before the stop's cancellation.
	if m.heldLocked(e) || e.gen != gen {
		return e.state
	}
	now := m.clock.Now()
	next, tr := e.state.settle(e.thresholds(), now)
	if tr == nil {
		return next
	}
	e.state = next
	e.publishView()
	m.transitionLocked(e, *tr, stableOutput(e.check.StableFor, next.last.Output), now)
	if m.recorder != nil {
		m.recorded = append(m.recorded, Recorded{Check: e.check.Name, Level: e.check.Level, Kind: e.check.Kind,
			Result: next.last, From: tr.from, To: tr.to, Stable: true})
	}
	return next
}

// stableOutput is what the event of a check that passes for being stable
// says: "stable for 25s", and its last run's output.
func stableOutput(stableFor time.Duration, last string) string {
	output := fmt.Sprintf("stable for %v", stableFor)
	if last != "" {
		output += ": " + last
	}
	return output
}

// stableAt is when the check passes, if it waits to be stable.
func (m *Monitor) stableAt(e *entry) (time.Time, bool) {
	if e.check.StableFor == 0 {
		return time.Time{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return e.state.stableAt(e.thresholds())
}

// transitionLocked counts a check's change of status in its level, and
// says it.
func (m *Monitor) transitionLocked(e *entry, tr transition, output string, now time.Time) {
	m.levels.counts[e.check.Level][tr.from]--
	m.levels.counts[e.check.Level][tr.to]++
	m.checkChangedLocked(e, tr, output, now)
}

func (m *Monitor) checkChangedLocked(e *entry, tr transition, output string, now time.Time) {
	c := e.check
	typ := tr.event()
	level := slog.LevelInfo
	if typ != EventCheckPassed {
		level = slog.LevelWarn
	}
	m.logLocked(level, "check "+map[Status]string{Pass: "passed", Warn: "warned", Fail: "failed"}[tr.to],
		"check", c.Name, "check_level", c.Level, "from", tr.from, "output", output)
	m.emitLocked(Event{Time: now, Type: typ, Check: c.Name, Level: c.Level, From: tr.from, To: tr.to, Output: output})
	reason := fmt.Sprintf("check %q is %s", c.Name, tr.to)
	if output != "" {
		reason += ": " + output
	}
	m.changedLocked(reason)
}

func (e *entry) publishView() {
	s := e.state
	v := checkView{status: s.status, reason: s.last.Output, stopped: e.stopped, pause: e.pause, ran: s.runs > 0, lastOK: s.last.OK,
		undecided: s.last.Undecided, waiting: s.waiting, stableFrom: s.stableFrom}
	if v.status == Warn || v.status == Fail {
		v.reason = s.badOutput
	}
	if v.status == Pending {
		v.successes, v.failures = s.successes, s.failures
	}
	if s.runs > 0 {
		e.lastAt.Store(s.last.Time.UnixNano())
		if s.last.ObservedValue == nil {
			if e.lastObs.Load() != nil {
				e.lastObs.Store(nil)
			}
		} else {
			e.lastObs.Store(&observed{s.last.ObservedValue, s.last.ObservedUnit})
		}
	}
	if old := e.view.Load(); old == nil || *old != v {
		published := v // only this copy escapes
		e.view.Store(&published)
	}
}

// RunNow runs a check once, now, and returns its result, as Pebble's refresh
// does. The result counts toward the check's thresholds like any run, unless
// the check does not run at the moment: it is stopped, it waits for startup
// (a live or ready check whose worker has not passed the startup gate), it
// is paused (Pause, or its owner's PauseChecks), or it is a startup check
// that has passed. A run of the check already under way is waited for,
// never overlapped; a heartbeat or watchdog is judged.
func (m *Monitor) RunNow(ctx context.Context, name string) (Result, error) {
	m.mu.Lock()
	e, ok := m.byName[name]
	var gen uint64
	if ok {
		gen = e.gen
	}
	m.mu.Unlock()
	if !ok {
		return Result{}, fmt.Errorf("run check %q: %w", name, ErrNoSuchCheck)
	}
	e.runMu.Lock()
	defer e.runMu.Unlock()
	var r Result
	if e.timed != nil {
		var decided bool
		if r, decided = e.timed.check.evaluate(m.clock.Now()); !decided {
			r.Output = "pending: " + pendingTimed(e)
			return r, nil
		}
	} else {
		var ran bool
		if r, ran = m.runOnce(ctx, e); !ran {
			r = stillRunning(m.clock.Now(), e.check.Timeout)
		}
	}
	m.mu.Lock()
	// As its worker would: startup has passed for it once the gate of its
	// latest life has closed.
	counts := m.runFactsLocked(e, fired(e.startup)).held() == notHeld
	m.mu.Unlock()
	if counts {
		m.record(e, r, gen)
	}
	r.Output = m.output(r.Output)
	return r, nil
}

func pendingTimed(e *entry) string {
	if e.check.Kind == "heartbeat" {
		return "waiting for the first beat"
	}
	return "no result yet"
}

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
