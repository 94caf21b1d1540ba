package health_test

import (
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
