package health

import (
	"context"
	"encoding/json"
	"time"
)

// EventType names what an event reports.
type EventType string

// The event types. The engine emits the check, level and checks-reset ones,
// and stopping on Drain; the agent emits the service ones and its own
// stopping, saying why, through Emit; Notify emits notices.
const (
	EventCheckPassed    EventType = "check-passed" // a check became pass (from pending, warn or fail)
	EventCheckWarned    EventType = "check-warned" // a passing check failed, below its failure threshold, or its result warns
	EventCheckFailed    EventType = "check-failed" // a check became fail
	EventLevelPassed    EventType = "level-passed" // an endpoint started answering 200
	EventLevelFailed    EventType = "level-failed" // an endpoint started answering 503
	EventServiceStarted EventType = "service-started"
	EventServiceExited  EventType = "service-exited"
	EventStopping       EventType = "stopping" // the process began shutting down: readiness fails from now on
	// EventChecksReset: every check started over (Reset, or Pause), pending
	// again with startup first, or the checks of one service did
	// (ResetChecks, or PauseChecks: Service names it); Output says why,
	// such as the workload restarting.
	EventChecksReset EventType = "checks-reset"
	// The checks a started Monitor judges changed: Add, Remove, StopCheck and
	// StartCheck (Check and Level say which). They come before the level
	// events of the change. A Monitor that has not started emits none: its
	// checks are its configuration, not news.
	EventCheckAdded   EventType = "check-added"
	EventCheckRemoved EventType = "check-removed"
	EventCheckStopped EventType = "check-stopped" // left out of the levels, kept to look at
	EventCheckStarted EventType = "check-started" // a stopped check counts again
	// EventNotice: the program told whoever reads its events something no
	// check sees ("config reloaded", "leader elected"), with Notify; Key
	// and Data say what.
	EventNotice EventType = "notice"
)

// Transition reports whether events of the type carry a check's status
// change (From and To): check-passed, check-warned and check-failed.
func (t EventType) Transition() bool {
	return t == EventCheckPassed || t == EventCheckWarned || t == EventCheckFailed
}

// Event is one change of state. ID grows by one with every event of a Monitor,
// so a reader that remembers the last ID it saw misses nothing while it is away,
// as long as the log still holds it. Fields other than ID, Time and Type are set
// by type.
type Event struct {
	ID   uint64    `json:"id"`
	Time time.Time `json:"time"`
	Type EventType `json:"type"`

	// check-* and level-*
	Check  string `json:"check,omitempty"`
	Level  Level  `json:"level,omitempty"`
	From   Status `json:"-"`                // check-passed, -warned, -failed only
	To     Status `json:"-"`                // check-passed, -warned, -failed only
	Output string `json:"output,omitempty"` // the result or reason behind the change

	// service-*; Service also on checks-reset, naming the owner of
	// ResetChecks or PauseChecks
	Service  string `json:"service,omitempty"`
	PID      int    `json:"pid,omitempty"`
	ExitCode *int   `json:"exitCode,omitempty"` // nil when killed by a signal
	Signal   string `json:"signal,omitempty"`
	Restarts int    `json:"restarts,omitempty"`
	Reason   string `json:"reason,omitempty"`

	// notice (Notify). Every reader of the event shares Data: read it, do
	// not change it.
	Key  string            `json:"key,omitempty"`
	Data map[string]string `json:"data,omitempty"`
}

// eventJSON is Event on the wire: from and to are there for a check's status
// changes only, since pending is the zero Status.
type eventJSON struct {
	eventFields
	From *Status `json:"from,omitempty"`
	To   *Status `json:"to,omitempty"`
}

type eventFields Event // Event without its methods

// MarshalJSON writes the event with from and to on a check's status changes
// only.
func (e Event) MarshalJSON() ([]byte, error) {
	j := eventJSON{eventFields: eventFields(e)}
	if e.Type.Transition() {
		j.From, j.To = &e.From, &e.To
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (e *Event) UnmarshalJSON(b []byte) error {
	var j eventJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*e = Event(j.eventFields)
	if j.From != nil {
		e.From = *j.From
	}
	if j.To != nil {
		e.To = *j.To
	}
	return nil
}

// eventLog is a bounded ring of events. Appending never blocks; readers copy
// out what they want.
//
// The ring grows as events come, up to size, rather than being made whole
// at once: an Event is about 200 bytes, so the default log of 1,000 would
// be 200 KB of pointer-holding memory that every garbage collection scans
// from the start, where a program's checks rarely change more than a few
// dozen times in an hour (a server answering probes pays for that scan on
// every request's share of the collections).
type eventLog struct {
	buf     []Event // the kept events, event i (from 1) at (i-1)%size once full
	size    int     // how many are kept at most
	lastID  uint64
	changed chan struct{} // closed on the next append, to wake blocked readers
	waited  bool          // a reader holds changed, so the next append must close it
}

// firstEvents is the ring's first allocation: the start's events of a
// program with a few checks (each passing, then the levels) fit in it.
const firstEvents = 16

func newEventLog(size int) eventLog {
	return eventLog{size: size, changed: make(chan struct{})}
}

func (l *eventLog) append(e Event) Event {
	l.lastID++
	e.ID = l.lastID
	switch {
	case len(l.buf) < cap(l.buf):
		l.buf = append(l.buf, e)
	case len(l.buf) < l.size:
		// Double, up to size, never beyond it.
		grown := make([]Event, 0, min(max(2*cap(l.buf), firstEvents), l.size))
		l.buf = append(append(grown, l.buf...), e)
	default:
		l.buf[int((e.ID-1)%uint64(l.size))] = e
	}
	if l.waited {
		close(l.changed)
		l.changed, l.waited = make(chan struct{}), false
	}
	return e
}

// after returns the kept events with an ID above id, oldest first. An id
// beyond the last one is a cursor from another Monitor (a previous run of the
// process): the reader gets the whole log rather than waiting for ids it has
// seen elsewhere.
func (l *eventLog) after(id uint64) []Event {
	if id > l.lastID {
		id = 0
	}
	if id == l.lastID || len(l.buf) == 0 {
		return nil
	}
	oldest := l.lastID - uint64(len(l.buf)) + 1
	first := max(id+1, oldest)
	out := make([]Event, 0, l.lastID-first+1)
	for i := first; i <= l.lastID; i++ {
		out = append(out, l.buf[int((i-1)%uint64(l.size))])
	}
	return out
}

// Events returns the kept events with an ID above after, oldest first; nil when
// there are none. Events(0) returns every event the log still holds. When the
// first returned ID is above after+1, the log dropped the ones between (it keeps
// the last WithEventLog of them). IDs start at 1 with each Monitor: a cursor
// above the last ID comes from an earlier one, and gets the whole log.
func (m *Monitor) Events(after uint64) []Event {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.events.after(after)
}

// WaitEvents is Events that blocks until there is at least one event with an ID
// above after, or ctx ends (then it returns ctx's error). A reader that is slow
// or gone never holds up the Monitor: events are kept in a bounded log, not
// sent down channels. A reader that waits again and again is simpler as a
// Follower, which also says what it missed.
func (m *Monitor) WaitEvents(ctx context.Context, after uint64) ([]Event, error) {
	evs, _, err := m.Follow(after).Next(ctx)
	return evs, err
}

// LastEventID returns the ID of the last event emitted, 0 before the first:
// Follow(LastEventID()) follows what comes from now on.
func (m *Monitor) LastEventID() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.events.lastID
}

// Emit adds an event of the caller's to the log, such as the agent's
// service-started, and returns it with its ID and (when zero) Time set. Its
// Output and Reason are kept as a result's output is: redacted, escaped and
// capped (see WithRedaction and Result.Output).
func (m *Monitor) Emit(e Event) Event {
	e.Output, e.Reason = m.output(e.Output), m.output(e.Reason)
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.emitLocked(e)
}

func (m *Monitor) emitLocked(e Event) Event {
	if e.Time.IsZero() {
		e.Time = m.clock.Now()
	}
	m.stoppingSaid = m.stoppingSaid || e.Type == EventStopping
	return m.events.append(e)
}

// membershipLocked emits a change of the checks a started Monitor judges.
func (m *Monitor) membershipLocked(typ EventType, c Check) {
	if m.levels.started {
		m.emitLocked(Event{Type: typ, Check: c.Name, Level: c.Level})
	}
}
