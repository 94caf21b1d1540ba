package health_test

import (
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
