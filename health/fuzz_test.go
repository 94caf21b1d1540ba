package health_test

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/vitals-dev/vitals/health"
)

// R3 of the reliability suite: the event log read by cursor. Whatever the
// log's size, the events emitted and the cursors asked for, Events returns
// consecutive ids, oldest first, all after the cursor, the newest last, as
// many as the log keeps at most — and a cursor from beyond the last id (a
// Monitor of an earlier run) gets the whole log.
//
//	go test -fuzz FuzzEventsCursor -fuzztime 10m ./health/
func FuzzEventsCursor(f *testing.F) {
	f.Add(uint8(4), []byte{10, 3, 200, 7, 1, 255, 0, 9})
	f.Add(uint8(1), []byte{2, 2, 2, 1, 3})
	f.Add(uint8(60), []byte{})
	f.Fuzz(func(t *testing.T, size uint8, ops []byte) {
		keep := int(size%64) + 1
		m := health.New(health.WithEventLog(keep))
		var last uint64
		for i, op := range ops {
			if op%2 == 0 { // emit op/2 % 7 events
				for range op / 2 % 7 {
					e := m.Emit(health.Event{Type: health.EventStopping})
					if e.ID != last+1 {
						t.Fatalf("op %d: emitted id %d after %d", i, e.ID, last)
					}
					last = e.ID
				}
				continue
			}
			after := uint64(op / 2) // cursors around and beyond the last id
			got := m.Events(after)
			from := after
			if after > last {
				from = 0 // another Monitor's cursor: the whole log
			}
			want := int(min(last-from, uint64(keep)))
			if len(got) != want {
				t.Fatalf("op %d: Events(%d) with last %d and a log of %d: %d events, want %d", i, after, last, keep, len(got), want)
			}
			for j, e := range got {
				if wantID := last - uint64(want) + 1 + uint64(j); e.ID != wantID {
					t.Fatalf("op %d: Events(%d)[%d] has id %d, want %d", i, after, j, e.ID, wantID)
				}
			}
		}
	})
}

// FuzzFollower drives the event log with any size, emits, reads and a Close,
// and follows it: every event up to the Close is either returned once or in
// one gap, in the order of the ids, and nothing after the Close is returned.
//
//	go test -fuzz FuzzFollower -fuzztime 10m ./health/
func FuzzFollower(f *testing.F) {
	f.Add(uint8(4), []byte{10, 1, 30, 1, 3, 200, 1, 1})
	f.Add(uint8(1), []byte{4, 3, 4, 1, 1})
	f.Add(uint8(3), []byte{6, 1, 6, 3, 20, 1, 1, 1})
	f.Fuzz(func(t *testing.T, size uint8, ops []byte) {
		m := health.New(health.WithEventLog(int(size%16) + 1))
		fl := m.Follow(0)
		ended, cancel := context.WithCancel(context.Background())
		cancel()
		var (
			emitted, seen uint64 // the last id emitted; the last returned or in a gap
			until         uint64 // the last id before Close
			closed, eof   bool
		)
		for i, op := range append(ops, 1, 1) { // two reads at the end
			switch {
			case op%4 == 0: // emit op/4 % 9 events
				for range op / 4 % 9 {
					emitted = m.Emit(health.Event{Type: health.EventStopping}).ID
				}
			case op%4 == 3 && !closed:
				fl.Close()
				closed, until = true, emitted
			default:
				evs, gap, err := fl.Next(ended)
				if gap.Len() > 0 {
					if gap.First != seen+1 || (len(evs) > 0 && evs[0].ID != gap.Last+1) {
						t.Fatalf("op %d: gap %+v after id %d, before %v", i, gap, seen, evs)
					}
					seen = gap.Last
				}
				for _, e := range evs {
					if e.ID != seen+1 {
						t.Fatalf("op %d: id %d after %d", i, e.ID, seen)
					}
					seen = e.ID
				}
				switch {
				case closed && seen > until:
					t.Fatalf("op %d: id %d read, emitted after the Close at %d", i, seen, until)
				case errors.Is(err, io.EOF):
					if !closed || seen != until {
						t.Fatalf("op %d: io.EOF at id %d, closed %v at %d", i, seen, closed, until)
					}
					eof = true
				case err != nil && (closed || seen != emitted):
					t.Fatalf("op %d: %v at id %d of %d, closed %v", i, err, seen, emitted, closed)
				case err == nil && (len(evs) == 0 || !closed && seen != emitted):
					t.Fatalf("op %d: read to id %d of %d", i, seen, emitted)
				}
			}
		}
		if closed && !eof {
			t.Fatalf("closed at %d, and read to %d without io.EOF", until, seen)
		}
	})
}
