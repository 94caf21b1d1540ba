package health

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vitals-dev/vitals/internal/escape"
)

// Monitor runs checks in the background and keeps their state; its Handler
// serves the probe endpoints from that state. Make one with New; the zero
// Monitor is not usable. All methods are safe for concurrent use.
//
// A Monitor holds one mutex for its state, never while a check runs and never
// while it logs; the probe endpoints take no lock at all, reading views
// published through atomic pointers.
type Monitor struct {
	clock       Clock
	logger      *slog.Logger
	ownLog      *LogQueue // the queue New put in front of the logger; nil when it was given one
	defaults    Defaults
	historySize int
	details     atomic.Bool // WithDetails, SetDetails
	jitter      float64
	redact      func(string) string
	recorder    func(Recorded)
	service     atomic.Pointer[ServiceInfo] // WithServiceInfo, SetServiceInfo; never nil

	mu            sync.Mutex
	entries       []*entry // registration order; views share it, so it is only appended to or replaced
	byName        map[string]*entry
	levels        levelState
	passing       [Ready + 1]bool           // the verdicts last published, to emit level events on change
	inflight      map[string]<-chan outcome // runs that outlived their timeout, by check name, until they return
	startupGate   chan struct{}             // closed when startup latches
	startupPassed time.Time
	pauseReason   string            // the reason given to Pause, until Reset
	pauses        map[string]*pause // the PauseChecks standing, by owner, until its ResetChecks or Reset
	pausedFor     string            // why checks are paused, as the endpoints say it; "" while none is
	stoppingSaid  bool              // a stopping event was emitted: Drain emits none
	ctx           context.Context
	values        context.Context // ctx without its cancellation, for the runs' contexts
	sched         *scheduler
	workers       sync.WaitGroup // the scheduler, its steps under way, and the goroutines of heartbeats and watchdogs
	done          chan struct{}
	events        eventLog
	logs          []logRecord // written under mu, logged once it is released
	recorded      []Recorded  // results recorded under mu, told to the recorder once it is released
	view          atomic.Pointer[monitorView]
}

// monitorView is what the probe endpoints read: replaced whole on every change
// of the check list or of a verdict.
type monitorView struct {
	entries []*entry
	passing [Ready + 1]bool
	levels  levelState
	paused  string // why checks are paused, while some are
}

// New returns a Monitor with no checks. Nothing runs until Start.
func New(opts ...Option) *Monitor {
	m := &Monitor{
		byName:      map[string]*entry{},
		inflight:    map[string]<-chan outcome{},
		pauses:      map[string]*pause{},
		startupGate: make(chan struct{}),
		done:        make(chan struct{}),
	}
	m.configure(opts)
	m.sched = newScheduler(m)
	m.passing = m.levels.verdicts()
	m.publishLocked()
	return m
}

// output is a result's output as the Monitor keeps it: redacted, with what
// a terminal or a reader would act on escaped (escape.Text: ESC, BEL, NUL,
// U+202E as \x1b, \a, \x00, \u202e; line breaks and tabs kept), and capped.
// In that order: a secret is hidden whole before the cap could cut it, and
// the cap counts the escaped text and cuts no escape in half. Every endpoint,
// event, hook, log line and snapshot gets the text so made.
func (m *Monitor) output(s string) string {
	if m.redact != nil {
		s = m.redact(s)
	}
	return capOutput(escape.Text(s))
}

// Add registers a check. It starts at once if the Monitor has started,
// unless it is Disabled: then it is stopped, as StopCheck leaves a check,
// until StartCheck. Add fails, changing nothing, on an invalid, reserved or
// duplicate name, a missing level or checker, a negative duration or
// threshold, a timeout longer than the period, a startup check once the
// startup level has passed, or a Monitor whose Start context has ended.
func (m *Monitor) Add(c Check) error {
	c, err := m.checked(c)
	if err != nil {
		return err
	}
	return m.add(&entry{check: c})
}

// checked is c as the Monitor runs it, its defaults filled in, or why it
// cannot be: a check that a program runs (Add, Replace, Update).
func (m *Monitor) checked(c Check) (Check, error) {
	c, err := c.withDefaults(m.defaults)
	if err != nil {
		return c, err
	}
	if c.Checker == nil {
		return c, &CheckError{Name: c.Name, Field: "Checker", Msg: "checker is nil"}
	}
	if c.Kind == "" {
		c.Kind = "checker"
	}
	return c, nil
}

func (m *Monitor) add(e *entry) error {
	m.mu.Lock()
	defer m.unlockAndLog()
	name := e.check.Name
	switch {
	case m.levels.stopped:
		return fmt.Errorf("add check %q: %w", name, ErrStopped)
	case m.byName[name] != nil:
		return fmt.Errorf("add check %q: %w", name, ErrDuplicateName)
	case e.check.Level == Startup && m.levels.latched:
		return fmt.Errorf("add startup check %q: %w (it latches until the process restarts)", name, ErrStartupLatched)
	}
	e.history = newHistory(m.historySize)
	e.place.index = -1
	e.stopped = e.check.Disabled
	if e.timed != nil && e.check.StableFor > 0 {
		e.timed.waits = make(chan struct{}, 1)
	}
	e.publishView()
	m.byName[name] = e
	// Appending never writes within the length a published view holds, so
	// views can share the array; Remove copies.
	m.entries = append(m.entries, e)
	if !e.stopped {
		m.levels.counts[e.check.Level][Pending]++
	}
	if m.levels.started {
		m.startWorkerLocked(e, m.clock.Now())
	}
	m.membershipLocked(EventCheckAdded, e.check)
	m.changedLocked(fmt.Sprintf("check %q was added", name))
	return nil
}

// Remove stops a check and forgets it; levels are judged again without it. A
// run of it that outlived its timeout is not forgotten: a check added again
// under the same name does not run until that run returns.
func (m *Monitor) Remove(name string) error {
	m.mu.Lock()
	defer m.unlockAndLog()
	e, ok := m.byName[name]
	if !ok {
		return fmt.Errorf("remove check %q: %w", name, ErrNoSuchCheck)
	}
	e.removed = true
	m.stopWorkerLocked(e)
	delete(m.byName, name)
	m.entries = slices.DeleteFunc(slices.Clone(m.entries), func(x *entry) bool { return x == e })
	if !e.stopped {
		m.levels.counts[e.check.Level][e.state.status]--
	}
	m.membershipLocked(EventCheckRemoved, e.check)
	m.changedLocked(fmt.Sprintf("check %q was removed", name))
	return nil
}

// StopCheck stops running a check and leaves it out of the levels, as if it
// were not there, keeping its state and history to look at (Pebble's
// stop-checks). Stopping a stopped check does nothing.
func (m *Monitor) StopCheck(name string) error {
	m.mu.Lock()
	defer m.unlockAndLog()
	e, ok := m.byName[name]
	if !ok {
		return fmt.Errorf("stop check %q: %w", name, ErrNoSuchCheck)
	}
	if e.stopped {
		return nil
	}
	e.stopped = true
	m.stopWorkerLocked(e)
	m.levels.counts[e.check.Level][e.state.status]--
	e.publishView()
	m.membershipLocked(EventCheckStopped, e.check)
	m.changedLocked(fmt.Sprintf("check %q was stopped", name))
	return nil
}

// StartCheck runs a stopped check again, at once, and counts it in the levels
// again with the state it had: pending, for a check added Disabled. A check
// that an owner's PauseChecks holds counts, and runs once the owner's
// ResetChecks starts it over. Starting a running check does nothing.
func (m *Monitor) StartCheck(name string) error {
	m.mu.Lock()
	defer m.unlockAndLog()
	e, ok := m.byName[name]
	if !ok {
		return fmt.Errorf("start check %q: %w", name, ErrNoSuchCheck)
	}
	if !e.stopped {
		return nil
	}
	e.stopped = false
	m.levels.counts[e.check.Level][e.state.status]++
	e.publishView()
	if m.levels.started {
		m.startWorkerLocked(e, m.clock.Now())
	}
	m.membershipLocked(EventCheckStarted, e.check)
	m.changedLocked(fmt.Sprintf("check %q was started", name))
	return nil
}

// Reset starts every check over, as the kubelet's probe workers do when the
// container restarts: each check is pending again with no results counted
// (its history is kept), startup has to pass again before live and ready
// checks run, initial delays count from now, and heartbeats wait for a new
// first beat. A run under way when Reset is called is not recorded. It emits
// a checks-reset event whose output is reason, then the level events of the
// change (startup and readiness fail until startup passes again). A stopped
// check stays stopped, and starts over when started. Reset ends a Pause, and
// every owner's PauseChecks. It does nothing once the Monitor has stopped.
//
// The agent calls it when it has started the workload again: the checks
// judge the new instance, not what the old one did.
func (m *Monitor) Reset(reason string) { m.startEveryCheckOver(reason, false) }

// Pause starts every check over as Reset does, but runs none of them until
// Reset: for the time the workload is down between two runs, when a check
// could only judge a process that is not there (the kubelet does not probe
// a container that is not running). Startup and readiness fail while the
// checks are paused; liveness does not, as nothing fails. RunNow records
// nothing meanwhile. It emits a checks-reset event whose output is reason.
func (m *Monitor) Pause(reason string) { m.startEveryCheckOver(reason, true) }

// PauseChecks is Pause for the named checks only, on behalf of owner (the
// service whose checks they are, as the events' Service names it): each is
// started over, and runs not at all until ResetChecks of the same owner, or
// Reset; RunNow records nothing of it meanwhile. The other checks go on as
// they were. Readiness fails while the pause stands, even when no name is
// given (nothing is vouched for while a service is down between two runs);
// liveness does not, as nothing fails. When the named checks hold a startup
// check that counts and startup has passed, it has to pass again: /startupz
// and readiness fail until it does, and the named live and ready checks wait
// for it once they run again, while the checks already running go on.
// Unknown names are passed over; a stopped check stays stopped; a check is
// held by the latest owner to pause it. It emits a checks-reset event whose
// Output is reason and whose Service is owner. It does nothing once the
// Monitor has stopped.
//
// The agent calls it when one of its services is down between two runs:
// the other services' checks go on judging theirs.
func (m *Monitor) PauseChecks(owner, reason string, names []string) {
	m.startChecksOver(owner, reason, names, true)
}

// ResetChecks is Reset for the named checks only, on behalf of owner, and
// ends owner's PauseChecks: the named checks, and those owner's pause
// holds, start over and run again at once (after their initial delay,
// counted from now; live and ready checks once startup has passed), but for
// those another owner's pause holds. Readiness is judged again without
// owner's pause. Startup starts over as with PauseChecks, and the event is
// the same.
//
// The agent calls it when it has started the service again.
func (m *Monitor) ResetChecks(owner, reason string, names []string) {
	m.startChecksOver(owner, reason, names, false)
}

// pause is one owner's PauseChecks. It never changes, so that the views of
// the checks it holds may share it: a later PauseChecks of the owner makes
// another.
type pause struct{ owner, reason string }

// String is the pause as the endpoints say it: "owner: reason".
func (p *pause) String() string {
	if p.owner == "" {
		return p.reason
	}
	return p.owner + ": " + p.reason
}

func (m *Monitor) startEveryCheckOver(reason string, pausing bool) {
	reason = m.output(reason) // it names the workload, as the events of Emit do
	m.mu.Lock()
	defer m.unlockAndLog()
	if m.levels.stopped {
		return
	}
	m.levels.pausedAll, m.pauseReason = pausing, ""
	if pausing {
		m.pauseReason = reason
	} else {
		clear(m.pauses)
		for _, e := range m.entries {
			e.pause = nil
		}
	}
	m.startOverLocked(m.entries, true, pausing, Event{Type: EventChecksReset, Output: reason})
}

func (m *Monitor) startChecksOver(owner, reason string, names []string, pausing bool) {
	reason = m.output(reason)
	m.mu.Lock()
	defer m.unlockAndLog()
	if m.levels.stopped {
		return
	}
	var p *pause // what holds the checks started over: nothing, once owner's pause ends
	if pausing {
		p = &pause{owner: owner, reason: reason}
		m.pauses[owner] = p
	} else {
		delete(m.pauses, owner)
	}
	named := make(map[string]bool, len(names))
	for _, name := range names {
		named[name] = true
	}
	var over []*entry
	unlatch := false
	for _, e := range m.entries {
		held := e.pause != nil && e.pause.owner == owner
		if !held && !named[e.check.Name] {
			continue
		}
		if held || pausing {
			e.pause = p
		}
		over = append(over, e)
		unlatch = unlatch || e.check.Level == Startup && !e.stopped
	}
	m.startOverLocked(over, unlatch, pausing, Event{Type: EventChecksReset, Output: reason, Service: owner})
}

// startOverLocked starts the checks of over over, as Reset says, once the
// pauses are set: they stop, and start again unless a pause holds them;
// with unlatch, startup has to pass again first. Then it says so: a log
// line, the checks-reset event ev, and the level events of the change.
func (m *Monitor) startOverLocked(over []*entry, unlatch, pausing bool, ev Event) {
	m.levels.paused = m.levels.pausedAll || len(m.pauses) > 0
	m.pausedFor = m.pausedForLocked()
	if unlatch && m.levels.latched {
		m.levels.latched = false
		m.startupGate = make(chan struct{})
		m.startupPassed = time.Time{}
	}
	// Checks started over with no startup check among them wait for no
	// startup: one that another owner started over must not hold them.
	gate := m.startupGate
	if !unlatch && m.levels.started {
		gate = passedGate
	}
	now := m.clock.Now()
	for _, e := range over {
		m.stopWorkerLocked(e)
		e.gen++
		if !e.stopped {
			m.levels.counts[e.check.Level][e.state.status]--
		}
		e.state = checkState{}
		if e.timed != nil {
			e.timed.check.reset()
		}
		e.publishView()
		if e.stopped {
			continue
		}
		m.levels.counts[e.check.Level][Pending]++
		if m.levels.started {
			m.startWorkerGatedLocked(e, now, gate)
		}
	}
	msg := "checks start over"
	if pausing {
		msg = "checks paused"
	}
	args := []any{"reason", ev.Output}
	why := "the checks started over: " + ev.Output
	if ev.Service != "" {
		checks := make([]string, len(over))
		for i, e := range over {
			checks[i] = e.check.Name
		}
		args = append(args, "service", ev.Service, "checks", checks)
		why = "the checks of " + ev.Service + " started over: " + ev.Output
	}
	m.logLocked(slog.LevelInfo, msg, args...)
	ev.Time = now
	m.emitLocked(ev)
	m.changedLocked(why)
}

// pausedForLocked is why checks are paused, as the endpoints say it: the
// reason given to Pause, then each owner's pause by owner, "owner:
// reason", joined by "; "; "" while none is.
func (m *Monitor) pausedForLocked() string {
	var why []string
	if m.levels.pausedAll {
		why = append(why, m.pauseReason)
	}
	for _, owner := range slices.Sorted(maps.Keys(m.pauses)) {
		why = append(why, m.pauses[owner].String())
	}
	return strings.Join(why, "; ")
}

// Start starts running the checks and returns at once. Checks run until ctx
// ends; then readiness fails (the Monitor can no longer vouch for anything)
// and Done is closed once every worker has returned. Until Start, /startupz
// and /readyz fail: nothing has been checked yet. A second Start does nothing.
func (m *Monitor) Start(ctx context.Context) {
	m.mu.Lock()
	defer m.unlockAndLog()
	if m.levels.started {
		m.logLocked(slog.LevelWarn, "health monitor started twice; the second start is ignored")
		return
	}
	m.levels.started, m.ctx, m.values = true, ctx, context.WithoutCancel(ctx)
	now := m.clock.Now()
	m.sched.base = now // before anything is queued
	m.workers.Add(1)
	go m.sched.loop(ctx)
	for _, e := range m.entries {
		m.startWorkerLocked(e, now)
	}
	m.changedLocked("the monitor started")
	go func() {
		<-ctx.Done()
		m.mu.Lock()
		m.levels.stopped = true
		for _, e := range m.entries {
			m.stopWorkerLocked(e) // a run under way is cut short
		}
		m.changedLocked(stoppedReason)
		m.unlockAndLog()
		m.workers.Wait()
		if m.ownLog != nil {
			// The last lines, such as the levels failing, are not lost
			// with a process that exits on Done; a sink that blocks gets
			// LogFlushGrace, not a hold on Done.
			m.ownLog.FlushWithin(LogFlushGrace)
		}
		close(m.done)
	}()
}

const stoppedReason = "the monitor has stopped"

// Done is closed when the context given to Start has ended, every check's
// worker has returned, and the log lines of the Monitor's own LogQueue (see
// WithLogger) are written, or LogFlushGrace has passed; never, if Start is
// not called. A checker that ignores its context may still be running: Go
// cannot stop it, and the Monitor does not wait for it.
func (m *Monitor) Done() <-chan struct{} { return m.done }

// Drain makes readiness fail from now on, for a graceful shutdown: load
// balancers stop sending traffic while the process finishes what it has.
// Liveness is unaffected and checks keep running (the kubelet keeps probing
// readiness during termination). It emits a stopping event, unless one was
// emitted already (the agent emits its own, saying why), so that readers of
// the events learn of it even when readiness was failing before. Drain cannot
// be undone.
func (m *Monitor) Drain() {
	m.mu.Lock()
	defer m.unlockAndLog()
	if m.levels.draining {
		return
	}
	m.levels.draining = true
	if !m.stoppingSaid {
		m.emitLocked(Event{Type: EventStopping, Output: drainReason})
	}
	m.changedLocked(drainReason)
}

const drainReason = "process is shutting down"

// Passing reports whether the level's endpoint answers 200 now.
func (m *Monitor) Passing(level Level) bool {
	return level.valid() && m.view.Load().passing[level]
}

// changedLocked latches startup when it has passed, judges the levels again,
// emits level events for those that changed (once started), and publishes a
// new view. reason says what changed, for the events.
func (m *Monitor) changedLocked(reason string) {
	if m.levels.latches() {
		m.levels.latched = true
		m.startupPassed = m.clock.Now()
		close(m.startupGate)
		m.sched.startupPassed(m.startupPassed)
	}
	verdicts := m.levels.verdicts()
	if m.levels.started {
		for _, l := range []Level{Startup, Live, Ready} {
			if verdicts[l] == m.passing[l] {
				continue
			}
			typ, level := EventLevelPassed, slog.LevelInfo
			if !verdicts[l] {
				typ, level = EventLevelFailed, slog.LevelWarn
			}
			m.logLocked(level, "level "+string(typ[len("level-"):]), "check_level", l, "reason", reason)
			m.emitLocked(Event{Type: typ, Level: l, Output: reason})
		}
	}
	m.passing = verdicts
	m.publishLocked()
}

func (m *Monitor) publishLocked() {
	m.view.Store(&monitorView{entries: m.entries, passing: m.passing, levels: m.levels, paused: m.pausedFor})
}

// logRecord is a log line written while the mutex was held.
type logRecord struct {
	level slog.Level
	msg   string
	args  []any
}

func (m *Monitor) logLocked(level slog.Level, msg string, args ...any) {
	m.logs = append(m.logs, logRecord{level, msg, args})
}

// unlockAndLog releases the mutex, then logs what was written under it, so
// that a handler that calls back into the Monitor does not deadlock. The
// logger's LogQueue returns at once, so a slow or blocked sink holds up no
// check either.
func (m *Monitor) unlockAndLog() {
	logs, recorded := m.logs, m.recorded
	m.logs, m.recorded = nil, nil
	m.mu.Unlock()
	for _, l := range logs {
		m.logger.Log(context.Background(), l.level, l.msg, l.args...)
	}
	for _, r := range recorded {
		m.recorder(r)
	}
}

// addTimed adds a heartbeat or watchdog. Their deadlines are exact, so both
// thresholds are 1 (EventFailureThreshold): a ttl that has passed has
// passed, and one beat is proof of life. They run nothing, so they have no
// timeout and no initial delay.
func (m *Monitor) addTimed(name string, level Level, t timedCheck, kind string, o timedOptions) error {
	c := Check{Name: name, Level: level, Kind: kind, ComponentType: ComponentTypeComponent,
		SuccessThreshold: 1, FailureThreshold: EventFailureThreshold, StableFor: o.stableFor, Disabled: o.disabled}
	c, err := c.withDefaults(m.defaults)
	if err != nil {
		return err
	}
	c.Timeout, c.InitialDelay = 0, 0
	return m.add(&entry{check: c, timed: &timedLife{check: t}})
}
