package kubereport

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"
)

// correlating is a correlator on a fake clock, and what it has the sink
// write: each Event created gets a resourceVersion, as the API server's.
type correlating struct {
	t       *testing.T
	clock   *testingclock.FakeClock
	c       *correlator
	created int
}

func newCorrelating(t *testing.T) *correlating {
	clk := testingclock.NewFakeClock(time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC))
	return &correlating{t: t, clock: clk, c: newCorrelator(clk)}
}

// event correlates an Event as the writer makes it, writes it as the API
// server would, and says how it was written.
func (c *correlating) event(eventType, reason, message string) correlated {
	now := metav1.NewTime(c.clock.Now())
	e := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: eventName("app", now.UnixNano()), Namespace: "shop"},
		Type: eventType, Reason: reason, Message: message, Count: 1, FirstTimestamp: now, LastTimestamp: now}
	r := c.c.correlate(e)
	if r.Skip {
		return r
	}
	written := *r.Event
	if r.Patch == nil {
		c.created++
		written.ResourceVersion = fmt.Sprint(c.created)
	}
	c.c.remember(r.Key, &written)
	return r
}

// patched is the count and message a merge patch sets.
func patched(t *testing.T, r correlated) (count int32, message string) {
	t.Helper()
	var p struct {
		Count         int32
		LastTimestamp metav1.Time
		Message       string
	}
	if err := json.Unmarshal(r.Patch, &p); err != nil {
		t.Fatalf("patch %s: %v", r.Patch, err)
	}
	if !p.LastTimestamp.Equal(&r.Event.LastTimestamp) {
		t.Errorf("patch %s: lastTimestamp, want %v", r.Patch, r.Event.LastTimestamp)
	}
	return p.Count, p.Message
}

// The same Event again raises the count of the one written, with its name,
// its first time, and the resourceVersion the API server gave it.
func TestTheSameEventAgainPatchesTheCountOfTheOneWritten(t *testing.T) {
	c := newCorrelating(t)
	first := c.event("Warning", "CheckFailed", `Readiness check "db" failed: refused`)
	if first.Patch != nil || first.Event.Count != 1 {
		t.Fatalf("first: patch %s, count %d; want a create of count 1", first.Patch, first.Event.Count)
	}
	c.clock.Step(time.Minute)
	again := c.event("Warning", "CheckFailed", `Readiness check "db" failed: refused`)
	if again.Event.Name != first.Event.Name || again.Event.ResourceVersion != "1" || !again.Event.FirstTimestamp.Equal(&first.Event.FirstTimestamp) {
		t.Errorf("again: %s rv %q first %v; want the first's name, rv 1 and first time", again.Event.Name, again.Event.ResourceVersion, again.Event.FirstTimestamp)
	}
	if n, msg := patched(t, again); n != 2 || msg != first.Event.Message {
		t.Errorf("again's patch %s: want count 2 and the same message", again.Patch)
	}
	if other := c.event("Normal", "CheckPassed", `Readiness check "db" passed`); other.Patch != nil {
		t.Errorf("another reason patched %s, want a create", other.Patch)
	}
}

// Similar Events (a type and reason, other messages) within the window
// are combined from the tenth on: one Event that says the latest.
func TestSimilarEventsFromTheTenthAreCombinedIntoOne(t *testing.T) {
	c := newCorrelating(t)
	for i := 1; i < maxSimilar; i++ {
		if r := c.event("Warning", "CheckFailed", fmt.Sprintf("failed: %d", i)); r.Patch != nil || strings.HasPrefix(r.Event.Message, combinedPrefix) {
			t.Fatalf("similar Event %d: %q, patch %s; want it written as it is", i, r.Event.Message, r.Patch)
		}
	}
	tenth := c.event("Warning", "CheckFailed", "failed: 10")
	if tenth.Patch != nil || tenth.Event.Message != combinedPrefix+"failed: 10" {
		t.Fatalf("the tenth: %q, patch %s; want a new combined Event", tenth.Event.Message, tenth.Patch)
	}
	next := c.event("Warning", "CheckFailed", "failed: 11")
	if n, msg := patched(t, next); next.Event.Name != tenth.Event.Name || n != 2 || msg != combinedPrefix+"failed: 11" {
		t.Errorf("the eleventh: %s, patch %s; want the combined Event's count 2 and the latest message", next.Event.Name, next.Patch)
	}
	// Past the window since the last similar one, they start over.
	c.clock.Step(similarWindow + time.Second)
	if r := c.event("Warning", "CheckFailed", "failed: 12"); r.Event.Message != "failed: 12" {
		t.Errorf("after the window: %q, want it written as it is", r.Event.Message)
	}
}

// Past a burst of 25 Events of a type, one each 5 minutes is written; the
// other type keeps its own burst; a dropped Event still counts, so that the
// one written next says how many there were.
func TestPastABurstOf25OfATypeOneEventEachFiveMinutes(t *testing.T) {
	c := newCorrelating(t)
	for i := 1; i <= spamBurst; i++ {
		if r := c.event("Warning", "CheckFailed", "failed"); r.Skip {
			t.Fatalf("Warning %d dropped within the burst of %d", i, spamBurst)
		}
	}
	if r := c.event("Warning", "CheckFailed", "failed"); !r.Skip {
		t.Fatalf("Warning %d written, want it dropped past the burst", spamBurst+1)
	}
	if r := c.event("Normal", "CheckPassed", "passed"); r.Skip {
		t.Fatal("a Normal Event dropped: each type has its burst")
	}
	c.clock.Step(spamEvery - time.Second)
	if r := c.event("Warning", "CheckFailed", "failed"); !r.Skip {
		t.Fatal("written before 5 minutes, want it dropped")
	}
	c.clock.Step(time.Second)
	r := c.event("Warning", "CheckFailed", "failed")
	if r.Skip {
		t.Fatal("dropped after 5 minutes, want one written")
	}
	if n, _ := patched(t, r); n != spamBurst+3 {
		t.Errorf("count %d, want %d: every one seen", n, spamBurst+3)
	}
}

func TestAnEventsNameIsThePodsAndATimeWithinTheLimit(t *testing.T) {
	if got := eventName("app", 0x1876); got != "app.1876" {
		t.Errorf("eventName: %q, want app.1876", got)
	}
	long := strings.Repeat("a", 235) + "-bcdefgh" // cut after the "-", which a name cannot end in
	if got := eventName(long, 0x18764c4b0d2f4a3c); got != strings.Repeat("a", 235)+".18764c4b0d2f4a3c" {
		t.Errorf("eventName of %d characters: %q (%d), want 253 at most and a valid name", len(long), got, len(got))
	}
}
