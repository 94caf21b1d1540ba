package health_test

import (
	"errors"
	"fmt"
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

func TestUnitsBegunByIDEndByTheirIDAndTheOutputNamesTheOldest(t *testing.T) {
	m, clk := fakeMonitor(t)
	wd, _ := m.Watchdog("jobs", 10*time.Second, health.Live)
	start(t, m)
	waitRuns(t, m, "jobs", 1)
	first, err := wd.BeginID()
	if err != nil || first != 1 {
		t.Fatalf("first BeginID: %d, %v; want 1", first, err)
	}
	advance(t, clk, 1, 2*time.Second)
	second, _ := wd.BeginID()
	if second != 2 || wd.Running() != 2 {
		t.Fatalf("second id %d with %d running, want 2 and 2", second, wd.Running())
	}
	if !wd.End(first) || wd.End(first) || wd.End(99) {
		t.Fatal("End: want true for a running unit, then false for it ended, and false for an id never given")
	}
	advance(t, clk, 1, 8*time.Second) // 10s: the periodic judgement
	advance(t, clk, 1, 2*time.Second) // 12s: the second unit reaches the limit
	var cursor uint64
	for {
		if ev := waitCheckEvent(t, m, &cursor); ev.Type == health.EventCheckFailed {
			if want := "1 of 1 units of work have run longer than 10s; the oldest, unit 2, began 10s ago"; ev.Output != want {
				t.Fatalf("output %q, want %q", ev.Output, want)
			}
			break
		}
	}
	if !wd.End(second) {
		t.Fatal("End of the hung unit: false")
	}
	for {
		if ev := waitCheckEvent(t, m, &cursor); ev.Check == "jobs" {
			if ev.Type != health.EventCheckPassed {
				t.Fatalf("event %+v, want check-passed once the unit ended", ev)
			}
			break
		}
	}
}

func TestResetKeepsAWatchdogsUnitsUnlessTheyEndWithIt(t *testing.T) {
	for _, endOnReset := range []bool{false, true} {
		t.Run(fmt.Sprintf("EndUnitsOnReset %v", endOnReset), func(t *testing.T) {
			m, clk := fakeMonitor(t)
			var opts []health.TimedOption
			if endOnReset {
				opts = append(opts, health.EndUnitsOnReset())
			}
			wd, _ := m.Watchdog("jobs", 10*time.Second, health.Live, opts...)
			start(t, m)
			waitRuns(t, m, "jobs", 1)
			id, _ := wd.BeginID()
			done := wd.Begin()
			advance(t, clk, 1, 10*time.Second)
			waitFor(t, "the hung units to fail the check", func() bool { st, _ := m.CheckState("jobs"); return st.Status == health.Fail })
			m.Reset("the workload restarted")
			st := waitRuns(t, m, "jobs", 1)
			if endOnReset {
				if st.Status != health.Pass || wd.Running() != 0 {
					t.Fatalf("after Reset: %v with %d running, want an idle, passing watchdog whose units ended", st.Status, wd.Running())
				}
				if wd.End(id) {
					t.Fatal("End of a unit that the Reset ended: true")
				}
				done() // a unit that a Reset ended: harmless
				if next, _ := wd.BeginID(); next != id+1 {
					t.Fatalf("id after Reset %d, want %d: an id is never given twice", next, id+1)
				}
				return
			}
			if st.Status != health.Fail || wd.Running() != 2 {
				t.Fatalf("after Reset: %v with %d running, want the program's hung units to fail it still", st.Status, wd.Running())
			}
			done()
			if !wd.End(id) {
				t.Fatal("End after Reset: false, want the program's unit still running")
			}
		})
	}
}

func TestAWatchdogRunsAtMostMaxUnitIDsUnitsBegunByID(t *testing.T) {
	m, _ := fakeMonitor(t)
	wd, _ := m.Watchdog("jobs", time.Minute, health.Live)
	for range health.MaxUnitIDs {
		if _, err := wd.BeginID(); err != nil {
			t.Fatal(err)
		}
	}
	_, err := wd.BeginID()
	if !errors.Is(err, health.ErrTooManyUnits) ||
		err.Error() != `watchdog "jobs": 1000 units of work begun by id are running, the most it keeps: too many units of work` {
		t.Fatalf("BeginID past the bound: %v", err)
	}
	wd.Begin()() // a program's own units are not counted
	if !wd.End(7) {
		t.Fatal("End(7): false")
	}
	if id, err := wd.BeginID(); err != nil || id != health.MaxUnitIDs+1 {
		t.Fatalf("BeginID once one ended: %d, %v", id, err)
	}
}
