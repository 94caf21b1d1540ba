package health_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
)

// However many notices come, the log keeps its state changes: a reader that
// was away gets every one of them, in order, and gaps for the notices it
// missed, none of which claims a state change.
func TestAFloodOfNoticesNeverPushesOutAStateChange(t *testing.T) {
	m, _ := fakeMonitor(t, health.WithEventLog(10))
	f := m.Follow(0)
	var changes []uint64
	for i := range 1000 {
		if i%100 == 50 {
			changes = append(changes, m.Emit(health.Event{Type: health.EventServiceStarted, Service: "api", PID: i}).ID)
			continue
		}
		if _, err := m.Notify("flood", map[string]string{"n": fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	var got []uint64
	notices, missed := 0, uint64(0)
	seen := uint64(0)
	for {
		evs, gap, err := f.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if gap.Len() > 0 {
			if gap.Changes {
				t.Fatalf("gap %+v says state changes were dropped: only notices were", gap)
			}
			if gap.First != seen+1 || gap.Last != evs[0].ID-1 {
				t.Fatalf("gap %+v after id %d, before %d: not right between them", gap, seen, evs[0].ID)
			}
			missed += gap.Len()
			seen = gap.Last
		}
		for _, e := range evs {
			if e.ID != seen+1 {
				t.Fatalf("event %d after %d with no gap between", e.ID, seen)
			}
			seen = e.ID
			if e.Type == health.EventNotice {
				notices++
			} else {
				got = append(got, e.ID)
			}
		}
		if seen == m.LastEventID() {
			break
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(changes) {
		t.Fatalf("state changes read %v, want every one emitted, %v", got, changes)
	}
	if notices != 10 || missed != uint64(1000-len(changes)-10) {
		t.Fatalf("%d notices read and %d missed, want the newest 10 and the other %d", notices, missed, 1000-len(changes)-10)
	}
}

// More state changes than the log keeps, while a reader is away, are a gap
// that says so: the reader reads the state anew.
func TestAReaderThatMissedStateChangesIsToldSo(t *testing.T) {
	m, _ := fakeMonitor(t, health.WithEventLog(3))
	f := m.Follow(0)
	for range 5 {
		m.Emit(health.Event{Type: health.EventStopping})
	}
	evs, gap, err := f.Next(context.Background())
	if err != nil || len(evs) != 3 || gap != (health.Gap{First: 1, Last: 2, Changes: true}) {
		t.Fatalf("Next: %d events, gap %+v, %v; want 3 after a gap 1-2 of state changes", len(evs), gap, err)
	}
}

// A notice that repeats its key within repeat-after counts an occurrence of
// the event before it, with the new data, and adds none; after the window,
// or with none, it is an event of its own.
func TestANoticeRepeatedWithinItsWindowCountsAnOccurrence(t *testing.T) {
	m, clk := fakeMonitor(t)
	first, repeated, err := m.NotifyRepeating("db/backup-done", map[string]string{"n": "1"}, time.Minute)
	if err != nil || repeated || first.Occurrences != 0 {
		t.Fatalf("first notice: %+v repeated %v, %v", first, repeated, err)
	}
	clk.Advance(30 * time.Second)
	again, repeated, err := m.NotifyRepeating("db/backup-done", map[string]string{"n": "2"}, time.Minute)
	if err != nil || !repeated || again.ID != first.ID || again.Occurrences != 2 || again.Data["n"] != "2" ||
		!again.LastOccurred.Equal(first.Time.Add(30*time.Second)) {
		t.Fatalf("a repeat within the window: %+v repeated %v, %v; want event %d with 2 occurrences, the new data and its time", again, repeated, err, first.ID)
	}
	if other, repeated, _ := m.NotifyRepeating("db/other", nil, time.Minute); repeated || other.ID != first.ID+1 {
		t.Fatalf("another key: %+v repeated %v, want an event of its own", other, repeated)
	}
	if evs := m.Events(0); len(evs) != 2 || evs[0].Occurrences != 2 || evs[0].Data["n"] != "2" {
		t.Fatalf("the log: %+v, want the first event counting 2, and the other key's", evs)
	}
	clk.Advance(30 * time.Second) // a minute after the first: the window has ended
	if late, repeated, _ := m.NotifyRepeating("db/backup-done", nil, time.Minute); repeated || late.ID != first.ID+2 {
		t.Fatalf("at the window's end: %+v repeated %v, want an event of its own", late, repeated)
	}
	if plain, _ := m.Notify("db/backup-done", nil); plain.ID != first.ID+3 || plain.Occurrences != 0 {
		t.Fatalf("Notify repeats nothing: %+v", plain)
	}
}
