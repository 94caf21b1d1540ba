package health_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/health/healthtest"
)

func TestAHeartbeatIsPendingUntilItsFirstBeat(t *testing.T) {
	m, _ := fakeMonitor(t)
	hb, err := m.Heartbeat("loop", 30*time.Second, health.Ready)
	if err != nil {
		t.Fatal(err)
	}
	start(t, m)
	if st, _ := m.CheckState("loop"); st.Status != health.Pending || st.Kind != "heartbeat" {
		t.Fatalf("before a beat: %v (%s), want a pending heartbeat", st.Status, st.Kind)
	}
	var cursor uint64
	hb.Beat()
	if ev := waitCheckEvent(t, m, &cursor); ev.Type != health.EventCheckPassed || ev.Check != "loop" || !ev.Time.Equal(healthtest.Epoch) {
		t.Fatalf("event %+v, want check-passed at once", ev)
	}
}

func TestALoopThatHangsBeforeItsFirstBeatFailsAtTheTTL(t *testing.T) {
	m, clk := fakeMonitor(t)
	m.Heartbeat("loop", 30*time.Second, health.Live)
	start(t, m)
	advance(t, clk, 1, 30*time.Second-time.Nanosecond)
	if st, _ := m.CheckState("loop"); st.Status != health.Pending || !m.Passing(health.Live) {
		t.Fatalf("a nanosecond before the ttl: %v, want pending (and live)", st.Status)
	}
	advance(t, clk, 1, time.Nanosecond)
	var cursor uint64
	ev := waitCheckEvent(t, m, &cursor)
	if ev.Type != health.EventCheckFailed || !ev.Time.Equal(healthtest.Epoch.Add(30*time.Second)) ||
		ev.Output != "no beat since the check started 30s ago (ttl 30s)" {
		t.Fatalf("event %+v, want check-failed at exactly the ttl with the reason", ev)
	}
	if m.Passing(health.Live) {
		t.Fatal("liveness passes with a heartbeat past its ttl")
	}
}

func TestAHeartbeatFailsTheMomentItsTTLPassesAndRecoversOnABeat(t *testing.T) {
	m, clk := fakeMonitor(t)
	hb, _ := m.Heartbeat("loop", 3*time.Second, health.Live) // period 10s: the deadline, not the period, decides
	start(t, m)
	hb.Beat()
	var cursor uint64
	waitCheckEvent(t, m, &cursor) // passed
	advance(t, clk, 1, 2*time.Second)
	hb.Beat()                         // beat at 2s: the deadline moves to 5s
	advance(t, clk, 1, 1*time.Second) // 3s: the old deadline, which a beat moved on
	advance(t, clk, 1, 2*time.Second-time.Nanosecond)
	if st, _ := m.CheckState("loop"); st.Status != health.Pass {
		t.Fatalf("a nanosecond before the ttl since the last beat: %v, want pass", st.Status)
	}
	advance(t, clk, 1, time.Nanosecond)
	ev := waitCheckEvent(t, m, &cursor)
	if ev.Type != health.EventCheckFailed || !ev.Time.Equal(healthtest.Epoch.Add(5*time.Second)) ||
		ev.Output != "no beat for 3s (ttl 3s)" {
		t.Fatalf("event %+v, want check-failed at 5s: no beat for 3s", ev)
	}
	if evs := m.Events(cursor); len(evs) == 0 || evs[0].Type != health.EventLevelFailed || evs[0].Level != health.Live ||
		!strings.Contains(evs[0].Output, `check "loop" is fail`) {
		t.Fatalf("events after the check failed: %+v, want level-failed live naming the check", evs)
	}
	hb.Beat()
	for {
		ev := waitCheckEvent(t, m, &cursor)
		if ev.Check == "" {
			continue // level events: readiness fails with liveness
		}
		if ev.Type != health.EventCheckPassed || ev.From != health.Fail || !ev.Time.Equal(healthtest.Epoch.Add(5*time.Second)) {
			t.Fatalf("event %+v, want check-passed from fail on the next beat", ev)
		}
		break
	}
}

func TestALiveHeartbeatCountsFromWhenStartupPasses(t *testing.T) {
	m, clk := fakeMonitor(t)
	boot := failing("warming up")
	m.Add(health.Check{Name: "boot", Level: health.Startup, Checker: boot, Period: time.Minute, FailureThreshold: 10})
	m.Heartbeat("loop", 30*time.Second, health.Live)
	start(t, m)
	waitRuns(t, m, "boot", 1)
	boot.pass()
	advance(t, clk, 1, time.Minute) // startup passes at 1m
	waitRuns(t, m, "boot", 2)
	// The heartbeat began to count at 1m, so it may wait until 1m30s for a first beat.
	advance(t, clk, 1, 30*time.Second-time.Nanosecond)
	if st, _ := m.CheckState("loop"); st.Status != health.Pending {
		t.Fatalf("29.999s after startup: %v, want pending", st.Status)
	}
	advance(t, clk, 1, time.Nanosecond)
	var cursor uint64
	for {
		ev := waitCheckEvent(t, m, &cursor)
		if ev.Check == "loop" {
			if ev.Type != health.EventCheckFailed || !ev.Time.Equal(healthtest.Epoch.Add(90*time.Second)) {
				t.Fatalf("event %+v, want check-failed at 1m30s", ev)
			}
			break
		}
	}
}

func TestAHeartbeatObservesTheAgeOfTheLastBeat(t *testing.T) {
	m, clk := fakeMonitor(t)
	hb, _ := m.Heartbeat("loop", time.Minute, health.Live)
	start(t, m)
	hb.Beat()
	waitRuns(t, m, "loop", 1)
	advance(t, clk, 1, 10*time.Second) // the default period refreshes the result
	r := waitResultAt(t, m, "loop", healthtest.Epoch.Add(10*time.Second))
	if !r.OK || r.ObservedValue != 10.0 || r.ObservedUnit != "s" {
		t.Fatalf("result %+v, want ok with the last beat 10 s old", r)
	}
}

func TestAHeartbeatWithATTLShorterThanItsPeriodFailsAtTheTTL(t *testing.T) {
	m, clk := fakeMonitor(t) // the default period is 10s; the ttl is 3s
	m.Heartbeat("loop", 3*time.Second, health.Live)
	start(t, m)
	advance(t, clk, 1, 3*time.Second)
	var cursor uint64
	ev := waitCheckEvent(t, m, &cursor)
	if ev.Type != health.EventCheckFailed || !ev.Time.Equal(healthtest.Epoch.Add(3*time.Second)) {
		t.Fatalf("event %+v, want check-failed at the 3s ttl, not at the 10s period", ev)
	}
	if st, _ := m.CheckState("loop"); st.InitialDelay != 0 || st.Timeout != 0 {
		t.Fatalf("a heartbeat shows initial delay %v and timeout %v, which it never applies", st.InitialDelay, st.Timeout)
	}
}

func TestAReportOfFailFailsAHeartbeatAtOnceWithItsOutputAndABeatPassesItAgain(t *testing.T) {
	m, clk := fakeMonitor(t)
	hb, _ := m.Heartbeat("loop", time.Minute, health.Live)
	start(t, m)
	hb.Beat()
	var cursor uint64
	waitCheckEvent(t, m, &cursor) // passed
	advance(t, clk, 1, 2*time.Second)
	if err := hb.Report(health.Report{Status: health.Fail, Output: "disk full"}); err != nil {
		t.Fatal(err)
	}
	ev := waitCheckEvent(t, m, &cursor)
	if ev.Type != health.EventCheckFailed || ev.Output != "disk full" || !ev.Time.Equal(healthtest.Epoch.Add(2*time.Second)) {
		t.Fatalf("event %+v, want check-failed at once, at 2s, saying disk full", ev)
	}
	if m.Passing(health.Live) {
		t.Fatal("liveness passes with a heartbeat that reported fail")
	}
	hb.Beat()
	for {
		if ev := waitCheckEvent(t, m, &cursor); ev.Check == "loop" {
			if ev.Type != health.EventCheckPassed || ev.From != health.Fail {
				t.Fatalf("event %+v, want check-passed from fail on a plain beat", ev)
			}
			break
		}
	}
	if r := waitResultAt(t, m, "loop", healthtest.Epoch.Add(2*time.Second)); !r.OK || r.Output != "" {
		t.Fatalf("result %+v after a plain beat, want ok with no output", r)
	}
}

func TestAReportOfWarnWarnsAndStillPassesUntilAReportOfPass(t *testing.T) {
	m, _ := fakeMonitor(t)
	hb, _ := m.Heartbeat("queue", time.Minute, health.Ready)
	start(t, m)
	hb.Report(health.Report{Status: health.Warn, Output: "queue is 80% full"})
	var cursor uint64
	ev := waitCheckEvent(t, m, &cursor)
	if ev.Type != health.EventCheckWarned || ev.From != health.Pending || ev.Output != "queue is 80% full" {
		t.Fatalf("event %+v, want check-warned from pending with the output", ev)
	}
	if !m.Passing(health.Ready) {
		t.Fatal("readiness fails with a heartbeat that warns: warn counts as passing")
	}
	if st, _ := m.CheckState("queue"); st.Status != health.Warn {
		t.Fatalf("status %v, want warn", st.Status)
	}
	hb.Report(health.Report{Status: health.Pass, Output: "queue drained"})
	for {
		if ev := waitCheckEvent(t, m, &cursor); ev.Check == "queue" {
			if ev.Type != health.EventCheckPassed || ev.From != health.Warn || ev.Output != "queue drained" {
				t.Fatalf("event %+v, want check-passed from warn with the output", ev)
			}
			break
		}
	}
}

func TestTheTTLFailsAHeartbeatWhoseLastReportWarnedOrFailed(t *testing.T) {
	for _, status := range []health.Status{health.Warn, health.Fail} {
		t.Run(status.String(), func(t *testing.T) {
			m, clk := fakeMonitor(t)
			hb, _ := m.Heartbeat("loop", 3*time.Second, health.Live)
			start(t, m)
			hb.Report(health.Report{Status: status, Output: "said so"})
			waitRuns(t, m, "loop", 1)
			advance(t, clk, 1, 3*time.Second)
			if status == health.Warn { // a change of status: recorded at the ttl
				r := waitResultAt(t, m, "loop", healthtest.Epoch.Add(3*time.Second))
				if r.OK || r.Output != "no beat for 3s (ttl 3s)" {
					t.Fatalf("result at the ttl %+v, want failed: no beat for 3s", r)
				}
			}
			// A failing check's output is refreshed each period.
			advance(t, clk, 1, 7*time.Second)
			r := waitResultAt(t, m, "loop", healthtest.Epoch.Add(10*time.Second))
			if r.OK || r.Output != "no beat for 10s (ttl 3s)" {
				t.Fatalf("result at the period %+v, want failed: no beat for 10s", r)
			}
			if st, _ := m.CheckState("loop"); st.Status != health.Fail {
				t.Fatalf("status %v past the ttl, want fail", st.Status)
			}
		})
	}
}

func TestAReportedValueIsTheResultsWhileTheBeatIsInTime(t *testing.T) {
	m, clk := fakeMonitor(t)
	hb, _ := m.Heartbeat("backup", time.Hour, health.Ready)
	start(t, m)
	hb.Report(health.Report{Status: health.Pass, Output: "backup done", Value: 4500, Unit: "ms"})
	r := waitResultAt(t, m, "backup", healthtest.Epoch)
	if !r.OK || r.Output != "backup done" || r.ObservedValue != 4500 || r.ObservedUnit != "ms" {
		t.Fatalf("result %+v, want ok, the output and 4500 ms", r)
	}
	hb.Beat()
	advance(t, clk, 1, 10*time.Second) // the period: a plain beat's result observes its age
	if r := waitResultAt(t, m, "backup", healthtest.Epoch.Add(10*time.Second)); r.ObservedValue != 10.0 || r.ObservedUnit != "s" || r.Output != "" {
		t.Fatalf("result %+v after a plain beat, want its age, 10 s", r)
	}
}

func TestAReportSaysWhatIsWrongWithIt(t *testing.T) {
	m, _ := fakeMonitor(t)
	hb, _ := m.Heartbeat("loop", time.Minute, health.Live)
	for _, tc := range []struct {
		r    health.Report
		want string
	}{
		{health.Report{Status: health.Pending}, "heartbeat report: status pending is not pass, warn or fail"},
		{health.Report{Status: health.Status(9)}, "heartbeat report: status status(9) is not pass, warn or fail"},
		{health.Report{Status: health.Pass, Value: 12}, "heartbeat report: observed value 12 has no unit"},
		{health.Report{Status: health.Pass, Value: math.NaN(), Unit: "ms"}, "heartbeat report: observed value NaN is not a finite number"},
		{health.Report{Status: health.Warn, Value: float32(math.Inf(-1)), Unit: "ms"}, "heartbeat report: observed value -Inf is not a finite number"},
	} {
		if err := hb.Report(tc.r); err == nil || err.Error() != tc.want {
			t.Errorf("Report(%+v): %v, want %s", tc.r, err, tc.want)
		}
	}
}

func TestResetForgetsAReport(t *testing.T) {
	m, _ := fakeMonitor(t)
	hb, _ := m.Heartbeat("loop", time.Minute, health.Live)
	start(t, m)
	hb.Report(health.Report{Status: health.Fail, Output: "broken"})
	waitFor(t, "the report to fail the check", func() bool { st, _ := m.CheckState("loop"); return st.Status == health.Fail })
	m.Reset("the workload restarted")
	if st, _ := m.CheckState("loop"); st.Status != health.Pending {
		t.Fatalf("after Reset: %v, want pending, waiting for a beat of the new instance", st.Status)
	}
	if r, err := m.RunNow(context.Background(), "loop"); err != nil || r.Output != "pending: waiting for the first beat" {
		t.Fatalf("judged after Reset: %+v, %v; want pending, the old report forgotten", r, err)
	}
}

func TestAHeartbeatHasNoUnitsOfWorkToEnd(t *testing.T) {
	m, _ := fakeMonitor(t)
	if _, err := m.Heartbeat("loop", time.Minute, health.Live, health.EndUnitsOnReset()); !errors.Is(err, health.ErrInvalidCheck) ||
		!strings.Contains(err.Error(), "EndUnitsOnReset is a watchdog's option") {
		t.Fatalf("Heartbeat with EndUnitsOnReset: %v, want ErrInvalidCheck saying why", err)
	}
}
