package health

import (
	"log/slog"
	"time"
)

// The defaults of New, and why.
const (
	// DefaultHistory is how many results a check keeps: ten minutes of a 10s
	// check, enough to see a flap.
	DefaultHistory = 60
	// DefaultEventLog is how many state changes the log keeps, and how many
	// notices apart (see WithEventLog): hours of transitions
	// for a reader that reconnects, at a bounded cost (about 200 bytes an
	// event, and its output and data; the log grows to it as events come).
	DefaultEventLog = 1000
	// DefaultJitter places each check's runs after its first at one of four
	// points in the first tenth of its period, drawn once (WithJitter):
	// checks added together run in four batches, not all at once nor each
	// on its own wake-up, and none runs late by more than a tenth of its
	// period.
	DefaultJitter = 0.1
)

// configure gives the Monitor its options: each default below, then opts
// over them. The options left out start as their zero values: no output is
// redacted, no recorder is told of results, and the JSON format says nothing
// of the service.
func (m *Monitor) configure(opts []Option) {
	m.clock = systemClock{}   // checks run on real time; tests pass a fake
	m.logger = slog.Default() // the program's own log, where its operator looks
	// The kubelet's timing and thresholds, so that a check means what a
	// Kubernetes probe with the same fields would.
	m.defaults = kubeletDefaults
	m.historySize = DefaultHistory
	// Why a check fails is what an operator reading a probe needs; an
	// endpoint the public can reach withholds it (WithDetails).
	m.details.Store(true)
	m.service.Store(&ServiceInfo{})
	m.jitter = DefaultJitter
	m.events = newEventLog(DefaultEventLog)
	for _, o := range opts {
		o(m)
	}
	// The Monitor never waits on its logger (WithLogger).
	if _, queued := m.logger.Handler().(*LogQueue); !queued {
		m.ownLog = NewLogQueue(m.logger.Handler(), DefaultLogQueue)
		m.logger = slog.New(m.ownLog)
	}
}

// Option configures a Monitor. Options ignore values outside their range,
// keeping the default, since New cannot fail.
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
//
// A line gives a key once and never one of slog's own (time, level, msg,
// source), so that a collector that keeps one value per key (Loki, Vector,
// jq) loses nothing: a check's level, or the level a line is about, is
// check_level, and level stays the line's severity.
//
// The Monitor never waits on its logger: unless the logger's handler is a
// LogQueue already, New puts one (of DefaultLogQueue lines) in front of it, so
// that a log sink that blocks drops lines rather than stop the checks. To
// count the dropped lines, or share one queue with the rest of a program, give
// a logger over a LogQueue of your own and read its Dropped.
func WithLogger(l *slog.Logger) Option {
	return func(m *Monitor) {
		if l != nil {
			m.logger = l
		}
	}
}

// WithHistory sets how many results are kept per check (DefaultHistory).
// Values below 1 keep the default.
func WithHistory(n int) Option {
	return func(m *Monitor) {
		if n > 0 {
			m.historySize = n
		}
	}
}

// WithEventLog sets how many events are kept for readers (DefaultEventLog):
// that many state changes, and as many notices apart, so that notices push
// out older notices only. Values below 1 keep the default.
func WithEventLog(n int) Option {
	return func(m *Monitor) {
		if n > 0 {
			m.events = newEventLog(n)
		}
	}
}

// WithDetails sets whether the probe endpoints show why a check fails
// (default true). With false, every reason reads "reason withheld" and no
// observed value is shown, as the kube-apiserver does on endpoints the public
// can reach.
func WithDetails(show bool) Option {
	return func(m *Monitor) { m.details.Store(show) }
}

// SetDetails changes what WithDetails set, on a Monitor that may be
// running: from the next answer on (a reloaded configuration's).
func (m *Monitor) SetDetails(show bool) { m.details.Store(show) }

// WithRedaction sets a function that every result's output goes through
// before it is kept, and so before any endpoint, event, log line or snapshot
// shows it: for the secrets a checker's error may quote (a password in a
// URL, a token in a command's output). The default keeps outputs as they are.
func WithRedaction(redact func(string) string) Option {
	return func(m *Monitor) { m.redact = redact }
}

// Recorded is one result as a Monitor recorded it, for WithRecorder.
type Recorded struct {
	Check  string
	Level  Level
	Kind   string
	Result Result
	// From and To are the check's status before and after the result; equal
	// when it changed nothing.
	From, To Status
	// Stable: no run ended, the check's wait to be stable did
	// (Check.StableFor), and it passed. Result is its latest result, told
	// of already.
	Stable bool
}

// WithRecorder sets a function told of every result the Monitor records, in
// order for each check, once the state has changed and outside the Monitor's
// lock: for metrics that must count every run, which the bounded history and
// event log cannot promise; and of every change of status that no result
// made (Recorded.Stable: a check that became stable). It is called by the
// worker that ran the check, which takes the other runs of its tick after
// it, so it must be quick.
func WithRecorder(f func(Recorded)) Option {
	return func(m *Monitor) { m.recorder = f }
}

// ServiceInfo is what the IETF JSON format of the probe endpoints says of
// the service at its top level (draft-inadarei-api-health-check-06, section
// 3). Each field is left out of the answers while it is empty, as all are by
// default.
type ServiceInfo struct {
	// ServiceID is serviceId: a unique identifier of the service in the
	// application's scope, such as its name, or an instance's (a pod's).
	ServiceID string
	// Version is version: the public version of the service, its API's,
	// which changes only when its interface does, such as "2".
	Version string
	// ReleaseID is releaseId: the release of its implementation, which
	// changes with every build or deploy, such as "1.4.2" or a commit.
	ReleaseID string
}

// WithServiceInfo sets what the IETF JSON format says of the service at its
// top: serviceId, version and releaseId. By default it says none of them.
func WithServiceInfo(s ServiceInfo) Option {
	return func(m *Monitor) { m.service.Store(&s) }
}

// SetServiceInfo changes what WithServiceInfo set, on a Monitor that may be
// running: from the next answer on (a reloaded configuration's).
func (m *Monitor) SetServiceInfo(s ServiceInfo) { m.service.Store(&s) }

// WithJitter gives each check a phase: its second run comes a period after
// its first plus its phase, and every later run exactly a period after the
// one before. The phase is one of four steps of a quarter of fraction ×
// period, each step cut to whole ticks (Tick): with DefaultJitter, 0, 20,
// 40 or 60 ms for 1s. It is drawn at random when the check starts (and at
// Reset) and kept, as the kubelet keeps a probe's offset, and by an Update
// that keeps the period: the checks started together run in at most four
// wake-ups a period. 0 turns it off: every run a period after the one
// before. The first run is never delayed. Values outside [0, 1] keep the
// default.
func WithJitter(fraction float64) Option {
	return func(m *Monitor) {
		if fraction >= 0 && fraction <= 1 {
			m.jitter = fraction
		}
	}
}

// WithDefaults sets the timing that checks get for their zero fields, for
// example a longer Period for a whole service. Positive fields of d replace
// the defaults so far (the kubelet's, to begin with); zero and negative ones
// leave them. Since a zero field means "the default", a nonzero default
// InitialDelay cannot be overridden with 0 by a check.
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

// TimedOption sets more of a heartbeat or a watchdog than its name, level
// and deadline.
type TimedOption func(*timedOptions)

type timedOptions struct {
	stableFor       time.Duration
	endUnitsOnReset bool
	disabled        bool
}

func timedOpts(opts []TimedOption) timedOptions {
	var o timedOptions
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// StableFor is Check.StableFor, for a heartbeat or a watchdog: it passes
// once it has passed that long with no failure (a heartbeat, once beaten in
// time for d). Default 0: at once.
func StableFor(d time.Duration) TimedOption {
	return func(o *timedOptions) { o.stableFor = d }
}

// EndUnitsOnReset makes Reset and Pause end a watchdog's units of work under
// way, for units that belong to the instance that a Reset starts over (a
// workload that restarted: the agent's watchdogs) rather than to the
// program that calls Reset, which goes on. Without it, Reset keeps them: a
// unit of the program that hangs still hangs. A unit so ended is not
// running: its done does nothing, and End of its id reports false. It is a
// watchdog's option only: Heartbeat refuses it.
func EndUnitsOnReset() TimedOption {
	return func(o *timedOptions) { o.endUnitsOnReset = true }
}

// Disabled is Check.Disabled, for a heartbeat or a watchdog: it is added
// stopped, neither judged nor counted until StartCheck. As with any stopped
// check, what the program signals meanwhile (a beat, a unit of work) is
// kept, and judged once it starts. Default: it counts from Start.
func Disabled() TimedOption {
	return func(o *timedOptions) { o.disabled = true }
}
