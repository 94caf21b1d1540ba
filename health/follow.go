package health

import (
	"context"
	"io"
)

// Follower reads a Monitor's events in the order of their IDs, each once,
// from a cursor it moves on: the one loop of every reader that follows the
// log (the agent's hooks, its Kubernetes reports, gRPC Watch, the management
// API's event stream). Make one with Monitor.Follow.
//
// It holds no goroutine and nothing of the Monitor's but a place in its
// bounded log: a reader that is slow or gone never holds up the Monitor, it
// misses what the log dropped meanwhile, and Next says which (a Gap). A
// Follower that is dropped without Close leaves nothing behind.
//
// Next is for one goroutine at a time; Close may be called from any
// goroutine, as often as wanted.
type Follower struct {
	m      *Monitor
	cursor uint64 // the ID of the last event Next returned or passed in a gap; Next's alone

	// guarded by Monitor.mu
	closed bool
	until  uint64 // the last event emitted before Close

	done chan struct{} // closed by Close, to end a wait under way
}

// Follow returns a Follower of the events with an ID above after: Follow(0)
// reads from the oldest the log still holds, Follow(LastEventID()) from the
// next one. An after beyond the last ID is a cursor of an earlier Monitor (a
// previous run of the process): it reads the whole log, as Events does.
func (m *Monitor) Follow(after uint64) *Follower {
	m.mu.Lock()
	defer m.mu.Unlock()
	if after > m.events.lastID {
		after = 0
	}
	return &Follower{m: m, cursor: after, done: make(chan struct{})}
}

// Gap is a run of events that a Follower missed: the log dropped them (it
// keeps the last WithEventLog state changes, and as many notices apart)
// before the Follower read them. First and Last are their IDs; the zero Gap
// is none.
//
// Changes says that state changes may have been dropped too, not notices
// alone: a reader that keeps what it learnt from the events (a check's
// status, a level) should read the state anew (Snapshot) rather than trust
// it. It is never false when a state change the reader had not read was
// dropped, and may be true when only notices of this gap were (the log
// dropped a state change past the reader's cursor, in this gap or a later
// one). A flood of notices never drops a state change: only more state
// changes than the log keeps, while the reader is away, do.
type Gap struct {
	First, Last uint64
	Changes     bool
}

// Len is how many events the gap is: 0 for none.
func (g Gap) Len() uint64 {
	if g.First == 0 {
		return 0
	}
	return g.Last - g.First + 1
}

// Next returns the events past the cursor, oldest first, and moves the
// cursor to the last of them. It waits while there are none, until one is
// emitted, ctx ends (then it returns ctx's error), or Close. It returns
// the events there are even when ctx has ended: only a wait ends with it, so
// an event emitted just before a reader's context ends is still read.
//
// gap is the events the log dropped before the Follower read them, right
// before the first event returned: every event is either returned once or in
// one gap.
//
// After Close, Next returns the events emitted before Close that it has not
// returned yet, without waiting, and then io.EOF: a reader that stops
// finishes the events of the stop (a service-exited, a stopping) and no
// later ones. When the log dropped the last of those unread, io.EOF comes
// with their gap.
func (f *Follower) Next(ctx context.Context) (events []Event, gap Gap, err error) {
	for {
		f.m.mu.Lock()
		evs := f.m.events.run(f.cursor)
		closed, until := f.closed, f.until
		changed := f.m.events.changed
		changesDropped := f.m.events.changes.dropped
		if len(evs) == 0 && !closed {
			f.m.events.waited = true
		}
		f.m.mu.Unlock()
		// One run of IDs that follow one another at a time, each after its
		// gap: where the log dropped notices between state changes it kept,
		// the next call returns the gap and the run after it.
		if closed && len(evs) > 0 && evs[len(evs)-1].ID > until {
			evs = evs[:max(int64(until)-int64(evs[0].ID)+1, 0)]
		}
		if len(evs) > 0 {
			gap = f.skip(evs[0].ID-1, changesDropped)
			f.cursor = evs[len(evs)-1].ID
			return evs, gap, nil
		}
		if closed {
			return nil, f.skip(until, changesDropped), io.EOF
		}
		if err := ctx.Err(); err != nil {
			return nil, Gap{}, err
		}
		select {
		case <-changed:
		case <-f.done:
		case <-ctx.Done(): // read once more: events may have come with the end
		}
	}
}

// skip moves the cursor to id, past events it never returned, and returns
// their gap; changesDropped is the newest state change the log dropped.
func (f *Follower) skip(id, changesDropped uint64) Gap {
	if id <= f.cursor {
		return Gap{}
	}
	g := Gap{First: f.cursor + 1, Last: id, Changes: changesDropped > f.cursor}
	f.cursor = id
	return g
}

// Close makes Next return the events emitted before it and then io.EOF, and
// ends a wait under way. Closing a closed Follower does nothing.
func (f *Follower) Close() { f.End() }

// End closes f as Close does, and returns the ID of the last event emitted
// before it closed: the last f's Next returns or passes in a gap. A reader
// that hands its place over follows on with Monitor.Follow(End()), missing
// no event and reading none twice (a reloaded hook, a new Kubernetes
// reporter).
func (f *Follower) End() uint64 {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if !f.closed {
		f.closed, f.until = true, f.m.events.lastID
		close(f.done)
	}
	return f.until
}
