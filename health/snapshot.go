package health

import "time"

// Snapshot is a copy of a Monitor's whole state at one moment, for status
// pages, management APIs and tests. Changing it changes nothing.
type Snapshot struct {
	Startup, Live, Ready bool // whether each level's endpoint answers 200
	Started, Stopped     bool // Start was called; its context has ended
	// StartupPassed is when the startup level latched; zero until then.
	StartupPassed time.Time
	Draining      bool
	// Paused says why checks are paused, as /readyz does: the reason given
	// to Pause, then each owner's of PauseChecks as "owner: reason", joined
	// by "; "; "" while nothing is paused.
	Paused string
	Checks []CheckState // in the order they were added
}

// CheckState is one check's configuration and state.
type CheckState struct {
	Name  string
	Level Level
	Kind  string // Check.Kind: "checker" unless set, "heartbeat", "watchdog"

	Period           time.Duration
	Timeout          time.Duration // 0 for heartbeats and watchdogs, which run nothing
	InitialDelay     time.Duration
	SuccessThreshold int
	FailureThreshold int
	StableFor        time.Duration

	Status  Status
	Stopped bool // by StopCheck, or added so (Check.Disabled): not run, and left out of the levels
	// PausedBy is the owner whose PauseChecks holds the check, until its
	// ResetChecks; "" when none does (Snapshot.Paused says of Pause).
	PausedBy string
	// Since is when Status last changed; zero while the check is still pending.
	Since time.Time
	// StableAt is when a check whose runs pass but which has not passed for
	// StableFor yet will pass, unless a run fails first; zero when it waits
	// for nothing.
	StableAt             time.Time
	ConsecutiveSuccesses int
	ConsecutiveFailures  int
	Runs                 int // results recorded since the check was added or last started over (Reset)
	// History is the last results, oldest first (WithHistory), as they were
	// recorded, but for their times' monotonic clock readings, which are
	// not kept: compare them with Equal.
	History []Result
}

// Last returns the latest result, and false when there is none yet.
func (s CheckState) Last() (Result, bool) {
	if len(s.History) == 0 {
		return Result{}, false
	}
	return s.History[len(s.History)-1], true
}

// Snapshot copies the Monitor's state.
func (m *Monitor) Snapshot() Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := Snapshot{
		Startup: m.passing[Startup], Live: m.passing[Live], Ready: m.passing[Ready],
		Started: m.levels.started, Stopped: m.levels.stopped,
		StartupPassed: m.startupPassed, Draining: m.levels.draining, Paused: m.pausedFor,
		Checks: make([]CheckState, 0, len(m.entries)),
	}
	for _, e := range m.entries {
		s.Checks = append(s.Checks, e.stateLocked())
	}
	return s
}

// CheckState copies one check's state; false when there is no such check.
func (m *Monitor) CheckState(name string) (CheckState, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.byName[name]
	if !ok {
		return CheckState{}, false
	}
	return e.stateLocked(), true
}

func (e *entry) stateLocked() CheckState {
	c := e.check
	var stableAt time.Time
	if at, waiting := e.state.stableAt(e.thresholds()); waiting {
		stableAt = at
	}
	var pausedBy string
	if e.pause != nil {
		pausedBy = e.pause.owner
	}
	return CheckState{
		Name: c.Name, Level: c.Level, Kind: c.Kind,
		Period: c.Period, Timeout: c.Timeout, InitialDelay: c.InitialDelay,
		SuccessThreshold: c.SuccessThreshold, FailureThreshold: c.FailureThreshold, StableFor: c.StableFor,
		Status: e.state.status, Stopped: e.stopped, PausedBy: pausedBy, Since: e.state.since,
		ConsecutiveSuccesses: e.state.successes, ConsecutiveFailures: e.state.failures,
		Runs: e.state.runs, History: e.history.results(), StableAt: stableAt,
	}
}
