package health_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/health/healthtest"
)

func TestFirstRunIsRightAfterInitialDelayThenEveryPeriod(t *testing.T) {
	m, clk := fakeMonitor(t)
	chk := passing()
	if err := m.Add(health.Check{Name: "db", Level: health.Ready, Checker: chk,
		InitialDelay: 5 * time.Second, Period: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
	start(t, m)
	t0 := healthtest.Epoch
	advance(t, clk, 1, 5*time.Second-time.Nanosecond)
	advance(t, clk, 1, time.Nanosecond)
	st := waitRuns(t, m, "db", 1)
	if got := st.History[0].Time; !got.Equal(t0.Add(5 * time.Second)) {
		t.Fatalf("first run at %v, want right after the initial delay, at %v", got.Sub(t0), 5*time.Second)
	}
	for i := 2; i <= 4; i++ {
		advance(t, clk, 1, 10*time.Second)
		st = waitRuns(t, m, "db", i)
		want := t0.Add(5*time.Second + time.Duration(i-1)*10*time.Second)
		if got := st.History[i-1].Time; !got.Equal(want) {
			t.Fatalf("run %d at %v, want %v", i, got.Sub(t0), want.Sub(t0))
		}
	}
	if st.Status != health.Pass {
		t.Fatalf("status %v, want pass", st.Status)
	}
}

// Add and Validate reject a bad check with a reason and the field at fault,
// which a configuration maps to its key without reading the message.
func TestAddRejectsBadChecksWithAReason(t *testing.T) {
	ok := health.CheckerFunc(func(context.Context) error { return nil })
	tests := []struct {
		name  string
		check health.Check
		want  string
		field string // CheckError.Field
	}{
		{"upper case name", health.Check{Name: "DB", Level: health.Ready, Checker: ok}, `check "DB": name must match`, "Name"},
		{"empty name", health.Check{Level: health.Ready, Checker: ok}, `check "": name must match`, "Name"},
		{"name too long", health.Check{Name: strings.Repeat("a", 64), Level: health.Ready, Checker: ok}, "at most 63 characters", "Name"},
		{"no level", health.Check{Name: "db", Checker: ok}, `check "db": level level(0) is not Startup, Live or Ready`, "Level"},
		{"reserved name", health.Check{Name: "shutdown", Level: health.Ready, Checker: ok}, `name "shutdown" is reserved`, "Name"},
		{"no checker", health.Check{Name: "db", Level: health.Ready}, `check "db": checker is nil`, "Checker"},
		{"negative period", health.Check{Name: "db", Level: health.Ready, Checker: ok, Period: -time.Second}, "period -1s is negative", "Period"},
		{"negative timeout", health.Check{Name: "db", Level: health.Ready, Checker: ok, Timeout: -time.Second}, "timeout -1s is negative", "Timeout"},
		{"negative delay", health.Check{Name: "db", Level: health.Ready, Checker: ok, InitialDelay: -time.Second}, "initial delay -1s is negative", "InitialDelay"},
		{"negative success threshold", health.Check{Name: "db", Level: health.Ready, Checker: ok, SuccessThreshold: -1}, "success threshold -1 is below 1", "SuccessThreshold"},
		{"negative failure threshold", health.Check{Name: "db", Level: health.Ready, Checker: ok, FailureThreshold: -2}, "failure threshold -2 is below 1", "FailureThreshold"},
		{"negative stable time", health.Check{Name: "db", Level: health.Ready, Checker: ok, StableFor: -time.Second}, "time to be stable -1s is negative", "StableFor"},
		{"timeout over period", health.Check{Name: "db", Level: health.Ready, Checker: ok, Period: time.Second, Timeout: 2 * time.Second}, "timeout 2s is longer than period 1s", "Timeout"},
		{"misspelt component type", health.Check{Name: "db", Level: health.Ready, Checker: ok, ComponentType: "datstore"},
			`component type "datstore" is not component, datastore, system or an absolute URI`, "ComponentType"},
		{"component type in capitals", health.Check{Name: "db", Level: health.Ready, Checker: ok, ComponentType: "Datastore"}, `"Datastore"`, "ComponentType"},
		{"relative URI as a component type", health.Check{Name: "db", Level: health.Ready, Checker: ok, ComponentType: "/types/db"}, `"/types/db"`, "ComponentType"},
		{"scheme alone as a component type", health.Check{Name: "db", Level: health.Ready, Checker: ok, ComponentType: "https:"}, `"https:"`, "ComponentType"},
		{"URI with a space as a component type", health.Check{Name: "db", Level: health.Ready, Checker: ok, ComponentType: "urn:x y"}, `"urn:x y"`, "ComponentType"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _ := fakeMonitor(t)
			err := m.Add(tt.check)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, health.ErrInvalidCheck) {
				t.Fatalf("Add error %v, want one containing %q that wraps ErrInvalidCheck", err, tt.want)
			}
			if len(m.Snapshot().Checks) != 0 {
				t.Fatalf("a rejected check was added")
			}
			var ce *health.CheckError
			if !errors.As(err, &ce) || ce.Field != tt.field || ce.Name != tt.check.Name {
				t.Fatalf("Add error %#v, want a *CheckError on field %s of %q", err, tt.field, tt.check.Name)
			}
			if tt.field == "Checker" {
				return // Validate leaves the checker to whoever builds it
			}
			if _, err := tt.check.Validate(); !errors.As(err, &ce) || ce.Field != tt.field || err.Error() != ce.Error() {
				t.Fatalf("Validate error %v, want a *CheckError on field %s", err, tt.field)
			}
		})
	}
}

// A component type is one of the IETF draft's three, or an absolute URI
// for a type of one's own.
func TestAddTakesTheDraftsComponentTypesAndURIs(t *testing.T) {
	ok := health.CheckerFunc(func(context.Context) error { return nil })
	for _, typ := range []string{"", "component", "datastore", "system", "https://schema.org/Database", "urn:example:queue"} {
		c := health.Check{Name: "db", Level: health.Ready, Checker: ok, ComponentType: typ}
		if v, err := c.Validate(); err != nil || v.ComponentType != typ {
			t.Errorf("Validate of component type %q: %q, %v; want it kept", typ, v.ComponentType, err)
		}
	}
}

func TestAddRejectsADuplicateNameAcrossLevels(t *testing.T) {
	m, _ := fakeMonitor(t)
	if err := m.Add(health.Check{Name: "db", Level: health.Ready, Checker: passing()}); err != nil {
		t.Fatal(err)
	}
	err := m.Add(health.Check{Name: "db", Level: health.Live, Checker: passing()})
	if !errors.Is(err, health.ErrDuplicateName) {
		t.Fatalf("Add of a duplicate: %v, want ErrDuplicateName", err)
	}
	if _, err := m.Heartbeat("db", time.Second, health.Live); !errors.Is(err, health.ErrDuplicateName) {
		t.Fatalf("Heartbeat with a taken name: %v, want ErrDuplicateName", err)
	}
	if _, err := m.Watchdog("loop", 0, health.Live); !errors.Is(err, health.ErrInvalidCheck) {
		t.Fatalf("Watchdog with no limit: %v, want ErrInvalidCheck", err)
	}
	if _, err := m.Heartbeat("loop", -time.Second, health.Live); !errors.Is(err, health.ErrInvalidCheck) {
		t.Fatalf("Heartbeat with a negative ttl: %v, want ErrInvalidCheck", err)
	}
}

func TestZeroFieldsTakeTheKubeletDefaults(t *testing.T) {
	m, _ := fakeMonitor(t)
	if err := m.Add(health.Check{Name: "db", Level: health.Ready, Checker: passing()}); err != nil {
		t.Fatal(err)
	}
	if err := m.Add(health.Check{Name: "fast", Level: health.Ready, Checker: passing(), Period: 200 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	st, _ := m.CheckState("db")
	if st.Period != 10*time.Second || st.Timeout != time.Second || st.InitialDelay != 0 ||
		st.SuccessThreshold != 1 || st.FailureThreshold != 3 {
		t.Fatalf("defaults %+v, want period 10s, timeout 1s, delay 0, thresholds 1 and 3", st)
	}
	if st, _ := m.CheckState("fast"); st.Timeout != 200*time.Millisecond {
		t.Fatalf("a default timeout longer than the period is capped at it: got %v", st.Timeout)
	}
}

func TestWithDefaultsChangesTheDefaultsOnly(t *testing.T) {
	m, _ := fakeMonitor(t, health.WithDefaults(health.Defaults{Period: time.Minute, FailureThreshold: 5}))
	m.Add(health.Check{Name: "db", Level: health.Ready, Checker: passing()})
	m.Add(health.Check{Name: "mq", Level: health.Ready, Checker: passing(), Period: time.Second, FailureThreshold: 2})
	db, _ := m.CheckState("db")
	mq, _ := m.CheckState("mq")
	if db.Period != time.Minute || db.FailureThreshold != 5 || db.Timeout != time.Second {
		t.Fatalf("db %+v, want the monitor's defaults", db)
	}
	if mq.Period != time.Second || mq.FailureThreshold != 2 {
		t.Fatalf("mq %+v, want its own values", mq)
	}
}

func TestACheckFailsAtItsThresholdAndSaysWhyInTheEvent(t *testing.T) {
	m, clk := fakeMonitor(t)
	db := failing("dial tcp 127.0.0.1:5432: connect: connection refused")
	m.Add(health.Check{Name: "db", Level: health.Ready, Checker: db, Period: time.Second})
	start(t, m)
	var cursor uint64
	waitRuns(t, m, "db", 1)
	advance(t, clk, 1, time.Second)
	st := waitRuns(t, m, "db", 2)
	if st.Status != health.Pending {
		t.Fatalf("after 2 of 3 failures: %v, want pending", st.Status)
	}
	advance(t, clk, 1, time.Second)
	ev := waitCheckEvent(t, m, &cursor)
	want := health.Event{ID: ev.ID, Time: healthtest.Epoch.Add(2 * time.Second), Type: health.EventCheckFailed,
		Check: "db", Level: health.Ready, From: health.Pending, To: health.Fail,
		Output: "dial tcp 127.0.0.1:5432: connect: connection refused"}
	if !reflect.DeepEqual(ev, want) {
		t.Fatalf("event\n got %+v\nwant %+v", ev, want)
	}
	st, _ = m.CheckState("db")
	if st.Status != health.Fail || !st.Since.Equal(want.Time) || st.ConsecutiveFailures != 3 {
		t.Fatalf("state %+v, want fail since the third run with 3 failures", st)
	}
	if m.Passing(health.Ready) {
		t.Fatal("readiness passes with a failed ready check")
	}
}

func TestStartupGatesLiveAndReadyAndLatches(t *testing.T) {
	m, clk := fakeMonitor(t)
	boot, live, ready := failing("migrations running"), passing(), passing()
	m.Add(health.Check{Name: "boot", Level: health.Startup, Checker: boot, Period: time.Second, FailureThreshold: 30})
	m.Add(health.Check{Name: "loop", Level: health.Live, Checker: live, Period: time.Second})
	m.Add(health.Check{Name: "db", Level: health.Ready, Checker: ready, Period: time.Second, InitialDelay: 500 * time.Millisecond})
	start(t, m)
	waitRuns(t, m, "boot", 1)
	advance(t, clk, 1, time.Second) // the gated workers sleep on the gate, not on the clock
	waitRuns(t, m, "boot", 2)
	if live.runs.Load() != 0 || ready.runs.Load() != 0 {
		t.Fatalf("live and ready checks ran %d and %d times before startup passed", live.runs.Load(), ready.runs.Load())
	}
	if m.Passing(health.Startup) || m.Passing(health.Ready) || !m.Passing(health.Live) {
		t.Fatalf("before startup: startup %v ready %v live %v, want false false true",
			m.Passing(health.Startup), m.Passing(health.Ready), m.Passing(health.Live))
	}
	boot.pass()
	advance(t, clk, 1, time.Second)
	waitRuns(t, m, "boot", 3)
	// The ready check's initial delay has passed, so both run as soon as startup passes.
	loop := waitRuns(t, m, "loop", 1)
	db := waitRuns(t, m, "db", 1)
	passedAt := healthtest.Epoch.Add(2 * time.Second)
	if !loop.History[0].Time.Equal(passedAt) || !db.History[0].Time.Equal(passedAt) {
		t.Fatalf("first live and ready runs at %v and %v, want when startup passed, %v",
			loop.History[0].Time, db.History[0].Time, passedAt)
	}
	if s := m.Snapshot(); !s.Startup || !s.Ready || !s.StartupPassed.Equal(passedAt) {
		t.Fatalf("snapshot %+v, want startup and ready passing since %v", s, passedAt)
	}
	// Startup checks stop once passed, and the level stays passed.
	boot.fail("would fail now")
	advance(t, clk, 2, 10*time.Second)
	waitRuns(t, m, "loop", 2)
	if st, _ := m.CheckState("boot"); st.Runs != 3 || st.Status != health.Pass {
		t.Fatalf("startup check after passing: %d runs, %v; want it stopped at 3 runs, pass", st.Runs, st.Status)
	}
	if err := m.Add(health.Check{Name: "late", Level: health.Startup, Checker: passing()}); !errors.Is(err, health.ErrStartupLatched) {
		t.Fatalf("adding a startup check after the latch: %v, want ErrStartupLatched", err)
	}
}

func TestAReadyCheckWaitsForItsInitialDelayEvenAfterStartup(t *testing.T) {
	m, clk := fakeMonitor(t)
	m.Add(health.Check{Name: "boot", Level: health.Startup, Checker: passing()})
	m.Add(health.Check{Name: "db", Level: health.Ready, Checker: passing(), InitialDelay: 3 * time.Second})
	start(t, m)
	waitRuns(t, m, "boot", 1)
	advance(t, clk, 1, 3*time.Second)
	if st := waitRuns(t, m, "db", 1); !st.History[0].Time.Equal(healthtest.Epoch.Add(3 * time.Second)) {
		t.Fatalf("first ready run at %v, want at the initial delay", st.History[0].Time)
	}
}

func TestATimedOutRunFailsAndANewRunNeverOverlapsIt(t *testing.T) {
	m, clk := fakeMonitor(t)
	stuck, most := stuckChecker(t)
	m.Add(health.Check{Name: "stuck", Level: health.Ready, Checker: stuck, Period: 2 * time.Second, Timeout: time.Second, FailureThreshold: 2})
	start(t, m)
	advance(t, clk, 1, time.Second) // the run's timeout
	st := waitRuns(t, m, "stuck", 1)
	if r, _ := st.Last(); r.OK || r.Output != "timed out after 1s" || r.Duration != time.Second {
		t.Fatalf("result %+v, want failed, \"timed out after 1s\", duration 1s", r)
	}
	advance(t, clk, 1, time.Second) // the next period: the old run is still inside
	st = waitRuns(t, m, "stuck", 2)
	if r, _ := st.Last(); r.OK || !strings.Contains(r.Output, "previous run has not returned") {
		t.Fatalf("result %+v, want a failure saying the previous run has not returned", r)
	}
	if st.Status != health.Fail {
		t.Fatalf("status %v after two failed periods, want fail", st.Status)
	}
	if most() != 1 {
		t.Fatalf("the checker was entered %d times at once, want 1", most())
	}
}

func TestACheckerThatHonoursItsContextTimesOutWithTheTimeoutInItsOutput(t *testing.T) {
	m, clk := fakeMonitor(t)
	slow := health.CheckerFunc(func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	})
	m.Add(health.Check{Name: "slow", Level: health.Ready, Checker: slow, Timeout: 1500 * time.Millisecond, FailureThreshold: 1})
	start(t, m)
	advance(t, clk, 1, 1500*time.Millisecond)
	st := waitRuns(t, m, "slow", 1)
	if r, _ := st.Last(); r.OK || r.Output != "timed out after 1.5s" {
		t.Fatalf("result %+v, want \"timed out after 1.5s\"", r)
	}
}

func TestAPanicIsAFailedRunWithThePanicMessage(t *testing.T) {
	m, clk := fakeMonitor(t)
	boom := health.CheckerFunc(func(context.Context) error { panic("nil map write") })
	m.Add(health.Check{Name: "boom", Level: health.Live, Checker: boom, Period: time.Second, FailureThreshold: 1})
	start(t, m)
	st := waitRuns(t, m, "boom", 1)
	if r, _ := st.Last(); r.OK || r.Output != "panic: nil map write" {
		t.Fatalf("result %+v, want failed with \"panic: nil map write\"", r)
	}
	advance(t, clk, 1, time.Second)
	waitRuns(t, m, "boom", 2) // and it keeps running
}

type latency struct{}

func (latency) Check(context.Context) error {
	return errors.New("Check must not be called on a Measurer")
}
func (latency) Measure(context.Context) (health.Observation, error) {
	return health.Observation{Value: 12.5, Unit: "ms", Message: "HTTP 200"}, nil
}

func TestAMeasurerObservationIsKeptWithTheResult(t *testing.T) {
	m, _ := fakeMonitor(t)
	m.Add(health.Check{Name: "api", Level: health.Ready, Checker: latency{}})
	start(t, m)
	r, _ := waitRuns(t, m, "api", 1).Last()
	if !r.OK || r.ObservedValue != 12.5 || r.ObservedUnit != "ms" || r.Output != "HTTP 200" {
		t.Fatalf("result %+v, want ok with 12.5 ms and output HTTP 200", r)
	}
}

func TestOutputIsCappedAt1KiB(t *testing.T) {
	m, _ := fakeMonitor(t)
	m.Add(health.Check{Name: "big", Level: health.Ready, Checker: failing(strings.Repeat("x", 5000))})
	start(t, m)
	r, _ := waitRuns(t, m, "big", 1).Last()
	if len(r.Output) > health.MaxOutput || !strings.HasSuffix(r.Output, "[truncated]") {
		t.Fatalf("output of %d bytes ending %q, want at most %d ending [truncated]", len(r.Output), r.Output[len(r.Output)-12:], health.MaxOutput)
	}
}

func TestHistoryKeepsTheConfiguredNumberOfResults(t *testing.T) {
	m, clk := fakeMonitor(t, health.WithHistory(2))
	m.Add(health.Check{Name: "db", Level: health.Ready, Checker: passing(), Period: time.Second})
	start(t, m)
	waitRuns(t, m, "db", 1)
	for i := 2; i <= 4; i++ {
		advance(t, clk, 1, time.Second)
		waitRuns(t, m, "db", i)
	}
	st, _ := m.CheckState("db")
	if st.Runs != 4 || len(st.History) != 2 || !st.History[1].Time.Equal(healthtest.Epoch.Add(3*time.Second)) {
		t.Fatalf("runs %d, history %d ending at %v; want 4 runs and the last 2 results", st.Runs, len(st.History), st.History[len(st.History)-1].Time)
	}
}

// The jitter is a phase drawn when a check starts and kept: its second run
// is due a period after the first and then one of four steps of a quarter
// of a tenth of the period, and every later run a period after the one
// before was due; checks started together so run in at most four batches.
// The wakes the scheduler asks of the clock say when each run is due.
func TestEachCheckKeepsOneOfFourPhasesOfItsPeriod(t *testing.T) {
	const checks, period, step = 40, 10 * time.Second, 250 * time.Millisecond
	m, clk := fakeMonitor(t, health.WithJitter(0.1))
	names := make([]string, checks)
	for i := range names {
		names[i] = fmt.Sprintf("c%02d", i)
		m.Add(health.Check{Name: names[i], Level: health.Ready, Checker: passing(), Period: period})
	}
	start(t, m)
	var wakes []time.Duration // after the last run was due
	for run := 1; run <= 3; run++ {
		due := healthtest.Epoch.Add(time.Duration(run-1) * period)
		for _, name := range names {
			st := waitRuns(t, m, name, run)
			if at := st.History[run-1].Time; run == 1 && !at.Equal(due) {
				t.Fatalf("%s's first run at %v: the jitter must not delay it", name, at.Sub(healthtest.Epoch))
			}
		}
		var next []time.Duration
		for _, at := range pendingWakes(t, clk, checks) {
			next = append(next, at.Sub(due))
		}
		counts := map[time.Duration]int{}
		for _, w := range next {
			phase := w - period
			if phase < 0 || phase > 3*step || phase%step != 0 {
				t.Fatalf("after run %d: a run due %v after the last, want a period and one phase (0, 250ms, 500ms or 750ms)", run, w)
			}
			counts[phase]++
		}
		if run == 1 && len(counts) < 2 {
			t.Errorf("phases of %d checks: %v; want two to four of the four (one has a chance of 4×(1/4)^40)", checks, counts)
		}
		if run > 1 && !slices.Equal(next, wakes) {
			t.Fatalf("after run %d the runs are due %v after the last, after run %d %v: the phases must be kept", run, next, run-1, wakes)
		}
		wakes = next
		// Past every run due in the next period, at once: the schedule
		// keeps from when runs were due, not from when they ran.
		advance(t, clk, checks, due.Add(period+time.Second).Sub(clk.Now()))
	}
}

// pendingWakes waits until each of n checks has a wake pending after now,
// and returns them, soonest first: with this clock, the scheduler keeps a
// timer for each queued check, and none of its own.
func pendingWakes(t *testing.T, clk *healthtest.Clock, n int) []time.Time {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), settle)
	defer cancel()
	if err := clk.WaitPending(ctx, n); err != nil {
		t.Fatalf("%d timers pending, want %d, within %v", clk.Pending(), n, settle)
	}
	var wakes []time.Time
	for _, at := range clk.Deadlines() {
		if at.After(clk.Now()) {
			wakes = append(wakes, at)
		}
	}
	if len(wakes) != n {
		t.Fatalf("%d wakes pending (%v), want one per check, %d", len(wakes), wakes, n)
	}
	return wakes
}

// runAtEachWake moves the clock to each of wakes in turn and waits there
// for the runs due, so that each run begins exactly when it is due.
func runAtEachWake(t *testing.T, m *health.Monitor, clk *healthtest.Clock, checks int, wakes []time.Time) {
	t.Helper()
	runs := func() (n int) {
		for _, c := range m.Snapshot().Checks {
			n += c.Runs
		}
		return n
	}
	base := runs()
	for i, at := range wakes {
		if at.After(clk.Now()) {
			advance(t, clk, checks, at.Sub(clk.Now()))
		}
		if i+1 < len(wakes) && wakes[i+1].Equal(at) {
			continue
		}
		waitFor(t, fmt.Sprintf("the runs due at %v", at), func() bool { return runs() >= base+i+1 })
	}
}

// An Update that keeps the period keeps each check's place in it, before
// its phase is taken (between the first and second runs) and after: a
// reload, which updates every check at once, leaves them in their batches.
func TestAnUpdateKeepsEachChecksPhase(t *testing.T) {
	const checks, period = 40, 10 * time.Second
	m, clk := fakeMonitor(t, health.WithJitter(0.1))
	check := func(i int, timeout time.Duration) health.Check {
		return health.Check{Name: fmt.Sprintf("c%02d", i), Level: health.Ready, Checker: passing(), Period: period, Timeout: timeout}
	}
	for i := range checks {
		m.Add(check(i, time.Second))
	}
	start(t, m)
	for i := range checks {
		waitRuns(t, m, fmt.Sprintf("c%02d", i), 1)
	}
	update := func(timeout time.Duration) {
		t.Helper()
		for i := range checks {
			if err := m.Update(check(i, timeout)); err != nil {
				t.Fatal(err)
			}
		}
	}
	second := pendingWakes(t, clk, checks) // a period and each one's phase on
	update(3 * time.Second)
	if got := pendingWakes(t, clk, checks); !slices.Equal(got, second) {
		t.Fatalf("after an update before the second runs, they are due at %v, want %v", got, second)
	}
	runAtEachWake(t, m, clk, checks, second)
	third := pendingWakes(t, clk, checks)
	update(2 * time.Second)
	if got := pendingWakes(t, clk, checks); !slices.Equal(got, third) {
		t.Fatalf("after the update the runs are due at %v, want %v", got, third)
	}
	runAtEachWake(t, m, clk, checks, third)
	fourth := pendingWakes(t, clk, checks)
	for i := range fourth {
		if d := fourth[i].Sub(third[i]); d != period {
			t.Fatalf("after the update's first runs, the %dth next is due %v after the one before it (%v, then %v), want a period: the phases kept",
				i+1, d, third[i].Sub(healthtest.Epoch), fourth[i].Sub(healthtest.Epoch))
		}
	}
}

func TestNoJitterRunsEveryPeriodExactly(t *testing.T) {
	m, clk := fakeMonitor(t) // WithJitter(0)
	m.Add(health.Check{Name: "db", Level: health.Ready, Checker: passing(), Period: time.Second})
	start(t, m)
	waitRuns(t, m, "db", 1)
	for i := 2; i <= 4; i++ {
		advance(t, clk, 1, time.Second)
		if at := waitRuns(t, m, "db", i).History[i-1].Time; !at.Equal(healthtest.Epoch.Add(time.Duration(i-1) * time.Second)) {
			t.Fatalf("run %d at %v, want %v", i, at.Sub(healthtest.Epoch), time.Duration(i-1)*time.Second)
		}
	}
}

func TestDrainSaysStoppingOnceEvenWhenReadinessFailedAlready(t *testing.T) {
	m, _ := fakeMonitor(t)
	m.Add(health.Check{Name: "db", Level: health.Ready, Checker: failing("down"), FailureThreshold: 1})
	start(t, m)
	var cursor uint64
	for ev := waitEvent(t, m, &cursor); ev.Type != health.EventCheckFailed; ev = waitEvent(t, m, &cursor) {
	}
	// The agent says why it stops; Drain then adds no second stopping.
	m.Emit(health.Event{Type: health.EventStopping, Output: "received terminated"})
	m.Drain()
	evs := m.Events(cursor)
	if len(evs) != 1 || evs[0].Type != health.EventStopping || evs[0].Output != "received terminated" {
		t.Fatalf("events %+v, want the one stopping the caller emitted", evs)
	}

	// A library's Drain with readiness failing already changes no level:
	// its stopping event is all a reader learns of it by.
	m2, _ := fakeMonitor(t)
	m2.Add(health.Check{Name: "db", Level: health.Ready, Checker: failing("down"), FailureThreshold: 1})
	start(t, m2)
	cursor = 0
	for ev := waitEvent(t, m2, &cursor); ev.Type != health.EventCheckFailed; ev = waitEvent(t, m2, &cursor) {
	}
	m2.Drain()
	if evs := m2.Events(cursor); len(evs) != 1 || evs[0].Type != health.EventStopping || evs[0].Output != "process is shutting down" {
		t.Fatalf("events %+v, want one stopping: process is shutting down", evs)
	}
}

func TestAStartedMonitorSaysWhichChecksItJudges(t *testing.T) {
	m, _ := fakeMonitor(t)
	m.Add(health.Check{Name: "db", Level: health.Ready, Checker: passing()}) // before Start: configuration, no event
	start(t, m)
	var cursor uint64
	for ev := waitEvent(t, m, &cursor); ev.Type != health.EventLevelPassed || ev.Level != health.Ready; ev = waitEvent(t, m, &cursor) {
		if ev.Type == health.EventCheckAdded {
			t.Fatalf("a check added before Start emitted %+v", ev)
		}
	}
	type seen struct {
		typ   health.EventType
		check string
		level health.Level
	}
	tests := []struct {
		change func() error
		want   []seen // in order; level events only where a verdict changes
	}{
		{func() error { return m.StopCheck("db") }, []seen{{health.EventCheckStopped, "db", health.Ready}}},
		{func() error { return m.StartCheck("db") }, []seen{{health.EventCheckStarted, "db", health.Ready}}},
		{func() error {
			return m.Add(health.Check{Name: "cache", Level: health.Ready, Checker: passing(), InitialDelay: time.Hour})
		}, []seen{{health.EventCheckAdded, "cache", health.Ready}, {health.EventLevelFailed, "", health.Ready}}},
		{func() error { return m.Remove("cache") }, []seen{{health.EventCheckRemoved, "cache", health.Ready}, {health.EventLevelPassed, "", health.Ready}}},
		{func() error { return m.StopCheck("nope") }, nil},
	}
	for i, tt := range tests {
		err := tt.change()
		if (err != nil) != (tt.want == nil) {
			t.Fatalf("change %d: error %v", i, err)
		}
		var got []seen
		for _, e := range m.Events(cursor) {
			got = append(got, seen{e.Type, e.Check, e.Level})
			cursor = e.ID
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("change %d: events %v, want %v", i, got, tt.want)
		}
	}
	// On the wire, from and to belong to status changes only.
	b, _ := json.Marshal(health.Event{Type: health.EventCheckAdded, Check: "cache", Level: health.Ready})
	if strings.Contains(string(b), `"from"`) || !strings.Contains(string(b), `"check":"cache"`) {
		t.Errorf("check-added as JSON: %s", b)
	}
}

func TestDrainFailsReadinessButNotLiveness(t *testing.T) {
	m, _ := fakeMonitor(t)
	m.Add(health.Check{Name: "db", Level: health.Ready, Checker: passing()})
	start(t, m)
	var cursor uint64
	if ev := waitEvent(t, m, &cursor); ev.Type != health.EventLevelPassed || ev.Level != health.Startup || ev.Output != "the monitor started" {
		t.Fatalf("first event %+v, want level-passed startup as the monitor started", ev)
	}
	if ev := waitEvent(t, m, &cursor); ev.Type != health.EventCheckPassed {
		t.Fatalf("second event %v, want check-passed", ev.Type)
	}
	if ev := waitEvent(t, m, &cursor); ev.Type != health.EventLevelPassed || ev.Level != health.Ready {
		t.Fatalf("third event %+v, want level-passed ready", ev)
	}
	m.Drain()
	m.Drain() // idempotent
	if ev := waitEvent(t, m, &cursor); ev.Type != health.EventStopping || ev.Output != "process is shutting down" {
		t.Fatalf("event %+v, want stopping: process is shutting down", ev)
	}
	ev := waitEvent(t, m, &cursor)
	if ev.Type != health.EventLevelFailed || ev.Level != health.Ready || ev.Output != "process is shutting down" {
		t.Fatalf("event %+v, want level-failed ready: process is shutting down", ev)
	}
	if m.Passing(health.Ready) || !m.Passing(health.Live) || !m.Snapshot().Draining {
		t.Fatal("after Drain: want readiness failing, liveness passing, draining")
	}
	if evs := m.Events(cursor); len(evs) != 0 {
		t.Fatalf("a second Drain emitted %v", evs)
	}
}

func TestAFailedLiveCheckFailsReadinessToo(t *testing.T) {
	m, _ := fakeMonitor(t)
	m.Add(health.Check{Name: "loop", Level: health.Live, Checker: failing("wedged"), FailureThreshold: 1})
	m.Add(health.Check{Name: "db", Level: health.Ready, Checker: passing()})
	start(t, m)
	waitRuns(t, m, "loop", 1)
	waitRuns(t, m, "db", 1)
	if m.Passing(health.Live) || m.Passing(health.Ready) {
		t.Fatal("want liveness and readiness failing with a failed live check")
	}
}

func TestRemoveForgetsACheckAndJudgesTheLevelAgain(t *testing.T) {
	m, _ := fakeMonitor(t)
	m.Add(health.Check{Name: "db", Level: health.Ready, Checker: passing()})
	m.Add(health.Check{Name: "broken", Level: health.Ready, Checker: failing("no"), FailureThreshold: 1})
	start(t, m)
	waitRuns(t, m, "db", 1)
	waitRuns(t, m, "broken", 1)
	if m.Passing(health.Ready) {
		t.Fatal("ready with a failed check")
	}
	if err := m.Remove("broken"); err != nil {
		t.Fatal(err)
	}
	if !m.Passing(health.Ready) {
		t.Fatal("not ready after removing the failed check")
	}
	if _, ok := m.CheckState("broken"); ok {
		t.Fatal("removed check still known")
	}
	if err := m.Remove("broken"); err == nil || !strings.Contains(err.Error(), `"broken": no such check`) {
		t.Fatalf("second Remove: %v, want no such check", err)
	}
	if err := m.Add(health.Check{Name: "broken", Level: health.Ready, Checker: passing()}); err != nil {
		t.Fatalf("re-adding a removed name: %v", err)
	}
}

func TestACheckAddedAfterStartRunsAtOnce(t *testing.T) {
	m, _ := fakeMonitor(t)
	start(t, m)
	m.Add(health.Check{Name: "db", Level: health.Ready, Checker: passing()})
	if st := waitRuns(t, m, "db", 1); st.Status != health.Pass {
		t.Fatalf("status %v, want pass", st.Status)
	}
}

func TestBeforeStartOnlyLivenessPassesAndAfterItAMonitorWithNoChecksPassesAll(t *testing.T) {
	m, _ := fakeMonitor(t)
	if m.Passing(health.Startup) || m.Passing(health.Ready) || !m.Passing(health.Live) {
		t.Fatalf("before Start: startup %v ready %v live %v, want false false true",
			m.Passing(health.Startup), m.Passing(health.Ready), m.Passing(health.Live))
	}
	start(t, m)
	for _, l := range []health.Level{health.Startup, health.Live, health.Ready} {
		if !m.Passing(l) {
			t.Errorf("%v fails with no checks", l)
		}
	}
	if m.Passing(health.Level(0)) {
		t.Error("an invalid level passes")
	}
}

func TestAStoppedMonitorFailsReadinessAndTakesNoChecks(t *testing.T) {
	m, _ := fakeMonitor(t)
	m.Add(health.Check{Name: "db", Level: health.Ready, Checker: passing()})
	ctx, cancel := context.WithCancel(context.Background())
	m.Start(ctx)
	waitRuns(t, m, "db", 1)
	if !m.Passing(health.Ready) {
		t.Fatal("not ready while running")
	}
	cancel()
	<-m.Done()
	if s := m.Snapshot(); m.Passing(health.Ready) || !s.Stopped || !s.Started || !m.Passing(health.Live) {
		t.Fatalf("after the context ended: ready %v, stopped %v; want readiness failing on a stopped monitor", m.Passing(health.Ready), s.Stopped)
	}
	if err := m.Add(health.Check{Name: "late", Level: health.Ready, Checker: passing()}); !errors.Is(err, health.ErrStopped) {
		t.Fatalf("Add after stop: %v, want ErrStopped", err)
	}
	evs := m.Events(0)
	if last := evs[len(evs)-1]; last.Type != health.EventLevelFailed || last.Level != health.Ready || last.Output != "the monitor has stopped" {
		t.Fatalf("last event %+v, want level-failed ready: the monitor has stopped", last)
	}
}

func TestARemovedCheckThatIsStillRunningIsNotRunAgainUnderItsName(t *testing.T) {
	m, clk := fakeMonitor(t)
	stuck, most := stuckChecker(t)
	c := health.Check{Name: "stuck", Level: health.Ready, Checker: stuck, Period: 2 * time.Second, Timeout: time.Second}
	m.Add(c)
	start(t, m)
	advance(t, clk, 1, time.Second)
	waitRuns(t, m, "stuck", 1)
	if err := m.Remove("stuck"); err != nil {
		t.Fatal(err)
	}
	if err := m.Remove("stuck"); !errors.Is(err, health.ErrNoSuchCheck) {
		t.Fatalf("second Remove: %v, want ErrNoSuchCheck", err)
	}
	m.Add(c)
	r, _ := waitRuns(t, m, "stuck", 1).Last()
	if r.OK || !strings.Contains(r.Output, "previous run has not returned") || most() != 1 {
		t.Fatalf("re-added check: %+v with %d runs at once; want it held back by the run still inside", r, most())
	}
}

func TestACheckerThatEndsItsGoroutineFailsWithoutHoldingUpLaterRuns(t *testing.T) {
	m, clk := fakeMonitor(t)
	var calls atomic.Int32
	goexit := health.CheckerFunc(func(context.Context) error {
		if calls.Add(1) == 1 {
			runtime.Goexit()
		}
		return nil
	})
	m.Add(health.Check{Name: "goexit", Level: health.Ready, Checker: goexit, Period: time.Second, FailureThreshold: 1})
	start(t, m)
	r, _ := waitRuns(t, m, "goexit", 1).Last()
	if r.OK || !strings.Contains(r.Output, "runtime.Goexit") {
		t.Fatalf("first run %+v, want a failure naming runtime.Goexit", r)
	}
	advance(t, clk, 1, time.Second)
	if r, _ := waitRuns(t, m, "goexit", 2).Last(); !r.OK {
		t.Fatalf("second run %+v, want it run and passing", r)
	}
}

func TestACheckerThatHonoursItsContextHasItsOwnErrorRecorded(t *testing.T) {
	m, clk := fakeMonitor(t)
	ping := health.CheckerFunc(func(ctx context.Context) error {
		<-ctx.Done()
		return fmt.Errorf("ping db: %w", ctx.Err())
	})
	m.Add(health.Check{Name: "db", Level: health.Ready, Checker: ping, FailureThreshold: 1})
	start(t, m)
	advance(t, clk, 1, time.Second)
	r, _ := waitRuns(t, m, "db", 1).Last()
	// Its error arrives within the grace: it is recorded, and says it timed out.
	if r.Output != "timed out after 1s: ping db: context deadline exceeded" {
		t.Fatalf("output %q", r.Output)
	}
}

func TestALateCursorFromAnEarlierMonitorGetsTheWholeLog(t *testing.T) {
	m, _ := fakeMonitor(t)
	m.Emit(health.Event{Type: health.EventStopping})
	if evs := m.Events(500); len(evs) != 1 || evs[0].ID != 1 {
		t.Fatalf("Events(500) on a log at id 1: %v, want the whole log", evs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), settle)
	defer cancel()
	if evs, err := m.WaitEvents(ctx, 500); err != nil || len(evs) != 1 {
		t.Fatalf("WaitEvents(500): %v %v, want the whole log at once", evs, err)
	}
}

func TestAnEventWithABadLevelStillEncodes(t *testing.T) {
	m, _ := fakeMonitor(t)
	m.Emit(health.Event{Type: "custom", Level: health.Level(9)})
	b, err := json.Marshal(m.Events(0))
	if err != nil || !strings.Contains(string(b), `"level":"level(9)"`) {
		t.Fatalf("%s %v", b, err)
	}
}

func TestWaitEventsBlocksUntilAnEventOrTheContextEnds(t *testing.T) {
	m, _ := fakeMonitor(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if evs, err := m.WaitEvents(ctx, 0); err != context.Canceled || evs != nil {
		t.Fatalf("WaitEvents on an ended context: %v %v, want context.Canceled", evs, err)
	}
	got := make(chan health.Event)
	go func() {
		evs, _ := m.WaitEvents(context.Background(), 0)
		got <- evs[0]
	}()
	e := m.Emit(health.Event{Type: health.EventServiceStarted, Service: "api", PID: 42})
	if ev := <-got; !reflect.DeepEqual(ev, e) || ev.ID != 1 || !ev.Time.Equal(healthtest.Epoch) {
		t.Fatalf("woken with %+v, want the emitted event with id 1 at the clock's time", ev)
	}
}

func TestTheEventLogIsBoundedAndReadersSeeTheGap(t *testing.T) {
	m, _ := fakeMonitor(t, health.WithEventLog(3))
	for range 5 {
		m.Emit(health.Event{Type: health.EventStopping})
	}
	evs := m.Events(1)
	if len(evs) != 3 || evs[0].ID != 3 {
		t.Fatalf("events after 1: %d starting at %d, want the newest 3 from id 3 (ids 2 was dropped)", len(evs), evs[0].ID)
	}
}

func TestEventsMarshalFromAndToOnCheckEventsOnly(t *testing.T) {
	check := health.Event{ID: 7, Time: healthtest.Epoch, Type: health.EventCheckPassed, Check: "db",
		Level: health.Ready, From: health.Pending, To: health.Pass}
	b, err := json.Marshal(check)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":7,"time":"2026-01-01T00:00:00Z","type":"check-passed","check":"db","level":"ready","from":"pending","to":"pass"}`
	if string(b) != want {
		t.Fatalf("check event\n got %s\nwant %s", b, want)
	}
	var back health.Event
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, check) {
		t.Fatalf("round trip: %+v %v, want %+v", back, err, check)
	}
	code := 0
	exit := health.Event{ID: 8, Time: healthtest.Epoch, Type: health.EventServiceExited, Service: "api", PID: 9, ExitCode: &code}
	b, _ = json.Marshal(exit)
	want = `{"id":8,"time":"2026-01-01T00:00:00Z","type":"service-exited","service":"api","pid":9,"exitCode":0}`
	if string(b) != want {
		t.Fatalf("service event\n got %s\nwant %s", b, want)
	}
}

func TestStartingTwiceStartsNothingMore(t *testing.T) {
	m, _ := fakeMonitor(t)
	chk := passing()
	m.Add(health.Check{Name: "db", Level: health.Ready, Checker: chk})
	start(t, m)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m.Start(ctx)
	waitRuns(t, m, "db", 1)
	if n := chk.runs.Load(); n != 1 {
		t.Fatalf("checker ran %d times, want 1", n)
	}
}

func TestRunRunsOneCheckNowAsTheMonitorWould(t *testing.T) {
	if r := health.Run(context.Background(), latency{}, time.Second); !r.OK || r.ObservedValue != 12.5 || r.Output != "HTTP 200" {
		t.Fatalf("Run of a Measurer: %+v", r)
	}
	if r := health.Run(context.Background(), failing("refused"), time.Second); r.OK || r.Output != "refused" {
		t.Fatalf("Run of a failing checker: %+v", r)
	}
	boom := health.CheckerFunc(func(context.Context) error { panic("boom") })
	if r := health.Run(context.Background(), boom, time.Second); r.OK || r.Output != "panic: boom" {
		t.Fatalf("Run of a panicking checker: %+v", r)
	}
	stuck, _ := stuckChecker(t)
	r := health.Run(context.Background(), stuck, 50*time.Millisecond)
	if r.OK || r.Output != "timed out after 50ms" || r.Duration != 50*time.Millisecond {
		t.Fatalf("Run of a checker that ignores its context: %+v, want it to return, timed out", r)
	}
}

func TestRunCancelledByItsCallerSaysSoAndKeepsTheCheckersOwnAnswer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	honest := health.CheckerFunc(func(ctx context.Context) error {
		<-ctx.Done()
		return errors.New("connected, but no answer came")
	})
	time.AfterFunc(20*time.Millisecond, cancel)
	if r := health.Run(ctx, honest, time.Hour); r.OK || r.Output != "connected, but no answer came" {
		t.Fatalf("a checker that answers when cancelled: %+v, want its own answer, not a timeout", r)
	}
	stuck, _ := stuckChecker(t)
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	if r := health.Run(ctx, stuck, time.Hour); r.OK || !strings.HasPrefix(r.Output, "cancelled after ") {
		t.Fatalf("a checker that ignores the cancel: %+v, want \"cancelled after …\"", r)
	}
}

func TestAStoppedCheckIsLeftOutOfTheLevelsUntilStartedAgain(t *testing.T) {
	m, _ := fakeMonitor(t)
	db := failing("connection refused")
	m.Add(health.Check{Name: "db", Level: health.Ready, Checker: db, FailureThreshold: 1})
	m.Add(health.Check{Name: "cache", Level: health.Ready, Checker: passing()})
	start(t, m)
	waitRuns(t, m, "db", 1)
	waitRuns(t, m, "cache", 1)
	if m.Passing(health.Ready) {
		t.Fatal("ready with a failed check")
	}
	if err := m.StopCheck("db"); err != nil {
		t.Fatal(err)
	}
	st, _ := m.CheckState("db")
	if !m.Passing(health.Ready) || !st.Stopped || st.Status != health.Fail {
		t.Fatalf("after stopping the failed check: ready %v, %+v; want ready, the check stopped and still fail", m.Passing(health.Ready), st)
	}
	w := httptest.NewRecorder()
	m.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/readyz?verbose", nil))
	if want := "[+]db stopped: left out until started again\n[+]cache ok\n[+]shutdown ok\nreadyz check passed\n"; w.Body.String() != want {
		t.Fatalf("/readyz?verbose:\n%s\nwant\n%s", w.Body.String(), want)
	}
	runs := db.runs.Load()
	db.pass()
	if err := m.StartCheck("db"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the started check to run again", func() bool { return db.runs.Load() > runs })
	waitFor(t, "readiness with the check passing", func() bool { return m.Passing(health.Ready) })
	if err := m.StopCheck("nope"); !errors.Is(err, health.ErrNoSuchCheck) {
		t.Fatalf("StopCheck of an unknown check: %v", err)
	}
}

func TestRunNowRunsACheckAtOnceAndCountsItsResult(t *testing.T) {
	m, _ := fakeMonitor(t)
	db := passing()
	m.Add(health.Check{Name: "db", Level: health.Ready, Checker: db, Period: time.Hour, FailureThreshold: 1})
	start(t, m)
	waitRuns(t, m, "db", 1)
	db.fail("connection refused")
	r, err := m.RunNow(context.Background(), "db")
	if err != nil || r.OK || r.Output != "connection refused" {
		t.Fatalf("RunNow: %+v %v", r, err)
	}
	if st, _ := m.CheckState("db"); st.Status != health.Fail || st.Runs != 2 {
		t.Fatalf("after RunNow: %+v, want the failure counted", st)
	}
	if _, err := m.RunNow(context.Background(), "nope"); !errors.Is(err, health.ErrNoSuchCheck) {
		t.Fatalf("RunNow of an unknown check: %v", err)
	}
	m.StopCheck("db")
	db.pass()
	if r, _ := m.RunNow(context.Background(), "db"); !r.OK {
		t.Fatalf("RunNow of a stopped check: %+v, want it run", r)
	}
	if st, _ := m.CheckState("db"); st.Runs != 2 || st.Status != health.Fail {
		t.Fatalf("a stopped check's manual run was counted: %+v", st)
	}
	hb, _ := m.Heartbeat("loop", time.Minute, health.Live)
	if r, _ := m.RunNow(context.Background(), "loop"); r.OK || r.Output != "pending: waiting for the first beat" {
		t.Fatalf("RunNow of a heartbeat with no beat: %+v", r)
	}
	hb.Beat()
	if r, _ := m.RunNow(context.Background(), "loop"); !r.OK {
		t.Fatalf("RunNow of a beaten heartbeat: %+v", r)
	}
}

func TestRedactionHidesSecretsFromEveryOutput(t *testing.T) {
	redact := func(s string) string { return strings.ReplaceAll(s, "hunter2", "xxxxx") }
	m, _ := fakeMonitor(t, health.WithRedaction(redact))
	m.Add(health.Check{Name: "db", Level: health.Ready, Checker: failing("login as admin:hunter2 refused"), FailureThreshold: 1})
	start(t, m)
	r, _ := waitRuns(t, m, "db", 1).Last()
	var cursor uint64
	ev := waitCheckEvent(t, m, &cursor)
	now, _ := m.RunNow(context.Background(), "db")
	for _, out := range []string{r.Output, ev.Output, now.Output} {
		if out != "login as admin:xxxxx refused" {
			t.Fatalf("output %q, want the secret redacted", out)
		}
	}
}

// Validate fills a check's zero timing fields as a Monitor without
// WithDefaults runs it: the kubelet's defaults, the timeout no longer than a
// shorter period.
func TestValidateFillsTheKubeletsDefaults(t *testing.T) {
	c, err := health.Check{Name: "db", Level: health.Ready, Period: 500 * time.Millisecond}.Validate()
	if err != nil {
		t.Fatal(err)
	}
	if c.Period != 500*time.Millisecond || c.Timeout != 500*time.Millisecond || c.InitialDelay != 0 ||
		c.SuccessThreshold != 1 || c.FailureThreshold != 3 {
		t.Fatalf("Validate gave %+v", c)
	}
	c, _ = health.Check{Name: "db", Level: health.Ready}.Validate()
	if c.Period != 10*time.Second || c.Timeout != time.Second {
		t.Fatalf("Validate gave period %v, timeout %v; want 10s, 1s", c.Period, c.Timeout)
	}
}
