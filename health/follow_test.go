package health_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
)

// TestAFollowerReadsEachEventOnceCountsGapsAndEndsAfterClose plays scripts
// of emits, reads and closes on a Monitor whose log keeps keep events. Each
// step is one of:
//
//	emit N            emit N events
//	follow A          the Follower is Follow(A) from here on (Follow(0) before)
//	close             Close the Follower
//	next WANT         Next on a context that has ended, so that it never waits:
//	                  WANT is "FIRST-LAST" (the ids read), "EOF" or "context
//	                  canceled", then " gap FIRST-LAST" when Next says the log
//	                  dropped those before they were read
func TestAFollowerReadsEachEventOnceCountsGapsAndEndsAfterClose(t *testing.T) {
	for _, tc := range []struct {
		name  string
		keep  int
		steps []string
	}{
		{"it reads every event once, oldest first", 10, []string{
			"emit 3", "next 1-3", "next context canceled",
			"emit 2", "next 4-5", "next context canceled"}},
		{"Follow(0) reads from the oldest kept, counting those dropped before it", 3, []string{
			"emit 5", "next 3-5 gap 1-2"}},
		{"a reader that falls behind misses what the log dropped, and says how many each time", 3, []string{
			"emit 2", "next 1-2",
			"emit 5", "next 5-7 gap 3-4",
			"emit 4", "next 9-11 gap 8-8", "next context canceled"}},
		{"it reads from its cursor", 10, []string{
			"emit 4", "follow 2", "next 3-4"}},
		{"from the last id, it reads only what comes next", 10, []string{
			"emit 4", "follow 4", "next context canceled", "emit 1", "next 5-5"}},
		{"a cursor beyond the last id comes from an earlier Monitor: the whole log", 10, []string{
			"emit 2", "follow 500", "next 1-2", "emit 1", "next 3-3"}},
		{"after Close, it reads what came before Close and then EOF, never later events", 10, []string{
			"emit 2", "close", "emit 3", "next 1-2", "next EOF", "next EOF"}},
		{"after Close, what it read already is not read again", 10, []string{
			"emit 2", "next 1-2", "emit 1", "close", "emit 1", "next 3-3", "next EOF"}},
		{"Close with nothing unread is EOF at once", 10, []string{
			"emit 2", "next 1-2", "close", "close", "next EOF"}},
		{"after Close, the gap before the events left is counted", 3, []string{
			"emit 1", "next 1-1", "emit 4", "close", "next 3-5 gap 2-2", "next EOF"}},
		{"events before Close that the log dropped after it are gone, the last ones kept read", 3, []string{
			"emit 3", "close", "emit 2", "next 3-3 gap 1-2", "next EOF"}},
		{"when the log dropped every event before Close unread, EOF says so once", 3, []string{
			"emit 1", "next 1-1", "emit 2", "close", "emit 3", "next EOF gap 2-3", "next EOF"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := fakeMonitor(t, health.WithEventLog(tc.keep))
			f := m.Follow(0)
			ended, cancel := context.WithCancel(context.Background())
			cancel()
			for i, step := range tc.steps {
				verb, arg, _ := strings.Cut(step, " ")
				switch verb {
				case "emit":
					n, _ := strconv.Atoi(arg)
					for range n {
						m.Emit(health.Event{Type: health.EventServiceStarted})
					}
				case "follow":
					a, _ := strconv.ParseUint(arg, 10, 64)
					f = m.Follow(a)
				case "close":
					f.Close()
				case "next":
					if got := read(ended, f); got != arg {
						t.Fatalf("step %d (%s): got %q", i+1, step, got)
					}
				default:
					t.Fatalf("step %d: no such step %q", i+1, step)
				}
			}
		})
	}
}

// read is what Next returns, spelled as the table spells it.
func read(ctx context.Context, f *health.Follower) string {
	evs, gap, err := f.Next(ctx)
	var s string
	switch {
	case err != nil && evs != nil:
		return fmt.Sprintf("events %v with error %v", evs, err)
	case errors.Is(err, io.EOF):
		s = "EOF"
	case err != nil:
		s = err.Error()
	case len(evs) == 0:
		return "no events and no error"
	default:
		for i, e := range evs {
			if e.ID != evs[0].ID+uint64(i) {
				return fmt.Sprintf("ids %v: not one after another", evs)
			}
		}
		if gap.Len() > 0 && gap.Last != evs[0].ID-1 {
			return fmt.Sprintf("gap %+v before event %d: not right before it", gap, evs[0].ID)
		}
		s = fmt.Sprintf("%d-%d", evs[0].ID, evs[len(evs)-1].ID)
	}
	if gap.Len() > 0 {
		s += fmt.Sprintf(" gap %d-%d", gap.First, gap.Last)
	}
	return s
}

// next runs Next on a goroutine of its own; the channel gets what it
// returned, spelled as read spells it.
func next(ctx context.Context, f *health.Follower) <-chan string {
	got := make(chan string, 1)
	go func() { got <- read(ctx, f) }()
	return got
}

// wait is what got receives, or a failure after settle (a guard against
// hanging, never a measurement).
func wait(t *testing.T, got <-chan string) string {
	t.Helper()
	select {
	case s := <-got:
		return s
	case <-time.After(settle):
		t.Fatalf("Next did not return within %v", settle)
		return ""
	}
}

func TestAWaitingFollowerWakesWithTheNextEvent(t *testing.T) {
	m, _ := fakeMonitor(t)
	f := m.Follow(0)
	got := next(context.Background(), f)
	m.Emit(health.Event{Type: health.EventServiceStarted})
	if s := wait(t, got); s != "1-1" {
		t.Fatalf("woken with %q, want event 1", s)
	}
}

func TestCloseEndsAWaitUnderWay(t *testing.T) {
	m, _ := fakeMonitor(t)
	f := m.Follow(0)
	got := next(context.Background(), f)
	f.Close()
	if s := wait(t, got); s != "EOF" {
		t.Fatalf("a wait ended by Close with nothing emitted returned %q, want EOF", s)
	}
}

func TestAWaitEndsWithItsContextOnTheClocksTime(t *testing.T) {
	m, clk := fakeMonitor(t)
	f := m.Follow(0)
	ctx, cancel := clk.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got := next(ctx, f)
	m.Emit(health.Event{Type: health.EventServiceStarted})
	if s := wait(t, got); s != "1-1" {
		t.Fatalf("woken with %q, want event 1 before the deadline", s)
	}
	got = next(ctx, f)
	clk.Advance(30 * time.Second)
	if s := wait(t, got); s != context.DeadlineExceeded.Error() {
		t.Fatalf("a wait past its deadline returned %q, want the deadline's error", s)
	}
	// The wait ended; the Follower did not: what comes next is read.
	m.Emit(health.Event{Type: health.EventServiceStarted})
	if s := read(ctx, f); s != "2-2" {
		t.Fatalf("after the deadline: %q, want event 2", s)
	}
}

func TestFollowersReadIndependently(t *testing.T) {
	m, _ := fakeMonitor(t)
	a, b := m.Follow(0), m.Follow(0)
	m.Emit(health.Event{Type: health.EventServiceStarted})
	m.Emit(health.Event{Type: health.EventServiceStarted})
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	a.Close()
	if s := read(ended, a); s != "1-2" {
		t.Fatalf("a: %q", s)
	}
	if s := read(ended, b); s != "1-2" {
		t.Fatalf("b, after a read and closed: %q, want the same events", s)
	}
	if id := m.LastEventID(); id != 2 {
		t.Fatalf("LastEventID %d, want 2", id)
	}
}

// A reader that hands its place over to another, as a reloaded hook does,
// ends its Follower and follows on from End: every event is read once, by
// one or the other, whatever is emitted between.
func TestAFollowerHandsItsPlaceOverWithEnd(t *testing.T) {
	m := health.New(health.WithEventLog(100))
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // Next never waits
	emit := func(n int) {
		for range n {
			m.Emit(health.Event{Type: health.EventNotice, Key: "example.com/k"})
		}
	}
	ids := func(f *health.Follower) (out []uint64) {
		for {
			evs, _, err := f.Next(ctx)
			for _, ev := range evs {
				out = append(out, ev.ID)
			}
			if err != nil {
				return out
			}
		}
	}
	old := m.Follow(0)
	emit(2)
	first := ids(old)
	emit(3)
	next := m.Follow(old.End())
	if again := old.End(); again != 5 {
		t.Fatalf("End again = %d, want 5: it stays where it closed", again)
	}
	emit(2)
	got := append(append(first, ids(old)...), ids(next)...)
	if fmt.Sprint(got) != "[1 2 3 4 5 6 7]" {
		t.Fatalf("read %v, want each of 1-7 once", got)
	}
}
