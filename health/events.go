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
	// The agent's file was read again (vitals reload, SIGHUP): reloaded
	// when what changed was applied, Output saying what was added, changed
	// and removed; rejected when the file was refused, and nothing changed,
	// Output saying why.
	EventConfigReloaded EventType = "config-reloaded"
	EventConfigRejected EventType = "config-rejected"
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
	// Occurrences is how many notices of Key the event stands for, when
	// more than one: repeats within their repeat-after window
	// (NotifyRepeating) count here, with Data the last one's and
	// LastOccurred its time, instead of adding events. 0 for one.
	Occurrences  int       `json:"occurrences,omitempty"`
	LastOccurred time.Time `json:"lastOccurred,omitzero"`
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

// eventLog is the events kept for readers: two bounded rings under one
// sequence of IDs, one of state changes (every type but notice) and one of
// notices, so that however many notices a program records, they push out
// older notices only, never a check's, a level's or a service's change.
// Appending never blocks; readers copy out what they want.
type eventLog struct {
	changes, notices ring
	lastID           uint64
	// lastNotice is, for each key of a kept notice, the newest notice of
	// the key: where a repeat within its window is counted (see Notify). It
	// holds no key whose notices the ring dropped.
	lastNotice map[string]uint64
	changed    chan struct{} // closed on the next append, to wake blocked readers
	waited     bool          // a reader holds changed, so the next append must close it
}

// ring is a bounded ring of events in the order of their IDs, which grow
// but need not follow one another (the other ring has those between).
//
// It grows as events come, up to size, rather than being made whole at
// once: an Event is about 200 bytes, so a log of 1,000 would be 200 KB of
// pointer-holding memory that every garbage collection scans from the
// start, where a program's checks rarely change more than a few dozen times
// in an hour (a server answering probes pays for that scan on every
// request's share of the collections).
type ring struct {
	buf  []Event // the kept events, the oldest at head once full
	size int     // how many are kept at most
	head int     // the oldest once full
	// dropped is the ID of the newest event the ring dropped, 0 for none.
	dropped uint64
}

// firstEvents is a ring's first allocation: the start's events of a
// program with a few checks (each passing, then the levels) fit in it.
const firstEvents = 16

func newEventLog(size int) eventLog {
	return eventLog{changes: ring{size: size}, notices: ring{size: size},
		lastNotice: map[string]uint64{}, changed: make(chan struct{})}
}

// push appends e, and returns the event it dropped to make room, if any.
func (r *ring) push(e Event) (Event, bool) {
	switch {
	case len(r.buf) < cap(r.buf):
		r.buf = append(r.buf, e)
	case len(r.buf) < r.size:
		// Double, up to size, never beyond it.
		grown := make([]Event, 0, min(max(2*cap(r.buf), firstEvents), r.size))
		r.buf = append(append(grown, r.buf...), e)
	default:
		old := r.buf[r.head]
		r.buf[r.head] = e
		r.head = (r.head + 1) % r.size
		r.dropped = old.ID
		return old, true
	}
	return Event{}, false
}

// at is the i-th kept event, oldest first.
func (r *ring) at(i int) *Event { return &r.buf[(r.head+i)%len(r.buf)] }

// find is the kept event of id, nil when the ring holds none.
func (r *ring) find(id uint64) *Event {
	i := r.from(id)
	if i < len(r.buf) && r.at(i).ID == id {
		return r.at(i)
	}
	return nil
}

// from is the index of the first kept event with an ID of id or above;
// len(buf) when there is none.
func (r *ring) from(id uint64) int {
	lo, hi := 0, len(r.buf)
	for lo < hi {
		mid := (lo + hi) / 2
		if r.at(mid).ID < id {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

func (l *eventLog) append(e Event) Event {
	l.lastID++
	e.ID = l.lastID
	if e.Type == EventNotice {
		if old, ok := l.notices.push(e); ok && l.lastNotice[old.Key] == old.ID {
			delete(l.lastNotice, old.Key)
		}
		l.lastNotice[e.Key] = e.ID
	} else {
		l.changes.push(e)
	}
	l.wake()
	return e
}

// wake wakes the readers waiting for an event.
func (l *eventLog) wake() {
	if l.waited {
		close(l.changed)
		l.changed, l.waited = make(chan struct{}), false
	}
}

// run returns the kept events with an ID above id that follow one another,
// from the first of them to the first one missing: what a Follower reads at
// a time, so that a reader behind a log with holes (notices dropped between
// kept state changes) copies each event once, not every later one at each
// hole.
func (l *eventLog) run(id uint64) []Event {
	if id > l.lastID {
		id = 0
	}
	c, n := l.changes.from(id+1), l.notices.from(id+1)
	var out []Event
	for c < len(l.changes.buf) || n < len(l.notices.buf) {
		var e *Event
		if n == len(l.notices.buf) || (c < len(l.changes.buf) && l.changes.at(c).ID < l.notices.at(n).ID) {
			e = l.changes.at(c)
			c++
		} else {
			e = l.notices.at(n)
			n++
		}
		if len(out) > 0 && e.ID != out[len(out)-1].ID+1 {
			break
		}
		if out == nil {
			out = make([]Event, 0, min(l.lastID-e.ID+1, uint64(len(l.changes.buf)+len(l.notices.buf))))
		}
		out = append(out, *e)
	}
	return out
}

// after returns the kept events with an ID above id, oldest first: those of
// both rings, merged. An id beyond the last one is a cursor from another
// Monitor (a previous run of the process): the reader gets the whole log
// rather than waiting for ids it has seen elsewhere.
func (l *eventLog) after(id uint64) []Event {
	if id > l.lastID {
		id = 0
	}
	if id == l.lastID {
		return nil
	}
	c, n := l.changes.from(id+1), l.notices.from(id+1)
	total := len(l.changes.buf) - c + len(l.notices.buf) - n
	if total == 0 {
		return nil
	}
	out := make([]Event, 0, total)
	for c < len(l.changes.buf) || n < len(l.notices.buf) {
		if n == len(l.notices.buf) || (c < len(l.changes.buf) && l.changes.at(c).ID < l.notices.at(n).ID) {
			out = append(out, *l.changes.at(c))
			c++
		} else {
			out = append(out, *l.notices.at(n))
			n++
		}
	}
	return out
}

// Events returns the kept events with an ID above after, oldest first; nil when
// there are none. Events(0) returns every event the log still holds. An ID
// missing between after and the last returned is an event the log dropped (it
// keeps the last WithEventLog state changes, and as many notices apart). IDs
// start at 1 with each Monitor: a cursor above the last ID comes from an
// earlier one, and gets the whole log.
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
