package agent

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/health"
)

// guard bounds how long these tests wait for the agent's goroutines to do
// what the fake clock or the workload told them to: a guard against
// hanging, never a measurement.
const guard = 10 * time.Second

// checkEvent waits for the next event of type typ about check, after the
// event with id *cursor, and moves the cursor past it.
func (r *agentRun) checkEvent(t *testing.T, cursor *uint64, typ health.EventType, check string) health.Event {
	t.Helper()
	for deadline := time.Now().Add(guard); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		for _, e := range r.a.monitor.Events(*cursor) {
			*cursor = e.ID
			if e.Type == typ && e.Check == check {
				return e
			}
		}
	}
	t.Fatalf("no %s event of %s within %v; events %q", typ, check, guard, r.events())
	return health.Event{}
}

// state waits until the check has recorded runs results and returns its
// state.
func (r *agentRun) state(t *testing.T, name string, runs int) health.CheckState {
	t.Helper()
	for deadline := time.Now().Add(guard); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if st, _ := r.a.monitor.CheckState(name); st.Runs >= runs {
			return st
		}
	}
	st, _ := r.a.monitor.CheckState(name)
	t.Fatalf("%s: %d runs, not %d within %v", name, st.Runs, runs, guard)
	return st
}

// mqLost is a workload that prints "connection to MQ lost" once the file
// named by the returned path exists, and then sleeps.
func mqLost(t *testing.T) (trigger string, command []string) {
	trigger = filepath.Join(t.TempDir(), "lose-the-connection")
	return trigger, []string{"sh", "-c", `while [ ! -e "$0" ]; do sleep 0.01; done; echo "connection to MQ lost"; exec sleep 3600`, trigger}
}

func TestAFailPatternLineFailsItsCheckAtTheMomentItIsPrinted(t *testing.T) {
	trigger, command := mqLost(t)
	r := start(t, parse(t, "checks:\n  mq-lost: {log: {fail-pattern: \"connection to MQ lost\"}}\n"), command...)
	r.state(t, "mq-lost", 1)
	if code := r.readyz(t); code != http.StatusOK {
		t.Fatalf("/readyz %d before the line, want 200", code)
	}
	at := r.clock.Now()
	var cursor uint64
	if err := os.WriteFile(trigger, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ev := r.checkEvent(t, &cursor, health.EventCheckFailed, "mq-lost")
	if !ev.Time.Equal(at) || ev.From != health.Pass {
		t.Fatalf("event %+v, want check-failed from pass at %v, the moment of the line", ev, at)
	}
	if code := r.readyz(t); code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz %d after the line, want 503", code)
	}
	if st, _ := r.a.monitor.CheckState("mq-lost"); st.Runs != 2 || st.FailureThreshold != 1 || !r.clock.Now().Equal(at) {
		t.Fatalf("%d runs, failure threshold %d, the clock at %v: want the line's run, threshold 1, no time passed",
			st.Runs, st.FailureThreshold, r.clock.Now().Sub(at))
	}
}

func TestAFailPatternCheckGivenThreeFailuresNeedsThree(t *testing.T) {
	trigger, command := mqLost(t)
	r := start(t, parse(t, "checks:\n  mq-lost: {log: {fail-pattern: \"connection to MQ lost\", window: 1h}, failure-threshold: 3}\n"), command...)
	r.state(t, "mq-lost", 1)
	at := r.clock.Now()
	var cursor uint64
	if err := os.WriteFile(trigger, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if ev := r.checkEvent(t, &cursor, health.EventCheckWarned, "mq-lost"); !ev.Time.Equal(at) {
		t.Fatalf("event %+v, want check-warned at the line", ev)
	}
	// The period is 10s, and the phase at most a tenth of it: a run in each 11s.
	for runs := 3; runs <= 4; runs++ {
		if st := r.state(t, "mq-lost", runs-1); st.Status != health.Warn {
			t.Fatalf("after %d failures: %v, want warn", st.ConsecutiveFailures, st.Status)
		}
		if code := r.readyz(t); code != http.StatusOK {
			t.Fatalf("/readyz %d while the check warns, want 200", code)
		}
		r.clock.Advance(11 * time.Second)
		r.state(t, "mq-lost", runs)
	}
	ev := r.checkEvent(t, &cursor, health.EventCheckFailed, "mq-lost")
	if st, _ := r.a.monitor.CheckState("mq-lost"); st.ConsecutiveFailures != 3 || ev.From != health.Warn || !ev.Time.Equal(at.Add(22*time.Second)) {
		t.Fatalf("failed after %d failures, from %v at %v; want 3, from warn, at the third run", st.ConsecutiveFailures, ev.From, ev.Time.Sub(at))
	}
}

func TestAHeartbeatThatStopsBeatingFailsAtItsTTL(t *testing.T) {
	r := start(t, parse(t, "checks:\n  loop: {level: live, heartbeat: {ttl: 3s}}\n"))
	at := r.clock.Now()
	var cursor uint64
	r.a.fed.Heartbeat("loop").Beat()
	r.checkEvent(t, &cursor, health.EventCheckPassed, "loop")
	r.clock.Advance(3*time.Second - time.Nanosecond)
	if st, _ := r.a.monitor.CheckState("loop"); st.Status != health.Pass {
		t.Fatalf("a nanosecond before the ttl: %v, want pass", st.Status)
	}
	r.clock.Advance(time.Nanosecond)
	ev := r.checkEvent(t, &cursor, health.EventCheckFailed, "loop")
	if !ev.Time.Equal(at.Add(3*time.Second)) || ev.Output != "no beat for 3s (ttl 3s)" {
		t.Fatalf("event %+v, want check-failed at exactly 3s", ev)
	}
}

func TestAStableForCheckPassesOnceStableAndWaitsAgainAfterARestart(t *testing.T) {
	up := filepath.Join(t.TempDir(), "up")
	if err := os.WriteFile(up, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r := start(t, parse(t, fmt.Sprintf("checks:\n  mq: {file: {path: %q}, stable-for: 25s}\n", up)), "sleep", "3600")
	st := r.state(t, "mq", 1)
	at := st.History[0].Time
	if st.Status != health.Pending || !st.StableAt.Equal(at.Add(25*time.Second)) || r.readyz(t) != http.StatusServiceUnavailable {
		t.Fatalf("after its first pass: %v, stable at %v; want pending, not ready, until 25s", st.Status, st.StableAt.Sub(at))
	}
	var cursor uint64
	r.clock.Advance(11 * time.Second)
	r.state(t, "mq", 2)
	r.clock.Advance(11 * time.Second)
	r.state(t, "mq", 3)
	r.clock.Advance(3 * time.Second) // 25s
	if ev := r.checkEvent(t, &cursor, health.EventCheckPassed, "mq"); !ev.Time.Equal(at.Add(25 * time.Second)) {
		t.Fatalf("event %+v, want check-passed at 25s", ev)
	}
	if code := r.readyz(t); code != http.StatusOK {
		t.Fatalf("/readyz %d once stable, want 200", code)
	}
	// A restart of the workload starts the wait over, from its first run.
	conn, err := client.New(r.a.cfg.API, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	if _, err := conn.RestartService(ctx); err != nil {
		t.Fatal(err)
	}
	restarted := r.clock.Now()
	st = r.state(t, "mq", 1)
	if st.Status != health.Pending || !st.StableAt.Equal(restarted.Add(25*time.Second)) || r.readyz(t) != http.StatusServiceUnavailable {
		t.Fatalf("after the restart: %v, stable at %v; want pending, not ready, until 25s after it", st.Status, st.StableAt.Sub(restarted))
	}
}

// A check that waits for a line is not failing at a moment: a startup log
// check with a pattern stays pending at its first runs, as a startupProbe
// does, and on-failure: restart does not restart the workload before it can
// print the line.
func TestAStartupPatternCheckWaitsForItsLineWithoutARestart(t *testing.T) {
	trigger := filepath.Join(t.TempDir(), "print-ready")
	r := start(t, parse(t, "service: {command: [sh]}\nchecks:\n  started: {level: startup, log: {pattern: ready}, on-failure: restart}\n"),
		"sh", "-c", `while [ ! -e "$0" ]; do sleep 0.01; done; echo ready; exec sleep 3600`, trigger)
	if st := r.state(t, "started", 1); st.Status != health.Pending || st.FailureThreshold != 3 {
		t.Fatalf("before its line: %v, failure threshold %d; want pending, 3", st.Status, st.FailureThreshold)
	}
	var cursor uint64
	if err := os.WriteFile(trigger, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r.checkEvent(t, &cursor, health.EventCheckPassed, "started")
	for _, e := range r.a.monitor.Events(0) {
		if e.Type == health.EventCheckFailed || e.Type == health.EventServiceExited {
			t.Fatalf("event %+v before the line: want none that fails or restarts", e)
		}
	}
}
