package health_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
)

// The tests of PauseChecks and ResetChecks: the checks of one service among
// several start over, on behalf of an owner, while the others go on.

// eventsSince returns the events after *cursor, which the calls before have
// emitted already, and moves the cursor on.
func eventsSince(m *health.Monitor, cursor *uint64) []health.Event {
	evs := m.Events(*cursor)
	if len(evs) > 0 {
		*cursor = evs[len(evs)-1].ID
	}
	return evs
}

func readyzVerbose(m *health.Monitor) string {
	return serveProbe(m.Handler(), "GET", "/readyz?verbose", "").Body.String()
}

func TestPauseChecksHoldsTheNamedChecksWhileTheOthersGoOn(t *testing.T) {
	m, clk := fakeMonitor(t)
	api, worker, loop := passing(), passing(), passing()
	m.Add(health.Check{Name: "a-api", Level: health.Ready, Checker: api, Period: time.Second})
	m.Add(health.Check{Name: "b-worker", Level: health.Ready, Checker: worker, Period: time.Second})
	m.Add(health.Check{Name: "b-loop", Level: health.Live, Checker: loop, Period: time.Second})
	start(t, m)
	for _, name := range []string{"a-api", "b-worker", "b-loop"} {
		waitRuns(t, m, name, 1)
	}
	waitFor(t, "readiness", func() bool { return m.Passing(health.Ready) })
	before, _ := m.CheckState("a-api")
	cursor := lastEventID(m)
	const why = "b exited (crash): restarting in 500ms"
	m.PauseChecks("b", why, []string{"b-worker", "b-loop", "no-such-check"})

	// At once: readiness fails, liveness and startup do not; the checks of
	// b are pending with their history kept, a's goes on as it was.
	if m.Passing(health.Ready) || !m.Passing(health.Live) || !m.Passing(health.Startup) {
		t.Fatalf("b paused: startup %v live %v ready %v, want true true false",
			m.Passing(health.Startup), m.Passing(health.Live), m.Passing(health.Ready))
	}
	evs := eventsSince(m, &cursor)
	if len(evs) != 2 || evs[0].Type != health.EventChecksReset || evs[0].Service != "b" || evs[0].Output != why ||
		evs[1].Type != health.EventLevelFailed || evs[1].Level != health.Ready {
		t.Fatalf("events of the pause: %+v; want checks-reset of service b saying why, then readiness failing", evs)
	}
	for _, name := range []string{"b-worker", "b-loop"} {
		st, _ := m.CheckState(name)
		if st.Status != health.Pending || st.Runs != 0 || len(st.History) != 1 || st.PausedBy != "b" {
			t.Errorf("%s paused: %v, %d runs, %d kept, paused by %q; want pending with none counted, 1 kept, paused by b",
				name, st.Status, st.Runs, len(st.History), st.PausedBy)
		}
	}
	if st, _ := m.CheckState("a-api"); st.Status != health.Pass || st.Runs != before.Runs || st.PausedBy != "" {
		t.Fatalf("a-api while b is paused: %+v; want it as it was: %+v", st, before)
	}
	body := readyzVerbose(m)
	for _, want := range []string{"[+]a-api ok\n", "[-]b-worker pending: paused: b: " + why + "\n",
		"[+]b-loop pending: paused: b: " + why + "\n", "[-]monitor pending: paused: b: " + why + "\n"} {
		if !strings.Contains(body, want) {
			t.Errorf("/readyz?verbose while b is paused has no line %q:\n%s", want, body)
		}
	}
	if s := m.Snapshot(); s.Paused != "b: "+why {
		t.Errorf("snapshot says paused %q, want %q", s.Paused, "b: "+why)
	}

	// Time passes: a's check runs, b's do not, and a run by hand of one of
	// them is not recorded.
	workerRuns, loopRuns := worker.runs.Load(), loop.runs.Load()
	advance(t, clk, 1, time.Second)
	advance(t, clk, 1, time.Second)
	waitRuns(t, m, "a-api", before.Runs+2)
	if _, err := m.RunNow(context.Background(), "b-worker"); err != nil {
		t.Fatal(err)
	}
	if worker.runs.Load() != workerRuns+1 || loop.runs.Load() != loopRuns {
		t.Fatalf("b's checkers ran %d and %d times while paused, want only the run by hand",
			worker.runs.Load()-workerRuns, loop.runs.Load()-loopRuns)
	}
	if st, _ := m.CheckState("b-worker"); st.Runs != 0 {
		t.Fatalf("a run by hand of a paused check was recorded: %+v", st)
	}

	// ResetChecks of the owner: b's checks run again at once.
	m.ResetChecks("b", "b started again", []string{"b-worker", "b-loop"})
	waitRuns(t, m, "b-worker", 1)
	waitRuns(t, m, "b-loop", 1)
	waitFor(t, "readiness once b's checks pass", func() bool { return m.Passing(health.Ready) })
	evs = eventsSince(m, &cursor)
	if evs[0].Type != health.EventChecksReset || evs[0].Service != "b" || evs[0].Output != "b started again" {
		t.Fatalf("first event after ResetChecks: %+v, want checks-reset of service b", evs[0])
	}
	if s := m.Snapshot(); s.Paused != "" || s.Checks[1].PausedBy != "" {
		t.Fatalf("after ResetChecks: paused %q, b-worker paused by %q; want neither", s.Paused, s.Checks[1].PausedBy)
	}
}

func TestResetChecksStartsOnlyTheNamedChecksOver(t *testing.T) {
	m, clk := fakeMonitor(t)
	m.Add(health.Check{Name: "a-api", Level: health.Ready, Checker: passing(), Period: time.Second})
	m.Add(health.Check{Name: "b-db", Level: health.Ready, Checker: passing(), Period: time.Second, InitialDelay: time.Second})
	hb, err := m.Heartbeat("b-loop", 10*time.Second, health.Live)
	if err != nil {
		t.Fatal(err)
	}
	start(t, m)
	hb.Beat()
	advance(t, clk, 3, time.Second)
	waitRuns(t, m, "a-api", 2)
	waitRuns(t, m, "b-db", 1)
	waitFor(t, "readiness", func() bool { return m.Passing(health.Ready) })
	waitFor(t, "the heartbeat to pass", func() bool { st, _ := m.CheckState("b-loop"); return st.Status == health.Pass })
	before, _ := m.CheckState("a-api")
	m.ResetChecks("b", "b restarted", []string{"b-db", "b-loop"})

	for _, name := range []string{"b-db", "b-loop"} {
		if st, _ := m.CheckState(name); st.Status != health.Pending || st.Runs != 0 || len(st.History) == 0 {
			t.Errorf("%s after ResetChecks: %v, %d runs, %d kept; want pending with none counted, its history kept",
				name, st.Status, st.Runs, len(st.History))
		}
	}
	if st, _ := m.CheckState("a-api"); st.Status != health.Pass || st.Runs != before.Runs {
		t.Fatalf("a-api after b's ResetChecks: %+v; want it as it was: %+v", st, before)
	}
	// Readiness fails for b-db's being pending, not for a pause.
	if m.Passing(health.Ready) || strings.Contains(readyzVerbose(m), "monitor") {
		t.Fatalf("after ResetChecks: ready %v, /readyz?verbose:\n%s\nwant failing on b-db alone", m.Passing(health.Ready), readyzVerbose(m))
	}
	// b-db's initial delay counts from the ResetChecks; the heartbeat waits
	// for a beat of the new instance.
	reset := clk.Now()
	advance(t, clk, 3, time.Second)
	if r := waitResultAt(t, m, "b-db", reset.Add(time.Second)); !r.Time.Equal(reset.Add(time.Second)) {
		t.Fatalf("b-db ran at %v, want its initial delay after the ResetChecks, %v", r.Time, reset.Add(time.Second))
	}
	if st, _ := m.CheckState("b-loop"); st.Status != health.Pending {
		t.Fatalf("the heartbeat passed on a beat from before the ResetChecks: %+v", st)
	}
	hb.Beat()
	waitFor(t, "a beat of the new instance to pass", func() bool { st, _ := m.CheckState("b-loop"); return st.Status == health.Pass })
	waitFor(t, "readiness again", func() bool { return m.Passing(health.Ready) })
}

func TestPauseChecksWithNoNamesFailsReadinessUntilItsResetChecks(t *testing.T) {
	m, _ := fakeMonitor(t)
	m.Add(health.Check{Name: "a-api", Level: health.Ready, Checker: passing(), Period: time.Hour})
	start(t, m)
	waitFor(t, "readiness", func() bool { return m.Passing(health.Ready) })
	cursor := lastEventID(m)
	m.PauseChecks("b", "b exited: restarting in 1s", nil)
	if m.Passing(health.Ready) || !m.Passing(health.Startup) || !m.Passing(health.Live) {
		t.Fatal("a service with no checks paused: want readiness failing, startup and liveness passing")
	}
	if st, _ := m.CheckState("a-api"); st.Status != health.Pass || st.Runs != 1 {
		t.Fatalf("a-api while a service without checks is paused: %+v", st)
	}
	if evs := eventsSince(m, &cursor); len(evs) != 2 || evs[0].Type != health.EventChecksReset || evs[0].Service != "b" {
		t.Fatalf("events of the pause: %+v", evs)
	}
	m.ResetChecks("b", "b started", nil)
	if !m.Passing(health.Ready) {
		t.Fatalf("ResetChecks did not end the pause:\n%s", readyzVerbose(m))
	}
}

func TestReadinessFailsUntilEveryOwnerThatPausedResets(t *testing.T) {
	m, _ := fakeMonitor(t)
	m.Add(health.Check{Name: "a-api", Level: health.Ready, Checker: passing(), Period: time.Hour})
	m.Add(health.Check{Name: "b-api", Level: health.Ready, Checker: passing(), Period: time.Hour})
	start(t, m)
	waitFor(t, "readiness", func() bool { return m.Passing(health.Ready) })
	m.PauseChecks("b", "b exited", []string{"b-api"})
	m.PauseChecks("a", "a exited", []string{"a-api"})
	if body := readyzVerbose(m); !strings.Contains(body, "[-]monitor pending: paused: a: a exited; b: b exited\n") {
		t.Fatalf("/readyz?verbose with two services paused:\n%s", body)
	}
	m.ResetChecks("a", "a started", []string{"a-api"})
	waitRuns(t, m, "a-api", 1)
	if m.Passing(health.Ready) {
		t.Fatal("ready while b's pause stands")
	}
	if body := readyzVerbose(m); !strings.Contains(body, "[-]monitor pending: paused: b: b exited\n") || strings.Contains(body, "a exited") {
		t.Fatalf("/readyz?verbose once a reset:\n%s", body)
	}
	if st, _ := m.CheckState("b-api"); st.Runs != 0 || st.PausedBy != "b" {
		t.Fatalf("b-api ran or was let go by a's ResetChecks: %+v", st)
	}
	m.ResetChecks("b", "b started", []string{"b-api"})
	waitFor(t, "readiness once both reset", func() bool { return m.Passing(health.Ready) })
}

func TestResetEndsEveryOwnersPause(t *testing.T) {
	m, _ := fakeMonitor(t)
	m.Add(health.Check{Name: "a-api", Level: health.Ready, Checker: passing(), Period: time.Hour})
	m.Add(health.Check{Name: "b-api", Level: health.Ready, Checker: passing(), Period: time.Hour})
	start(t, m)
	waitFor(t, "readiness", func() bool { return m.Passing(health.Ready) })
	m.PauseChecks("a", "a exited", []string{"a-api"})
	m.PauseChecks("b", "b exited", nil)
	m.Pause("maintenance")
	if s := m.Snapshot(); s.Paused != "maintenance; a: a exited; b: b exited" || s.Checks[0].PausedBy != "a" {
		t.Fatalf("paused %q, a-api paused by %q; want Pause's reason, then each owner's", s.Paused, s.Checks[0].PausedBy)
	}
	m.Reset("everything restarted")
	waitRuns(t, m, "a-api", 1)
	waitFor(t, "readiness after Reset", func() bool { return m.Passing(health.Ready) })
	if s := m.Snapshot(); s.Paused != "" || s.Checks[0].PausedBy != "" {
		t.Fatalf("after Reset: paused %q, a-api paused by %q; want no pause left", s.Paused, s.Checks[0].PausedBy)
	}
}

func TestPauseChecksStartsStartupOverOnlyForAStartupCheckThatCounts(t *testing.T) {
	tests := []struct {
		name     string
		stopped  string // a check stopped before the pause
		names    []string
		unlatch  bool
		startupz int
	}{
		{"a startup check among them", "", []string{"b-boot", "b-api"}, true, 503},
		{"no startup check among them", "", []string{"b-api"}, false, 200},
		{"a stopped startup check among them", "b-boot", []string{"b-boot", "b-api"}, false, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _ := fakeMonitor(t)
			for _, c := range []health.Check{
				{Name: "a-boot", Level: health.Startup}, {Name: "b-boot", Level: health.Startup},
				{Name: "a-api", Level: health.Ready}, {Name: "b-api", Level: health.Ready},
			} {
				c.Checker, c.Period = passing(), time.Hour
				m.Add(c)
			}
			start(t, m)
			waitFor(t, "readiness", func() bool { return m.Passing(health.Ready) })
			if tt.stopped != "" {
				m.StopCheck(tt.stopped)
			}
			cursor := lastEventID(m)
			m.PauseChecks("b", "b exited", tt.names)
			if m.Passing(health.Startup) == tt.unlatch {
				t.Fatalf("startup passing %v, want %v", m.Passing(health.Startup), !tt.unlatch)
			}
			if code := serveProbe(m.Handler(), "GET", "/startupz", "").Code; code != tt.startupz {
				t.Fatalf("/startupz answered %d, want %d", code, tt.startupz)
			}
			startupFailed := slices.ContainsFunc(eventsSince(m, &cursor), func(e health.Event) bool {
				return e.Type == health.EventLevelFailed && e.Level == health.Startup
			})
			if startupFailed != tt.unlatch {
				t.Fatalf("a level-failed event of startup: %v, want %v", startupFailed, tt.unlatch)
			}
		})
	}
}

func TestAfterResetChecksOfAStartupCheckItsOwnersChecksWaitForStartupAndTheOthersRunOn(t *testing.T) {
	m, clk := fakeMonitor(t)
	boot, aAPI, bAPI := passing(), passing(), passing()
	m.Add(health.Check{Name: "b-boot", Level: health.Startup, Checker: boot, Period: time.Second})
	m.Add(health.Check{Name: "a-api", Level: health.Ready, Checker: aAPI, Period: time.Second})
	m.Add(health.Check{Name: "b-api", Level: health.Ready, Checker: bAPI, Period: time.Second})
	start(t, m)
	waitFor(t, "readiness", func() bool { return m.Passing(health.Ready) })
	boot.fail("not listening yet")
	m.ResetChecks("b", "b restarted", []string{"b-boot", "b-api"})
	if m.Passing(health.Startup) || m.Passing(health.Ready) {
		t.Fatal("startup or readiness passing after a ResetChecks of a startup check")
	}
	waitRuns(t, m, "b-boot", 1)

	// a-api's worker runs on, and a run of it by hand counts; b-api waits
	// for startup, and a run of it by hand does not count.
	aRuns, _ := m.CheckState("a-api")
	advance(t, clk, 2, time.Second) // a-api and b-boot sleep; b-api waits for startup
	waitRuns(t, m, "a-api", aRuns.Runs+1)
	waitRuns(t, m, "b-boot", 2)
	if _, err := m.RunNow(context.Background(), "a-api"); err != nil {
		t.Fatal(err)
	}
	if st, _ := m.CheckState("a-api"); st.Runs != aRuns.Runs+2 || st.Status != health.Pass {
		t.Fatalf("a-api while b's startup check fails: %+v; want its worker's run and the one by hand counted", st)
	}
	if bAPI.runs.Load() != 1 {
		t.Fatalf("b-api ran %d times, want once, before its owner's startup check started over", bAPI.runs.Load())
	}
	m.RunNow(context.Background(), "b-api")
	if st, _ := m.CheckState("b-api"); st.Runs != 0 {
		t.Fatalf("a run by hand of a check waiting for startup was counted: %+v", st)
	}

	// Startup passes again: b-api runs at that moment.
	boot.pass()
	advance(t, clk, 2, time.Second)
	passedAt := clk.Now()
	if r := waitResultAt(t, m, "b-api", passedAt); !r.Time.Equal(passedAt) {
		t.Fatalf("b-api ran at %v, want when startup passed again, %v", r.Time, passedAt)
	}
	waitFor(t, "readiness again", func() bool { return m.Passing(health.Ready) })
	if s := m.Snapshot(); !s.StartupPassed.Equal(passedAt) {
		t.Fatalf("startup passed at %v, want %v", s.StartupPassed, passedAt)
	}
}

func TestADisabledCheckNeitherRunsNorCountsUntilStartCheck(t *testing.T) {
	m, clk := fakeMonitor(t)
	db := failing("connection refused")
	m.Add(health.Check{Name: "api", Level: health.Ready, Checker: passing(), Period: time.Second})
	m.Add(health.Check{Name: "boot", Level: health.Startup, Checker: failing("never asked"), Disabled: true})
	m.Add(health.Check{Name: "db", Level: health.Ready, Checker: db, Period: time.Second, FailureThreshold: 1, Disabled: true})
	hb, err := m.Heartbeat("loop", time.Second, health.Live, health.Disabled())
	if err != nil {
		t.Fatal(err)
	}
	start(t, m)
	waitFor(t, "readiness without the disabled checks", func() bool { return m.Passing(health.Ready) })
	for range 3 { // the heartbeat's ttl passes thrice, with no beat
		advance(t, clk, 1, time.Second) // api alone sleeps
	}
	if db.runs.Load() != 0 || !m.Passing(health.Live) || !m.Passing(health.Ready) {
		t.Fatalf("disabled checks ran (%d) or counted: live %v ready %v", db.runs.Load(), m.Passing(health.Live), m.Passing(health.Ready))
	}
	for _, name := range []string{"boot", "db", "loop"} {
		if st, _ := m.CheckState(name); !st.Stopped || st.Status != health.Pending || st.Runs != 0 {
			t.Errorf("%s disabled: %+v; want stopped and pending, with no run", name, st)
		}
	}
	if body := readyzVerbose(m); !strings.Contains(body, "[+]db stopped: left out until started again\n") {
		t.Fatalf("/readyz?verbose:\n%s", body)
	}

	// One added after Start: check-added, and no check-stopped.
	cursor := lastEventID(m)
	if err := m.Add(health.Check{Name: "cache", Level: health.Ready, Checker: failing("refused"), Disabled: true}); err != nil {
		t.Fatal(err)
	}
	if evs := eventsSince(m, &cursor); len(evs) != 1 || evs[0].Type != health.EventCheckAdded || evs[0].Check != "cache" {
		t.Fatalf("events of adding a disabled check: %+v, want check-added alone", evs)
	}

	// Started, it is pending, counts, and runs.
	if err := m.StartCheck("db"); err != nil {
		t.Fatal(err)
	}
	evs := eventsSince(m, &cursor)
	if len(evs) < 2 || evs[0].Type != health.EventCheckStarted || evs[0].Check != "db" ||
		evs[1].Type != health.EventLevelFailed || evs[1].Level != health.Ready {
		t.Fatalf("events of starting a disabled check: %+v, want check-started, then readiness failing", evs)
	}
	waitFor(t, "the started check to fail", func() bool { st, _ := m.CheckState("db"); return st.Status == health.Fail })
	if m.Passing(health.Ready) {
		t.Fatal("ready with the started check failing")
	}
	if err := m.StartCheck("loop"); err != nil {
		t.Fatal(err)
	}
	hb.Beat()
	waitFor(t, "the started heartbeat to pass on a beat", func() bool { st, _ := m.CheckState("loop"); return st.Status == health.Pass })
	for _, e := range m.Events(0) {
		if e.Type == health.EventCheckStopped {
			t.Fatalf("event %+v: a disabled check was said stopped", e)
		}
	}
}

// A service with no startup check that restarts while another's startup
// check starts over is not held by it: its checks run at once, as the
// kubelet runs the probes of a container with no startup probe.
func TestResetChecksWithNoStartupCheckDoNotWaitForAnothersStartup(t *testing.T) {
	m, clk := fakeMonitor(t)
	bStart, aLive := passing(), passing()
	m.Add(health.Check{Name: "b-start", Level: health.Startup, Checker: bStart, Period: time.Second})
	m.Add(health.Check{Name: "a-live", Level: health.Live, Checker: aLive, Period: time.Second})
	start(t, m)
	waitRuns(t, m, "a-live", 1)
	m.PauseChecks("b", "b exited", []string{"b-start"}) // startup has to pass again, once b is back
	if m.Passing(health.Startup) {
		t.Fatal("startup passes while b's startup check is paused")
	}
	m.PauseChecks("a", "a exited", []string{"a-live"})
	m.ResetChecks("a", "a started again", []string{"a-live"})
	clk.Advance(time.Second)
	waitRuns(t, m, "a-live", 1)
	if st, _ := m.CheckState("a-live"); st.Status != health.Pass {
		t.Fatalf("a-live after a's restart, b still down: %v, want pass: b's startup holds only b", st.Status)
	}
}
