package health

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Monitor runs checks in the background and keeps their state; its Handler
// serves the probe endpoints from that state. All methods are safe for
// concurrent use. A Monitor holds one mutex for its state, never while a check
// runs; the probe endpoints read an immutable view through atomic pointers and
// take no lock at all.
type Monitor struct {
	clock       Clock
	logger      *slog.Logger
	defaults    Defaults
	historySize int
	details     bool
	jitter      float64

	mu            sync.Mutex
	entries       []*entry // registration order; views share it, so it is only appended to or replaced
	byName        map[string]*entry
	counts        [Ready + 1][Fail + 1]int // checks by level and status
	startupLatch  bool                     // every startup check has passed once, since Start
	startupGate   chan struct{}            // closed when startupLatch is set
	draining      bool
	passing       [Ready + 1]bool // the verdicts last published, to emit level events on change
	started       bool
	stopped       bool // the Start context ended; no worker may start
	ctx           context.Context
	workers       sync.WaitGroup
	done          chan struct{}
	events        eventLog
	view          atomic.Pointer[monitorView]
	startupPassed time.Time
}

// monitorView is what the probe endpoints read: replaced whole on every change
// of the check list or of a verdict.
type monitorView struct {
	entries  []*entry
	passing  [Ready + 1]bool
	latched  bool // startup has passed for good
	draining bool
	started  bool
}

// New returns a Monitor with no checks. Nothing runs until Start.
func New(opts ...Option) *Monitor {
	m := &Monitor{
		clock:       systemClock{},
		logger:      slog.Default(),
		defaults:    kubeletDefaults,
		historySize: 60,
		details:     true,
		jitter:      0.1,
		byName:      map[string]*entry{},
		startupGate: make(chan struct{}),
		done:        make(chan struct{}),
		events:      newEventLog(1000),
	}
	for _, o := range opts {
		o(m)
	}
	m.passing = m.verdictsLocked()
	m.publishLocked()
	return m
}

// Option configures a Monitor.
type Option func(*Monitor)

// WithClock sets the clock; the default is the system clock. Tests pass
// healthtest.NewClock.
func WithClock(c Clock) Option {
	return func(m *Monitor) {
		if c != nil {
			m.clock = c
		}
	}
}

// WithLogger sets where check and level transitions are logged. The default is
// slog.Default(); pass slog.New(slog.DiscardHandler) for silence.
func WithLogger(l *slog.Logger) Option {
	return func(m *Monitor) {
		if l != nil {
			m.logger = l
		}
	}
}

// WithHistory sets how many results are kept per check (default 60: ten
// minutes of a 10s check). Values below 1 keep the default.
func WithHistory(n int) Option {
	return func(m *Monitor) {
		if n > 0 {
			m.historySize = n
		}
	}
}

// WithEventLog sets how many events are kept for readers (default 1000).
// Values below 1 keep the default.
func WithEventLog(n int) Option {
	return func(m *Monitor) {
		if n > 0 {
			m.events = newEventLog(n)
		}
	}
}

// WithDetails sets whether the probe endpoints show why a check fails
// (default true). With false, reasons read "reason withheld", as the
// kube-apiserver's do, for endpoints that the public can reach.
func WithDetails(show bool) Option {
	return func(m *Monitor) { m.details = show }
}

// WithJitter spreads later runs of a check by up to ±fraction/2 of its period,
// so that checks added together do not keep firing together. Default 0.1;
// 0 turns it off. The first run is never delayed. Values outside [0, 1] keep
// the default.
func WithJitter(fraction float64) Option {
	return func(m *Monitor) {
		if fraction >= 0 && fraction <= 1 {
			m.jitter = fraction
		}
	}
}

// WithDefaults sets the timing that checks get for their zero fields, for
// example a longer Period for a whole service. Zero fields of d keep
// kubeletDefaults; negative ones are ignored.
func WithDefaults(d Defaults) Option {
	return func(m *Monitor) {
		if d.Period > 0 {
			m.defaults.Period = d.Period
		}
		if d.Timeout > 0 {
			m.defaults.Timeout = d.Timeout
		}
		if d.InitialDelay > 0 {
			m.defaults.InitialDelay = d.InitialDelay
		}
		if d.SuccessThreshold > 0 {
			m.defaults.SuccessThreshold = d.SuccessThreshold
		}
		if d.FailureThreshold > 0 {
			m.defaults.FailureThreshold = d.FailureThreshold
		}
	}
}

// entry is one check's configuration and state.
type entry struct {
	check Check      // with defaults applied; never changes
	timed timedCheck // set for heartbeats and watchdogs, which are judged from timestamps
	kind  string     // "checker", "heartbeat" or "watchdog"

	// guarded by Monitor.mu
	counter counter
	history history
	runs    int
	last    Result
	lastBad Result    // the latest failed run, which explains warn and fail
	since   time.Time // when status last changed
	cancel  context.CancelFunc
	removed bool

	view atomic.Pointer[checkView] // what the probe endpoints read
}

// checkView is one check's state as the probe endpoints show it.
type checkView struct {
	status    Status
	successes int // consecutive, for the reason of a pending check
	failures  int
	runs      int
	last      Result
	reason    string // why the status is what it is: the output of the run that explains it
}

func (e *entry) thresholds() thresholds {
	return thresholds{success: e.check.SuccessThreshold, failure: e.check.FailureThreshold}
}

func (e *entry) publishView() {
	v := &checkView{status: e.counter.status, successes: e.counter.successes, failures: e.counter.failures,
		runs: e.runs, last: e.last, reason: e.last.Output}
	if v.status == Warn || v.status == Fail {
		v.reason = e.lastBad.Output
	}
	e.view.Store(v)
}

// Add registers a check. It starts at once if the Monitor has started. Add
// fails, changing nothing, on an invalid or duplicate name, a missing level or
// checker, a negative duration or threshold, a timeout longer than the period,
// or a startup check once the startup level has passed.
func (m *Monitor) Add(c Check) error {
	c, err := c.withDefaults(m.defaults)
	if err != nil {
		return err
	}
	if c.Checker == nil {
		return fmt.Errorf("check %q: checker is nil: %w", c.Name, ErrInvalidCheck)
	}
	return m.add(&entry{check: c, kind: "checker"})
}

func (m *Monitor) add(e *entry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	name := e.check.Name
	if _, dup := m.byName[name]; dup {
		return fmt.Errorf("add check %q: %w", name, ErrDuplicateName)
	}
	if e.check.Level == Startup && m.startupLatch {
		return fmt.Errorf("add startup check %q: %w (it latches until the process restarts)", name, ErrStartupLatched)
	}
	e.history = newHistory(m.historySize)
	e.publishView()
	m.byName[name] = e
	// Appending never writes within the length a published view holds, so
	// views can share the array; Remove copies.
	m.entries = append(m.entries, e)
	m.counts[e.check.Level][Pending]++
	if m.started {
		m.startWorkerLocked(e, m.clock.Now())
	}
	m.changedLocked(fmt.Sprintf("check %q was added", name))
	return nil
}

// Remove stops a check and forgets it. Levels are judged again without it.
func (m *Monitor) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.byName[name]
	if !ok {
		return fmt.Errorf("remove check %q: no such check", name)
	}
	e.removed = true
	if e.cancel != nil {
		e.cancel()
	}
	delete(m.byName, name)
	m.entries = slices.DeleteFunc(slices.Clone(m.entries), func(x *entry) bool { return x == e })
	m.counts[e.check.Level][e.counter.status]--
	m.changedLocked(fmt.Sprintf("check %q was removed", name))
	return nil
}

// Start starts running the checks and returns at once. Checks run until ctx
// ends; Done is closed once they have all stopped. A second Start does
// nothing.
func (m *Monitor) Start(ctx context.Context) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started {
		m.logger.Warn("health monitor started twice; the second start is ignored")
		return
	}
	m.started, m.ctx = true, ctx
	now := m.clock.Now()
	for _, e := range m.entries {
		m.startWorkerLocked(e, now)
	}
	m.changedLocked("the monitor started")
	go func() {
		<-ctx.Done()
		m.mu.Lock()
		m.stopped = true
		m.mu.Unlock()
		m.workers.Wait()
		close(m.done)
	}()
}

// Done is closed when the context given to Start has ended and every check's
// worker has returned. A checker that ignores its context may still be
// running: Go cannot stop it, and the Monitor does not wait for it.
func (m *Monitor) Done() <-chan struct{} { return m.done }

// Drain makes readiness fail from now on, for a graceful shutdown: load
// balancers stop sending traffic while the process finishes what it has.
// Liveness is unaffected and checks keep running (the kubelet keeps probing
// readiness during termination). Drain cannot be undone.
func (m *Monitor) Drain() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.draining {
		return
	}
	m.draining = true
	m.changedLocked(drainReason)
}

const drainReason = "process is shutting down"

// Passing reports whether the level's endpoint answers 200 now.
func (m *Monitor) Passing(level Level) bool {
	return level.valid() && m.view.Load().passing[level]
}

func (m *Monitor) startWorkerLocked(e *entry, now time.Time) {
	if m.stopped || m.ctx.Err() != nil {
		return
	}
	ctx, cancel := context.WithCancel(m.ctx)
	e.cancel = cancel
	m.workers.Add(1)
	go func() {
		defer m.workers.Done()
		defer cancel()
		if e.timed != nil {
			m.runTimed(ctx, e)
		} else {
			m.runChecker(ctx, e, now)
		}
	}()
}

// record applies one result to a check's state and returns its new status.
func (m *Monitor) record(e *entry, r Result) Status {
	r.Output = capOutput(r.Output)
	m.mu.Lock()
	defer m.mu.Unlock()
	if e.removed {
		return e.counter.status
	}
	from := e.counter.status
	e.counter = e.counter.next(r.OK, e.thresholds())
	e.history.add(r)
	e.runs++
	e.last = r
	if !r.OK {
		e.lastBad = r
	}
	to := e.counter.status
	e.publishView()
	if to != from {
		e.since = r.Time
		m.counts[e.check.Level][from]--
		m.counts[e.check.Level][to]++
		m.checkChangedLocked(e, from, to, r)
	}
	return to
}

func (m *Monitor) checkChangedLocked(e *entry, from, to Status, r Result) {
	c := e.check
	var typ EventType
	switch to {
	case Pass:
		typ = EventCheckPassed
		m.logger.Info("check passed", "check", c.Name, "level", c.Level, "from", from)
	case Warn:
		typ = EventCheckWarned
		m.logger.Warn("check warned", "check", c.Name, "level", c.Level, "output", r.Output,
			"failures", e.counter.failures, "threshold", c.FailureThreshold)
	case Fail:
		typ = EventCheckFailed
		m.logger.Warn("check failed", "check", c.Name, "level", c.Level, "from", from, "output", r.Output)
	default:
		return
	}
	m.emitLocked(Event{Time: r.Time, Type: typ, Check: c.Name, Level: c.Level, From: from, To: to, Output: r.Output})
	reason := fmt.Sprintf("check %q is %s", c.Name, to)
	if r.Output != "" {
		reason += ": " + r.Output
	}
	m.changedLocked(reason)
}

// changedLocked latches startup when it has passed, judges the levels again,
// emits level events for those that changed (once started), and publishes a
// new view. reason says what changed, for the events.
func (m *Monitor) changedLocked(reason string) {
	if m.started && !m.startupLatch && m.startupAllPassing() {
		m.startupLatch = true
		m.startupPassed = m.clock.Now()
		close(m.startupGate)
	}
	verdicts := m.verdictsLocked()
	if m.started {
		for _, l := range []Level{Startup, Live, Ready} {
			if verdicts[l] == m.passing[l] {
				continue
			}
			typ := EventLevelPassed
			if !verdicts[l] {
				typ = EventLevelFailed
				m.logger.Warn("level failed", "level", l, "reason", reason)
			} else {
				m.logger.Info("level passed", "level", l)
			}
			m.emitLocked(Event{Type: typ, Level: l, Output: reason})
		}
	}
	m.passing = verdicts
	m.publishLocked()
}

func (m *Monitor) startupAllPassing() bool {
	n := m.counts[Startup]
	return n[Pending] == 0 && n[Fail] == 0
}

// verdictsLocked is the levels' rule from the counts: /startupz passes once
// every startup check has passed; /livez while no live check fails; /readyz
// when startup has passed, no live check fails, every ready check passes and
// the process is not draining.
func (m *Monitor) verdictsLocked() [Ready + 1]bool {
	var v [Ready + 1]bool
	v[Startup] = m.startupLatch || m.startupAllPassing()
	v[Live] = m.counts[Live][Fail] == 0
	v[Ready] = v[Startup] && v[Live] && !m.draining &&
		m.counts[Ready][Pending] == 0 && m.counts[Ready][Fail] == 0
	return v
}

func (m *Monitor) publishLocked() {
	m.view.Store(&monitorView{entries: m.entries, passing: m.passing, latched: m.startupLatch,
		draining: m.draining, started: m.started})
}

// addTimed adds a heartbeat or watchdog. Their deadlines are exact, so both
// thresholds are 1: a ttl that has passed has passed, and one beat is proof of
// life.
func (m *Monitor) addTimed(name string, level Level, t timedCheck, kind string) error {
	c := Check{Name: name, Level: level, SuccessThreshold: 1, FailureThreshold: 1}
	c, err := c.withDefaults(m.defaults)
	if err != nil {
		return fmt.Errorf("%s: %w", kind, err)
	}
	c.Timeout = 0 // nothing is run, so nothing times out
	return m.add(&entry{check: c, timed: t, kind: kind})
}
