package health

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"
)

// Every Reset (or StopCheck/StartCheck) while startup has not passed parks
// each live and ready check again, appending it to s.park, which only
// startupPassed empties.
// Checks parked until startup passes are parked once, however often they
// start over.
func TestChecksWaitingForStartupAreParkedOnceAcrossResets(t *testing.T) {
	m := New(WithLogger(slog.New(slog.DiscardHandler)), WithJitter(0))
	m.Add(Check{Name: "boot", Level: Startup, Period: time.Hour, Checker: CheckerFunc(func(context.Context) error { return errors.New("not yet") })})
	for i := range 10 {
		m.Add(Check{Name: fmt.Sprintf("r%d", i), Level: Ready, Period: time.Hour, Checker: CheckerFunc(func(context.Context) error { return nil })})
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); <-m.Done() }()
	m.Start(ctx)
	parked := func() int {
		m.sched.mu.Lock()
		defer m.sched.mu.Unlock()
		n := 0
		for _, e := range m.entries {
			if e.place.parked {
				n++
			}
		}
		return n
	}
	for r := range 50 {
		deadline := time.Now().Add(5 * time.Second)
		for parked() < 10 {
			if time.Now().After(deadline) {
				t.Fatalf("reset %d: %d parked", r, parked())
			}
			time.Sleep(100 * time.Microsecond)
		}
		m.Reset("again")
	}
	m.sched.mu.Lock()
	n := len(m.sched.park)
	m.sched.mu.Unlock()
	if n > 20 {
		t.Fatalf("s.park holds %d entries for 10 parked checks after 50 resets", n)
	}
}

func TestAHistoryOfAHugeSizeKeepsResults(t *testing.T) {
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("history of size 1<<31 panics on its first result: %v", p)
		}
	}()
	h := newHistory(1 << 31)
	h.add(Result{OK: true})
}
