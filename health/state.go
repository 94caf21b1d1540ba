package health

import (
	"fmt"
	"time"
)

// Status is what a check's recent results add up to.
type Status int

const (
	// Pending: no decision yet. A check is pending until its first
	// SuccessThreshold consecutive passes or FailureThreshold consecutive
	// failures. Pending fails readiness and startup, not liveness.
	Pending Status = iota
	// Pass: the last SuccessThreshold runs passed, or the run that ended a
	// warning did, and none failed since.
	Pass
	// Warn: the check passes, but its latest runs failed, fewer than
	// FailureThreshold of them, or its latest result warns (Result.Warn).
	// It still counts as passing.
	Warn
	// Fail: the last FailureThreshold runs failed, and the check has not passed
	// SuccessThreshold times in a row since.
	Fail
)

var statusNames = [...]string{Pending: "pending", Pass: "pass", Warn: "warn", Fail: "fail"}

func (s Status) String() string {
	if s >= Pending && s <= Fail {
		return statusNames[s]
	}
	return fmt.Sprintf("status(%d)", int(s))
}

// MarshalText writes the status's name, as String does.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a status's name.
func (s *Status) UnmarshalText(b []byte) error {
	for i, name := range statusNames {
		if string(b) == name {
			*s = Status(i)
			return nil
		}
	}
	return fmt.Errorf("unknown status %q (want pending, pass, warn or fail)", b)
}

// passing reports whether the status counts as healthy for a level that does
// not tolerate pending (readiness, startup).
func (s Status) passing() bool { return s == Pass || s == Warn }

// This file is the state machine of vitals, all of it: how results make a
// check's status (checkState.after), how time alone makes a waiting check
// stable (checkState.settle), which changes are events (transition.event),
// whether a check runs now (runFacts.held), and how statuses make the
// levels' verdicts (levelState.verdicts). Everything here is a pure function of its
// inputs, table-tested with no goroutine and no clock.

// checkState is one check's state between runs.
type checkState struct {
	status    Status
	successes int // consecutive passing runs, up to now
	failures  int // consecutive failing runs, up to now
	runs      int
	last      Result
	badOutput string    // the output of the latest result that failed or warned, which explains warn and fail
	since     time.Time // when status last changed; zero while it never has
	// waiting: the runs met the success threshold of a check that was not
	// passing, at stableFrom, and it passes once stableFor has passed since
	// with no failed run (Check.StableFor).
	stableFrom time.Time
	waiting    bool
	// warned: the latest result that decided (not Undecided) warns. (The
	// two bools share a word: every check's entry holds a checkState.)
	warned bool
}

// thresholds are a check's SuccessThreshold and FailureThreshold, and its
// StableFor: how long it must have passed before it counts as passing.
type thresholds struct {
	success, failure int
	stableFor        time.Duration
}

// transition is a change of a check's status.
type transition struct{ from, to Status }

// after is the state after one more result r, recorded at now, and the
// transition it made, if any. Counting consecutive equal results is the
// kubelet worker's rule:
//
//	pending --success×S--> pass     pending --failure×F--> fail
//	pass    --failure----> warn     (fewer than F failures in a row)
//	warn    --success----> pass     warn    --failure×F--> fail
//	fail    --success×S--> pass
//
// An undecided result (Result.Undecided) changes nothing but the last
// result: the check keeps its status and its counts.
//
// A success that warns (Result.Warn) counts as a success, but where the
// check passes it reports warn instead: pass --warning--> warn, pending
// --warning×S--> warn, and warn stays warn until a success that does not
// warn.
//
// With a stableFor, the successes that would make a pending or failed check
// pass start a wait instead, and the check passes once stableFor has passed
// with no failed run (settle); a failed run ends the wait, so that the next
// S successes start it over.
func (s checkState) after(r Result, t thresholds, now time.Time) (checkState, *transition) {
	from := s.status
	if r.Undecided {
		// A run that decided nothing is kept, and counts for nothing: the
		// status, the consecutive counts and a wait to be stable go on.
		s.runs++
		s.last = r
		return s.settled(from, t, now)
	}
	s.warned = r.OK && r.Warn
	if r.OK {
		s.successes++
		s.failures = 0
		if r.Warn {
			s.badOutput = r.Output
		}
	} else {
		s.failures++
		s.successes = 0
		s.badOutput = r.Output
		s.waiting, s.stableFrom = false, time.Time{}
	}
	s.runs++
	s.last = r
	switch {
	case !r.OK && s.failures >= t.failure:
		s.status = Fail
	case !r.OK && s.status.passing():
		s.status = Warn
	case r.OK && r.Warn && s.status.passing():
		s.status = Warn
	case r.OK && s.status == Warn:
		s.status = Pass // one success ends a warning: the check never stopped passing
	case r.OK && s.successes >= t.success && !s.status.passing() && !s.waiting:
		s.waiting, s.stableFrom = true, now // with no stableFor, settled at once below
	}
	return s.settled(from, t, now)
}

// settle is the state at now of a check whose last result is s's: a check
// that has waited stableFor since its runs met the success threshold passes.
func (s checkState) settle(t thresholds, now time.Time) (checkState, *transition) {
	return s.settled(s.status, t, now)
}

func (s checkState) settled(from Status, t thresholds, now time.Time) (checkState, *transition) {
	if s.waiting && !now.Before(s.stableFrom.Add(t.stableFor)) {
		s.status, s.waiting, s.stableFrom = Pass, false, time.Time{}
		if s.warned {
			s.status = Warn // it passes, and its latest result that decided warns
		}
	}
	if s.status == from {
		return s, nil
	}
	s.since = now
	return s, &transition{from, s.status}
}

// stableAt is when a waiting check passes unless a run fails first; false
// when it waits for nothing.
func (s checkState) stableAt(t thresholds) (time.Time, bool) {
	return s.stableFrom.Add(t.stableFor), s.waiting
}

// event is the type of the event a transition makes. Every transition has
// one, since pending is never entered again.
func (tr transition) event() EventType {
	switch tr.to {
	case Pass:
		return EventCheckPassed
	case Warn:
		return EventCheckWarned
	default:
		return EventCheckFailed
	}
}

// hold is what keeps a check from running now, if anything does.
//
// Whether a check runs now is one question, runFacts.held, that each part of
// a check's life asks with the facts it has and answers in its own way:
//
//   - RunNow counts a result only when nothing holds the check, every fact
//     read under the Monitor's mutex.
//   - heldLocked, whether a life starts (and whether a wait to be stable
//     may end), asks it as if startup had passed: a check that waits for
//     startup starts its life all the same, parked at the startup gate.
//   - A scheduled check's step knows it is neither stopped nor paused from
//     its life being current, ends its life when it has passed (stops), and
//     parks when it waits for startup.
//   - stops asks it of a status alone, after a run: a life stopped or paused
//     has ended already.
type hold uint8

const (
	notHeld    hold = iota // it runs
	heldOff                // stopped (StopCheck, Check.Disabled) or removed
	heldPaused             // by Pause, or by its owner's PauseChecks
	// heldPassed: a startup check that has passed is done, as the kubelet's
	// startup probe is, until it starts over.
	heldPassed
	// heldForStartup: a live or ready check runs once startup has passed.
	heldForStartup
)

// runFacts are what says whether a check runs now.
type runFacts struct {
	level     Level
	status    Status
	off       bool // stopped or removed
	paused    bool // by Pause, or by its owner's PauseChecks
	startedUp bool // startup has passed for it: the startup gate its life took is closed
}

// held is what keeps the check from running now, or notHeld. Of several
// holds, it names the first in the order above; the callers that tell holds
// apart look for heldPassed and heldForStartup, which no check has at once.
func (f runFacts) held() hold {
	switch {
	case f.off:
		return heldOff
	case f.paused:
		return heldPaused
	case f.level == Startup && f.status == Pass:
		return heldPassed
	case f.level != Startup && !f.startedUp:
		return heldForStartup
	}
	return notHeld
}

// stops reports whether a check of level l is done running at status s,
// whatever else holds it: startup checks stop once passed.
func stops(l Level, s Status) bool {
	return runFacts{level: l, status: s, startedUp: true}.held() == heldPassed
}

// levelState is what the levels' verdicts are made of.
type levelState struct {
	counts   [Ready + 1][Fail + 1]int // checks by level and status
	started  bool
	latched  bool // startup passed once since Start; it stays passed
	draining bool
	stopped  bool // the context given to Start has ended: nothing runs any more
	// paused: by Pause, or by some owner's PauseChecks, until its Reset: a
	// workload is down between two runs, and nothing is vouched for.
	paused bool
	// pausedAll: by Pause, until Reset: no check runs. An owner's pause holds
	// its own checks only, so that the others' startup may still latch.
	pausedAll bool
}

// latches reports whether the startup level passes for good now: once
// started and not paused by Pause, when no startup check is pending or
// failing. An owner's pause of a startup check keeps it pending, which is
// enough.
func (l levelState) latches() bool {
	n := l.counts[Startup]
	return l.started && !l.latched && !l.pausedAll && n[Pending] == 0 && n[Fail] == 0
}

// verdicts is the levels' rule: /startupz passes once startup has latched;
// /livez while no live check fails (pending does not fail liveness: the
// kubelet starts liveness as success); /readyz when startup has latched, no
// live check fails, every ready check passes or warns, and the process is
// neither draining, stopped nor paused (by Pause, or by any owner's
// PauseChecks).
func (l levelState) verdicts() [Ready + 1]bool {
	var v [Ready + 1]bool
	v[Startup] = l.latched
	v[Live] = l.counts[Live][Fail] == 0
	v[Ready] = v[Startup] && v[Live] && !l.draining && !l.stopped && !l.paused &&
		l.counts[Ready][Pending] == 0 && l.counts[Ready][Fail] == 0
	return v
}
