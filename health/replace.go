package health

import (
	"fmt"
	"slices"
	"time"
)

// Replace puts c in the place of the check of its name, as one change: the
// endpoints answer from the old check until the change and from c after it,
// never from neither nor both, and the check keeps its place in the order
// of the checks. c is a new check: it starts over as Add starts one, pending
// with a history of its own (after its InitialDelay, and for a live or ready
// check once startup passes), and a started Monitor emits check-removed and
// check-added for it, before the level events of the change. It is stopped
// when c is Disabled, as Add leaves it, whether or not the old one was.
//
// Use it when the check tests something else (another target, another
// kind); when only its timing or thresholds change, Update keeps what it
// has learnt. A heartbeat or a watchdog is replaced by Remove and its
// constructor. Replace fails, changing nothing, where Add would, and on a
// name no check has.
func (m *Monitor) Replace(c Check) error { return m.swap(c, false) }

// wakeToSettleLocked wakes e's new life the moment it has been stable for
// StableFor, when it waits to be, not at its next run.
func (m *Monitor) wakeToSettleLocked(e *entry) {
	if at, waiting := e.state.stableAt(e.thresholds()); waiting {
		m.sched.wakeBy(e, at)
	}
}

// Update is Replace for a check that tests the same thing with another
// timing, other thresholds or a checker made anew (a program that rebuilds
// its checks from a changed configuration): c takes over the check's
// status, counters, last result and history, and whether it is stopped,
// and no event says so; the
// levels are judged again with its thresholds, which apply from its next
// result. With the check's Period, its next run is due when the check's
// was, at the check's phase (WithJitter): a reload leaves the checks in the
// batches they run in. With another Period, its next run is due that
// Period after the last one began. Either way at once when that is past
// (a run under way, which the update cuts short, is made up at once); a
// check that has not run yet runs as a new one would. Its Level must be
// the check's: a check that moves to another level is a new check
// (Replace).
func (m *Monitor) Update(c Check) error { return m.swap(c, true) }

// swap is Replace (keep false) and Update (keep true).
func (m *Monitor) swap(c Check, keep bool) error {
	verb := map[bool]string{false: "replace", true: "update"}[keep]
	c, err := m.checked(c)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.unlockAndLog()
	name := c.Name
	old, ok := m.byName[name]
	switch {
	case m.levels.stopped:
		return fmt.Errorf("%s check %q: %w", verb, name, ErrStopped)
	case !ok:
		return fmt.Errorf("%s check %q: %w", verb, name, ErrNoSuchCheck)
	case old.timed != nil:
		return fmt.Errorf("%s check %q: %w: it is a %s, judged from the program's own calls: Remove it and make it anew",
			verb, name, ErrInvalidCheck, old.check.Kind)
	case keep && c.Level != old.check.Level:
		return fmt.Errorf("update check %q: %w: its level is %v, not %v: a check that moves to another level is a new one (Replace)",
			name, ErrInvalidCheck, old.check.Level, c.Level)
	case !keep && c.Level == Startup && m.levels.latched:
		return fmt.Errorf("replace startup check %q: %w (it latches until the process restarts)", name, ErrStartupLatched)
	}

	// An update that keeps the period keeps the check's place in it: its
	// next run is due when the old check's was, at its phase, and so in the
	// batch it ran in (a reload updates every check at once).
	var (
		placedDue   time.Time
		placedPhase time.Duration
		placed      bool
	)
	if keep && c.Period == old.check.Period {
		placedDue, placedPhase, placed = m.sched.placeOf(old)
	}
	e := &entry{check: c, stopped: old.stopped, pause: old.pause, gen: old.gen}
	e.place.index = -1
	if keep {
		e.state, e.history, e.startup = old.state, old.history, old.startup
		e.lastAt.Store(old.lastAt.Load())
		e.lastObs.Store(old.lastObs.Load())
	} else {
		e.history, e.stopped = newHistory(m.historySize), c.Disabled
	}
	old.removed = true
	m.stopWorkerLocked(old)
	if !old.stopped {
		m.levels.counts[old.check.Level][old.state.status]--
	}
	if !e.stopped {
		m.levels.counts[e.check.Level][e.state.status]++
	}
	e.publishView()
	m.byName[name] = e
	// A published view may hold the array: change a copy.
	entries := slices.Clone(m.entries)
	entries[slices.Index(entries, old)] = e
	m.entries = entries
	if m.levels.started {
		now := m.clock.Now()
		switch {
		case !keep || e.state.runs == 0:
			m.startWorkerLocked(e, now)
		case !m.heldLocked(e) && m.ctx.Err() == nil && placed:
			// A due time past (a run under way, which the update cut
			// short) runs at once, as any late run does.
			m.sched.startPhased(e, e.gen, e.startup, placedDue, placedPhase)
			m.wakeToSettleLocked(e)
		case !m.heldLocked(e) && m.ctx.Err() == nil:
			due := e.state.last.Time.Add(c.Period)
			if due.Before(now) {
				due = now
			}
			m.sched.start(e, e.gen, e.startup, due)
			m.wakeToSettleLocked(e)
		}
		if !keep {
			m.membershipLocked(EventCheckRemoved, old.check)
			m.membershipLocked(EventCheckAdded, e.check)
		}
	}
	m.changedLocked(fmt.Sprintf("check %q was %sd", name, verb))
	return nil
}
