package health_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/health/healthtest"
)

func TestAnIdleWatchdogPasses(t *testing.T) {
	m, _ := fakeMonitor(t)
	m.Watchdog("reconcile", time.Minute, health.Live)
	start(t, m)
	if st := waitRuns(t, m, "reconcile", 1); st.Status != health.Pass || st.Kind != "watchdog" {
		t.Fatalf("idle watchdog: %v (%s), want a passing watchdog", st.Status, st.Kind)
	}
}

func TestAWatchdogFailsTheMomentAUnitOverrunsAndRecoversWhenItEnds(t *testing.T) {
	m, clk := fakeMonitor(t)
	wd, err := m.Watchdog("reconcile", 30*time.Second, health.Live)
	if err != nil {
		t.Fatal(err)
	}
	start(t, m)
	var cursor uint64
	waitCheckEvent(t, m, &cursor) // passed, idle
	hung := wd.Begin()
	advance(t, clk, 1, 5*time.Second)
	quick := wd.Begin() // begun at 5s, finishes in time
	if wd.Running() != 2 {
		t.Fatalf("running %d, want 2", wd.Running())
	}
	quick()
	advance(t, clk, 1, 5*time.Second) // 10s: the periodic judgement
	advance(t, clk, 1, 20*time.Second-time.Nanosecond)
	if st, _ := m.CheckState("reconcile"); st.Status != health.Pass {
		t.Fatalf("a nanosecond before the limit: %v, want pass", st.Status)
	}
	advance(t, clk, 1, time.Nanosecond)
	ev := waitCheckEvent(t, m, &cursor)
	want := "1 of 1 units of work have run longer than 30s; the oldest began 30s ago"
	if ev.Type != health.EventCheckFailed || !ev.Time.Equal(healthtest.Epoch.Add(30*time.Second)) || ev.Output != want {
		t.Fatalf("event %+v, want check-failed at exactly 30s: %s", ev, want)
	}
	// While failing, each period says how long the oldest has run.
	advance(t, clk, 1, 10*time.Second)
	if r := waitResultAt(t, m, "reconcile", healthtest.Epoch.Add(40*time.Second)); r.Output != "1 of 1 units of work have run longer than 30s; the oldest began 40s ago" {
		t.Fatalf("refreshed output %q", r.Output)
	}
	hung()
	hung() // twice is harmless
	for {
		ev := waitCheckEvent(t, m, &cursor)
		if ev.Check == "" {
			continue // level events
		}
		if ev.Type != health.EventCheckPassed || ev.From != health.Fail {
			t.Fatalf("event %+v, want check-passed from fail when the unit ends", ev)
		}
		break
	}
	if wd.Running() != 0 {
		t.Fatalf("running %d after both ended, want 0", wd.Running())
	}
}

func TestAWatchdogCountsEveryOverrunningUnit(t *testing.T) {
	m, clk := fakeMonitor(t)
	wd, _ := m.Watchdog("jobs", 10*time.Second, health.Ready)
	start(t, m)
	waitRuns(t, m, "jobs", 1)
	wd.Begin()
	advance(t, clk, 1, 2*time.Second)
	wd.Begin()
	advance(t, clk, 1, 5*time.Second)
	wd.Begin()                        // at 7s
	advance(t, clk, 1, 3*time.Second) // 10s: the first is at the limit
	var cursor uint64
	for {
		ev := waitCheckEvent(t, m, &cursor)
		if ev.Type == health.EventCheckFailed {
			if ev.Output != "1 of 3 units of work have run longer than 10s; the oldest began 10s ago" {
				t.Fatalf("at the first deadline: %q", ev.Output)
			}
			break
		}
	}
	r := waitResultAt(t, m, "jobs", healthtest.Epoch.Add(10*time.Second))
	if r.ObservedValue != 3 || r.ObservedUnit != "units" {
		t.Fatalf("observed %v %s, want 3 units running", r.ObservedValue, r.ObservedUnit)
	}
	advance(t, clk, 1, 10*time.Second) // 20s: the next period
	if r := waitResultAt(t, m, "jobs", healthtest.Epoch.Add(20*time.Second)); r.Output != "3 of 3 units of work have run longer than 10s; the oldest began 20s ago" {
		t.Fatalf("at 20s: %q", r.Output)
	}
}

func TestAWatchdogCannotBeAStartupCheck(t *testing.T) {
	m, _ := fakeMonitor(t)
	if _, err := m.Watchdog("jobs", time.Minute, health.Startup); !errors.Is(err, health.ErrInvalidCheck) ||
		!strings.Contains(err.Error(), "passes while idle") {
		t.Fatalf("Watchdog at startup: %v, want ErrInvalidCheck saying why", err)
	}
}
