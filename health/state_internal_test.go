package health

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"testing"
	"time"
)

// spelt is the result a letter spells: P passes, W passes with a warning,
// F fails, U decides nothing (Undecided).
func spelt(r rune) Result {
	if r == 'U' {
		return Result{Undecided: true}
	}
	return Result{OK: r != 'F', Warn: r == 'W'}
}

// runs spells results, as spelt reads them.
func replay(t thresholds, runs string) []Status {
	var s checkState
	out := make([]Status, 0, len(runs))
	for _, r := range runs {
		s, _ = s.after(spelt(r), t, time.Time{})
		out = append(out, s.status)
	}
	return out
}

func TestStateMachine(t *testing.T) {
	kubelet := thresholds{success: 1, failure: 3}
	tests := []struct {
		name string
		th   thresholds
		runs string
		want string // one status per run: - pending, P pass, W warn, F fail
	}{
		{"a check passes on its first success with the default success threshold", kubelet, "P", "P"},
		{"a new check stays pending through failures below the threshold", kubelet, "FF", "--"},
		{"a new check fails at the failure threshold", kubelet, "FFF", "--F"},
		{"a passing check that fails below its threshold reports warn", kubelet, "PFF", "PWW"},
		{"a warning check fails at the threshold", kubelet, "PFFF", "PWWF"},
		{"one success ends a warning", kubelet, "PFFP", "PWWP"},
		{"a failure between others resets the count", kubelet, "PFFPFF", "PWWPWW"},
		{"a failed check passes again on success", kubelet, "FFFP", "--FP"},
		{"a failed check stays failed while it keeps failing", kubelet, "FFFFF", "--FFF"},
		{"a success threshold of 3 needs three passes in a row", thresholds{success: 3, failure: 3}, "PPP", "--P"},
		{"a failure resets the passes needed", thresholds{success: 3, failure: 3}, "PPFPPP", "-----P"},
		{"a failed check needs the success threshold to pass again", thresholds{success: 2, failure: 1}, "FPFPP", "FFFFP"},
		{"a failure threshold of 1 fails at once", thresholds{success: 1, failure: 1}, "PFP", "PFP"},
		{"with a success threshold of 1 a pass after a failure decides", kubelet, "FPFF", "-PWW"},
		{"a result that warns makes a passing check warn", kubelet, "PW", "PW"},
		{"a first result that warns decides as a pass does, and warns", kubelet, "W", "W"},
		{"a warning lasts until a result that does not warn", kubelet, "PWWP", "PWWP"},
		{"results that warn count toward the success threshold", thresholds{success: 2, failure: 3}, "WW", "-W"},
		{"a failed check warns on the successes that pass it, if the latest warns", thresholds{success: 1, failure: 1}, "FWF", "FWF"},
		{"failures after a warning count to the threshold as after a pass", kubelet, "WFFF", "WWWF"},
		{"a check whose runs decide nothing stays pending", kubelet, "UUUU", "----"},
		{"an undecided run then a pass passes", kubelet, "UP", "-P"},
		{"an undecided run counts as no failure", kubelet, "UFUFUF", "-----F"},
		{"an undecided run between passes keeps the count of passes", thresholds{success: 3, failure: 3}, "PUPUP", "----P"},
		{"an undecided run leaves a passing check passing", kubelet, "PUUU", "PPPP"},
		{"an undecided run leaves a failed check failed", kubelet, "FFFUU", "--FFF"},
		{"an undecided run leaves a warning check warning", kubelet, "PFUU", "PWWW"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got strings.Builder
			for _, s := range replay(tt.th, tt.runs) {
				got.WriteByte(map[Status]byte{Pending: '-', Pass: 'P', Warn: 'W', Fail: 'F'}[s])
			}
			if got.String() != tt.want {
				t.Fatalf("runs %s with thresholds %+v: statuses %s, want %s", tt.runs, tt.th, got.String(), tt.want)
			}
		})
	}
}

func TestStability(t *testing.T) {
	stable3s := thresholds{success: 1, failure: 3, stableFor: 3 * time.Second}
	tests := []struct {
		name string
		th   thresholds
		// One step a second: a result as spelt reads it, or . none (the
		// clock only reaches that second).
		steps string
		want  string // the status after each step: - pending, P pass, W warn, F fail
	}{
		{"a check passes once it has passed for its stable time", stable3s, "P...", "---P"},
		{"runs that go on passing do not hasten it", stable3s, "PPPP", "---P"},
		{"it passes at the moment, not at its next run", stable3s, "P..P", "---P"},
		{"a failure in the wait starts it over", stable3s, "PPFP...", "------P"},
		{"failures up to the threshold in the wait fail it", stable3s, "PFFF", "---F"},
		{"a failed check waits to be stable again, failed meanwhile", stable3s, "FFFP...", "--FFFFP"},
		{"once stable, a failure below the threshold warns as before", stable3s, "P...FP", "---PWP"},
		{"once stable, a warning check passes again with no wait", stable3s, "P...FFP", "---PWWP"},
		{"a failed stable check waits again", stable3s, "P...FFFP...", "---PWWFFFFP"},
		{"the wait starts at the success threshold", thresholds{success: 2, failure: 3, stableFor: 2 * time.Second}, "PP..", "---P"},
		{"no stable time passes at the success threshold", thresholds{success: 1, failure: 3}, "P", "P"},
		{"a result that warns counts as a pass in the wait, and the check warns once stable", stable3s, "PW..", "---W"},
		{"once stable, it passes if its latest result does not warn", stable3s, "W..P", "---P"},
		{"an undecided run does not break the wait, nor end it early", stable3s, "PUU.", "---P"},
		{"once stable after an undecided run, it warns as its latest result that decided", stable3s, "WU..", "---W"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			var s checkState
			var got strings.Builder
			for i, step := range tt.steps {
				now := at.Add(time.Duration(i) * time.Second)
				switch step {
				case '.':
					s, _ = s.settle(tt.th, now)
				default:
					s, _ = s.after(spelt(step), tt.th, now)
				}
				got.WriteByte(map[Status]byte{Pending: '-', Pass: 'P', Warn: 'W', Fail: 'F'}[s.status])
			}
			if got.String() != tt.want {
				t.Fatalf("steps %s with %+v: statuses %s, want %s", tt.steps, tt.th, got.String(), tt.want)
			}
		})
	}
}

func TestAStableCheckPassesWithOneTransitionAtTheMomentAndSaysWhenBefore(t *testing.T) {
	th := thresholds{success: 1, failure: 3, stableFor: 30 * time.Second}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s, tr := checkState{}.after(Result{OK: true}, th, at)
	if stable, waiting := s.stableAt(th); tr != nil || !waiting || !stable.Equal(at.Add(30*time.Second)) {
		t.Fatalf("after a pass: transition %v, stable at %v (waiting %v); want none, at 30s", tr, stable.Sub(at), waiting)
	}
	if s, tr = s.settle(th, at.Add(30*time.Second-time.Nanosecond)); tr != nil {
		t.Fatalf("a nanosecond early: transition %v", *tr)
	}
	s, tr = s.settle(th, at.Add(30*time.Second))
	if tr == nil || *tr != (transition{Pending, Pass}) || !s.since.Equal(at.Add(30*time.Second)) || tr.event() != EventCheckPassed {
		t.Fatalf("at 30s: transition %v since %v, want pending to pass at 30s", tr, s.since)
	}
	if _, waiting := s.stableAt(th); waiting {
		t.Fatal("a passed check still waits")
	}
	if _, tr = s.settle(th, at.Add(time.Hour)); tr != nil {
		t.Fatalf("settled again: transition %v", *tr)
	}
}

func TestCapOutputCutsOnARuneBoundaryAndSaysSo(t *testing.T) {
	long := strings.Repeat("é", MaxOutput) // two bytes each
	got := capOutput(long)
	if len(got) > MaxOutput {
		t.Fatalf("capped output is %d bytes, over %d", len(got), MaxOutput)
	}
	if !strings.HasSuffix(got, truncationMark) {
		t.Fatalf("capped output does not end with %q", truncationMark)
	}
	if s := strings.TrimSuffix(got, truncationMark); strings.ContainsRune(s, '\uFFFD') || len(s)%2 != 0 {
		t.Fatalf("capped output split a rune: %q", s[len(s)-4:])
	}
	if short := "dial tcp: refused"; capOutput(short) != short {
		t.Fatalf("short output changed")
	}
}

func TestEventLogKeepsTheNewestAndCountsOn(t *testing.T) {
	l := newEventLog(3)
	for range 5 {
		l.append(Event{Type: EventCheckPassed})
	}
	evs := l.after(0)
	if len(evs) != 3 || evs[0].ID != 3 || evs[2].ID != 5 {
		t.Fatalf("after(0) = %v, want ids 3..5", ids(evs))
	}
	if evs := l.after(4); len(evs) != 1 || evs[0].ID != 5 {
		t.Fatalf("after(4) = %v, want [5]", ids(evs))
	}
	if evs := l.after(5); evs != nil {
		t.Fatalf("after(5) = %v, want none", ids(evs))
	}
}

// The log grows as events come, never beyond its size, and keeps the newest
// size of them across each growth and after it wraps.
func TestEventLogGrowsUpToItsSizeAndKeepsTheNewest(t *testing.T) {
	for _, size := range []int{1, 2, firstEvents - 1, firstEvents, firstEvents + 1, 3*firstEvents + 5, 100} {
		l := newEventLog(size)
		if l.changes.buf != nil {
			t.Fatalf("size %d: a new log holds %d slots before any event", size, cap(l.changes.buf))
		}
		allocs := 0
		for n := 1; n <= 2*size+3; n++ {
			before := cap(l.changes.buf)
			l.append(Event{Type: EventCheckPassed})
			if cap(l.changes.buf) != before {
				allocs++
			}
			if cap(l.changes.buf) > size || cap(l.changes.buf) > max(firstEvents, 2*n) {
				t.Fatalf("size %d, %d events: %d slots, want at most the size and twice the events (or %d)", size, n, cap(l.changes.buf), firstEvents)
			}
			evs := l.after(0)
			want := min(n, size)
			if len(evs) != want || evs[0].ID != uint64(n-want+1) || evs[len(evs)-1].ID != uint64(n) {
				t.Fatalf("size %d, %d events: after(0) = %v, want ids %d..%d", size, n, ids(evs), n-want+1, n)
			}
			for i, e := range evs {
				if e.ID != evs[0].ID+uint64(i) {
					t.Fatalf("size %d, %d events: after(0) = %v, not in order", size, n, ids(evs))
				}
			}
		}
		// Doubling from firstEvents: one allocation, then one per doubling.
		if want := bits.Len(uint(size/firstEvents)) + 1; allocs > want {
			t.Fatalf("size %d: the ring was made %d times, want at most %d", size, allocs, want)
		}
	}
}

func ids(evs []Event) []uint64 {
	out := make([]uint64, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}

func TestNamesFollowTheRule(t *testing.T) {
	for name, want := range map[string]bool{
		"db": true, "peer-config": true, "a": true, "0": true, "a.b_c-d": true,
		strings.Repeat("a", 63): true, strings.Repeat("a", 64): false,
		"": false, "DB": false, "-db": false, "db-": false, "d b": false, "db/x": false, "é": false,
	} {
		if got := ValidName(name); got != want {
			t.Errorf("ValidName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestEveryStatusChangeIsOneTransitionWithItsEvent(t *testing.T) {
	th := thresholds{success: 1, failure: 2}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var s checkState
	steps := []struct {
		ok   bool
		want *transition
		typ  EventType
	}{
		{true, &transition{Pending, Pass}, EventCheckPassed},
		{true, nil, ""},
		{false, &transition{Pass, Warn}, EventCheckWarned},
		{false, &transition{Warn, Fail}, EventCheckFailed},
		{false, nil, ""},
		{true, &transition{Fail, Pass}, EventCheckPassed},
	}
	for i, st := range steps {
		now := at.Add(time.Duration(i) * time.Second)
		var tr *transition
		s, tr = s.after(Result{OK: st.ok, Output: "out"}, th, now)
		switch {
		case (tr == nil) != (st.want == nil):
			t.Fatalf("step %d: transition %v, want %v", i, tr, st.want)
		case tr != nil && (*tr != *st.want || tr.event() != st.typ || !s.since.Equal(now)):
			t.Fatalf("step %d: transition %v (%s) since %v, want %v (%s) since %v", i, *tr, tr.event(), s.since, *st.want, st.typ, now)
		}
	}
	if s.runs != len(steps) {
		t.Fatalf("runs %d, want %d", s.runs, len(steps))
	}
}

func TestOnlyAPassingStartupCheckStops(t *testing.T) {
	for _, l := range []Level{Startup, Live, Ready} {
		for _, st := range []Status{Pending, Pass, Warn, Fail} {
			if got, want := stops(l, st), l == Startup && st == Pass; got != want {
				t.Errorf("stops(%v, %v) = %v, want %v", l, st, got, want)
			}
		}
	}
}

func TestWhatHoldsACheckFromRunningNow(t *testing.T) {
	tests := []struct {
		name  string
		facts runFacts
		want  hold
	}{
		{"a pending startup check runs: it is what passes startup", runFacts{level: Startup}, notHeld},
		{"a failed startup check runs on", runFacts{level: Startup, status: Fail}, notHeld},
		{"a startup check that warns runs on", runFacts{level: Startup, status: Warn}, notHeld},
		{"a startup check that has passed runs no more", runFacts{level: Startup, status: Pass}, heldPassed},
		{"a startup check that has passed runs no more once startup has passed", runFacts{level: Startup, status: Pass, startedUp: true}, heldPassed},
		{"a live check waits for startup", runFacts{level: Live}, heldForStartup},
		{"a passing ready check waits for startup that passes again", runFacts{level: Ready, status: Pass}, heldForStartup},
		{"a live check runs once startup has passed", runFacts{level: Live, startedUp: true}, notHeld},
		{"a ready check that has passed runs on", runFacts{level: Ready, status: Pass, startedUp: true}, notHeld},
		{"a failed live check runs on", runFacts{level: Live, status: Fail, startedUp: true}, notHeld},
		{"a stopped check does not run", runFacts{level: Ready, status: Pass, off: true, startedUp: true}, heldOff},
		{"a stopped startup check does not run", runFacts{level: Startup, off: true}, heldOff},
		{"a paused check does not run", runFacts{level: Live, status: Warn, paused: true, startedUp: true}, heldPaused},
		{"a paused startup check does not run", runFacts{level: Startup, paused: true}, heldPaused},
		{"a stopped check waiting for startup is held as stopped", runFacts{level: Ready, off: true}, heldOff},
		{"a paused check waiting for startup is held as paused", runFacts{level: Ready, paused: true}, heldPaused},
		{"a check both stopped and paused is held as stopped", runFacts{level: Live, off: true, paused: true, startedUp: true}, heldOff},
		{"a passed startup check that is paused is held as paused", runFacts{level: Startup, status: Pass, paused: true}, heldPaused},
	}
	names := map[hold]string{notHeld: "runs", heldOff: "off", heldPaused: "paused", heldPassed: "passed", heldForStartup: "for startup"}
	for _, tt := range tests {
		if got := tt.facts.held(); got != tt.want {
			t.Errorf("%s: %+v held %s, want %s", tt.name, tt.facts, names[got], names[tt.want])
		}
	}
}

func TestLevelVerdicts(t *testing.T) {
	type counts = [Ready + 1][Fail + 1]int
	with := func(l Level, s Status, n int) counts {
		var c counts
		c[l][s] = n
		return c
	}
	tests := []struct {
		name                 string
		state                levelState
		startup, live, ready bool
	}{
		{"nothing has started: live only", levelState{}, false, true, false},
		{"started with no checks and latched: all pass", levelState{started: true, latched: true}, true, true, true},
		{"a pending ready check fails readiness", levelState{started: true, latched: true, counts: with(Ready, Pending, 1)}, true, true, false},
		{"a warning ready check passes", levelState{started: true, latched: true, counts: with(Ready, Warn, 1)}, true, true, true},
		{"a failed ready check fails readiness only", levelState{started: true, latched: true, counts: with(Ready, Fail, 1)}, true, true, false},
		{"a pending live check fails nothing", levelState{started: true, latched: true, counts: with(Live, Pending, 1)}, true, true, true},
		{"a failed live check fails liveness and readiness", levelState{started: true, latched: true, counts: with(Live, Fail, 1)}, true, false, false},
		{"startup not latched fails startup and readiness", levelState{started: true, counts: with(Startup, Pending, 1)}, false, true, false},
		{"draining fails readiness only", levelState{started: true, latched: true, draining: true}, true, true, false},
		{"stopped fails readiness only", levelState{started: true, latched: true, stopped: true}, true, true, false},
		{"paused fails readiness, and startup (not latched)", levelState{started: true, paused: true, pausedAll: true}, false, true, false},
		{"an owner's pause fails readiness only", levelState{started: true, latched: true, paused: true}, true, true, false},
		{"a failed live check fails liveness while an owner pauses", levelState{started: true, latched: true, paused: true, counts: with(Live, Fail, 1)}, true, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := tt.state.verdicts()
			if v[Startup] != tt.startup || v[Live] != tt.live || v[Ready] != tt.ready {
				t.Fatalf("startup %v live %v ready %v, want %v %v %v", v[Startup], v[Live], v[Ready], tt.startup, tt.live, tt.ready)
			}
		})
	}
}

func TestStartupLatchesOnceStartedWithNoStartupCheckPendingOrFailing(t *testing.T) {
	tests := []struct {
		name  string
		state levelState
		want  bool
	}{
		{"not started", levelState{}, false},
		{"started, no startup checks", levelState{started: true}, true},
		{"a pending startup check", levelState{started: true, counts: [Ready + 1][Fail + 1]int{Startup: {Pending: 1}}}, false},
		{"a failed startup check", levelState{started: true, counts: [Ready + 1][Fail + 1]int{Startup: {Fail: 1, Pass: 2}}}, false},
		{"every startup check passed", levelState{started: true, counts: [Ready + 1][Fail + 1]int{Startup: {Pass: 3}}}, true},
		{"already latched", levelState{started: true, latched: true}, false},
		{"paused, with no startup checks", levelState{started: true, paused: true, pausedAll: true}, false},
		{"an owner's pause, every startup check passed", levelState{started: true, paused: true, counts: [Ready + 1][Fail + 1]int{Startup: {Pass: 1}}}, true},
		{"an owner's pause of a startup check, pending again", levelState{started: true, paused: true, counts: [Ready + 1][Fail + 1]int{Startup: {Pass: 1, Pending: 1}}}, false},
	}
	for _, tt := range tests {
		if got := tt.state.latches(); got != tt.want {
			t.Errorf("%s: latches() = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestAResultSaysWhenItsRunTimedOut(t *testing.T) {
	expired, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	live := context.Background()
	start := time.Unix(100, 0)
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want string
	}{
		{"a bare context error", expired, context.DeadlineExceeded, "timed out after 1s"},
		{"a wrapped context error", expired, fmt.Errorf("ping: %w", context.DeadlineExceeded), "timed out after 1s: ping: context deadline exceeded"},
		{"an error of its own at the timeout", expired, errors.New("read tcp: i/o timeout"), "timed out after 1s: read tcp: i/o timeout"},
		{"an error that says it timed out", expired, errors.New(`command "sleep 5" timed out after 1s`), `command "sleep 5" timed out after 1s`},
		{"the kubelet's gRPC wording of a timeout", expired, errors.New(`timeout: failed to connect service "h:1" within 1s: context deadline exceeded`), `timeout: failed to connect service "h:1" within 1s: context deadline exceeded`},
		{"a deadline error before the timeout", live, fmt.Errorf("ping: %w", context.DeadlineExceeded), "ping: context deadline exceeded"},
		{"a pass", expired, nil, "fine"},
	}
	for _, tt := range tests {
		r := result(start, outcome{err: tt.err, obs: Observation{Message: "fine"}, end: start.Add(time.Second)}, tt.ctx, time.Second)
		if r.Output != tt.want || r.OK != (tt.err == nil) || r.Duration != time.Second {
			t.Errorf("%s: %+v, want output %q", tt.name, r, tt.want)
		}
	}
}

type stillClock struct{ now time.Time }

func (c stillClock) Now() time.Time               { return c.now }
func (c stillClock) NewTimer(time.Duration) Timer { panic("not used") }
func (c stillClock) WithTimeout(p context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(p, d)
}

func TestNextDueRunsALateRunNowAndSkipsOnlyWholeMissedPeriods(t *testing.T) {
	due := time.Unix(1000, 0)
	p := 10 * time.Second
	tests := []struct {
		name string
		now  time.Time
		want time.Time
	}{
		{"on time: one period on", due, due.Add(p)},
		{"the next is due but not yet late", due.Add(p), due.Add(p)},
		{"less than a period late: run now, on the old beat", due.Add(p + 3*time.Second), due.Add(p)},
		{"two and a half periods late: skip the two missed", due.Add(3*p + 5*time.Second), due.Add(3 * p)},
	}
	for _, tt := range tests {
		m := &Monitor{clock: stillClock{tt.now}}
		if got := m.nextDue(due, p); !got.Equal(tt.want) {
			t.Errorf("%s: next due %v after due, want %v", tt.name, got.Sub(due), tt.want.Sub(due))
		}
	}
}

func TestAPhaseIsOneOfFourWholeTicksWithinTheJittersSpread(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		jitter float64
		period time.Duration
		want   []time.Duration
	}{
		{0.1, 10 * time.Second, []time.Duration{0, 250 * ms, 500 * ms, 750 * ms}},
		{0.1, time.Second, []time.Duration{0, 20 * ms, 40 * ms, 60 * ms}}, // a quarter of 100ms, truncated to the tick
		{0.1, 400 * ms, []time.Duration{0, 10 * ms, 20 * ms, 30 * ms}},
		{0.1, 300 * ms, []time.Duration{0}}, // a step of 7.5ms is shorter than a tick
		{0, time.Hour, []time.Duration{0}},
		{1, time.Minute, []time.Duration{0, 15 * time.Second, 30 * time.Second, 45 * time.Second}},
	}
	for _, tt := range tests {
		m := &Monitor{jitter: tt.jitter}
		seen := map[time.Duration]bool{}
		for range 400 { // each of four missed: a chance of 4×(3/4)^400
			p := m.phase(tt.period)
			if !slices.Contains(tt.want, p) {
				t.Fatalf("jitter %v of %v: phase %v, want one of %v", tt.jitter, tt.period, p, tt.want)
			}
			seen[p] = true
		}
		if len(seen) != len(tt.want) {
			t.Errorf("jitter %v of %v: phases %v in 400 draws, want each of %v", tt.jitter, tt.period, seen, tt.want)
		}
	}
}
