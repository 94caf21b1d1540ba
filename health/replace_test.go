package health_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
)

// Replace puts a new check in the old one's place, at once: pending, with
// its own history, in the same place of the order, said as a removal and
// an addition; the old one's runs stop.
func TestReplacePutsANewCheckInTheOldOnesPlace(t *testing.T) {
	m, clk := fakeMonitor(t)
	old := passing()
	must(t, m.Add(health.Check{Name: "a", Level: health.Ready, Checker: passing(), Period: time.Second}))
	must(t, m.Add(health.Check{Name: "db", Level: health.Ready, Checker: old, Period: time.Second}))
	must(t, m.Add(health.Check{Name: "z", Level: health.Ready, Checker: passing(), Period: time.Second}))
	start(t, m)
	waitRuns(t, m, "db", 1)
	waitFor(t, "ready", func() bool { return m.Passing(health.Ready) })
	cursor := m.LastEventID()

	// The new check's first run is due at once: it waits for the test to
	// have seen the check pending, which the scheduler would otherwise race.
	repl, seen := failing("other target down"), make(chan struct{})
	gated := health.CheckerFunc(func(ctx context.Context) error { <-seen; return repl.Check(ctx) })
	must(t, m.Replace(health.Check{Name: "db", Level: health.Ready, Checker: gated, Period: time.Second, FailureThreshold: 1}))
	if m.Passing(health.Ready) {
		t.Fatal("ready passes with the new check pending")
	}
	st, _ := m.CheckState("db")
	if st.Status != health.Pending || st.Runs != 0 || len(st.History) != 0 || st.FailureThreshold != 1 {
		t.Fatalf("the new check: %+v, want pending with no history and its own threshold", st)
	}
	close(seen)
	var names []string
	for _, c := range m.Snapshot().Checks {
		names = append(names, c.Name)
	}
	if fmt.Sprint(names) != "[a db z]" {
		t.Fatalf("checks %v, want db in its place", names)
	}
	if e := waitEvent(t, m, &cursor); e.Type != health.EventCheckRemoved || e.Check != "db" {
		t.Fatalf("first event %+v, want check-removed db", e)
	}
	if e := waitEvent(t, m, &cursor); e.Type != health.EventCheckAdded || e.Check != "db" {
		t.Fatalf("second event %+v, want check-added db", e)
	}
	if e := waitEvent(t, m, &cursor); e.Type != health.EventLevelFailed || e.Level != health.Ready {
		t.Fatalf("third event %+v, want level-failed ready", e)
	}
	if st := waitRuns(t, m, "db", 1); st.Status != health.Fail {
		t.Fatalf("the new check after its run: %+v", st)
	}
	before := old.runs.Load()
	for i := range 3 {
		advance(t, clk, 1, time.Second)
		waitRuns(t, m, "db", 2+i) // the new one runs on
	}
	if n := old.runs.Load(); n != before {
		t.Fatalf("the old checker ran %d more times after it was replaced", n-before)
	}
}

// Update keeps what the check has learnt — status, counters, history — and
// applies the new timing from its next run, a new period after the last.
func TestUpdateKeepsTheStateAndTakesTheNewTiming(t *testing.T) {
	m, clk := fakeMonitor(t)
	chk := passing()
	must(t, m.Add(health.Check{Name: "db", Level: health.Ready, Checker: chk, Period: 10 * time.Second}))
	start(t, m)
	waitRuns(t, m, "db", 1)
	cursor := m.LastEventID()

	again := passing()
	must(t, m.Update(health.Check{Name: "db", Level: health.Ready, Checker: again, Period: 2 * time.Second, FailureThreshold: 1}))
	st, _ := m.CheckState("db")
	if st.Status != health.Pass || st.Runs != 1 || len(st.History) != 1 || st.Period != 2*time.Second || st.FailureThreshold != 1 {
		t.Fatalf("after Update: %+v, want pass with its run and history kept, the new period and threshold", st)
	}
	if !m.Passing(health.Ready) {
		t.Fatal("ready fails across an Update")
	}
	advance(t, clk, 1, 2*time.Second) // the new period after the last run, not the old one
	if st := waitRuns(t, m, "db", 2); again.runs.Load() != 1 || chk.runs.Load() != 1 {
		t.Fatalf("runs: old %d, new %d (%+v), want the new checker's at the new period", chk.runs.Load(), again.runs.Load(), st)
	}
	if evs := m.Events(cursor); len(evs) != 0 {
		t.Fatalf("Update emitted %+v, want nothing", evs)
	}
	again.fail("down")
	advance(t, clk, 1, 2*time.Second)
	if st := waitRuns(t, m, "db", 3); st.Status != health.Fail {
		t.Fatalf("after one failure with threshold 1: %+v", st)
	}
}

func TestReplaceAndUpdateRefuseWhatTheyCannotDo(t *testing.T) {
	m, _ := fakeMonitor(t)
	must(t, m.Add(health.Check{Name: "boot", Level: health.Startup, Checker: passing()}))
	must(t, m.Add(health.Check{Name: "db", Level: health.Ready, Checker: passing()}))
	_, err := m.Heartbeat("loop", time.Minute, health.Live)
	must(t, err)
	start(t, m)
	waitFor(t, "startup", func() bool { return m.Passing(health.Startup) })
	waitRuns(t, m, "db", 1)
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"unknown", m.Replace(health.Check{Name: "nope", Level: health.Ready, Checker: passing()}), health.ErrNoSuchCheck},
		{"a heartbeat", m.Update(health.Check{Name: "loop", Level: health.Live, Checker: passing()}), health.ErrInvalidCheck},
		{"another level", m.Update(health.Check{Name: "db", Level: health.Live, Checker: passing()}), health.ErrInvalidCheck},
		{"a latched startup check", m.Replace(health.Check{Name: "boot", Level: health.Startup, Checker: passing()}), health.ErrStartupLatched},
		{"no checker", m.Update(health.Check{Name: "db", Level: health.Ready}), health.ErrInvalidCheck},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	if st, _ := m.CheckState("db"); st.Level != health.Ready || st.Status != health.Pass {
		t.Fatalf("db after refusals: %+v, want it as it was", st)
	}
}

// A running Monitor's checks are changed, replaced, removed and added from
// several goroutines at once, while readers follow its events and its
// endpoints answer: nothing races, every answer is a whole one, and the
// Monitor judges what it holds at the end.
func TestChecksChangeFromManyGoroutinesWhileReadersRead(t *testing.T) {
	m := health.New(health.WithLogger(slog.New(slog.DiscardHandler)), health.WithJitter(0))
	const n = 8
	for i := range n {
		must(t, m.Add(health.Check{Name: fmt.Sprint("c", i), Level: health.Ready, Checker: passing(), Period: 10 * time.Millisecond}))
	}
	start(t, m)
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	ctx, stop := context.WithCancel(context.Background())
	var readers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			f := m.Follow(0)
			for ctx.Err() == nil {
				if _, _, err := f.Next(ctx); err != nil && ctx.Err() == nil {
					t.Errorf("follow: %v", err)
				}
			}
		})
		readers.Go(func() {
			for ctx.Err() == nil {
				res, err := http.Get(srv.URL + "/readyz?verbose")
				if err != nil {
					t.Errorf("readyz: %v", err)
					return
				}
				res.Body.Close()
				if res.StatusCode != 200 && res.StatusCode != 503 {
					t.Errorf("readyz answered %d", res.StatusCode)
				}
			}
		})
	}
	var writers sync.WaitGroup
	for w := range 4 {
		writers.Go(func() {
			for i := range 400 {
				name := fmt.Sprint("c", (w+i)%n)
				chk := health.Check{Name: name, Level: health.Ready, Checker: passing(), Period: time.Duration(10+i%5) * time.Millisecond}
				switch i % 4 {
				case 0:
					m.Update(chk) // may find it removed meanwhile
				case 1:
					m.Replace(chk)
				case 2:
					if m.Remove(name) == nil {
						must(t, m.Add(chk))
					}
				case 3:
					m.CheckState(name)
					m.Snapshot()
				}
			}
		})
	}
	writers.Wait()
	// Put every check back, if a writer's Remove left it out for good.
	for i := range n {
		m.Add(health.Check{Name: fmt.Sprint("c", i), Level: health.Ready, Checker: passing(), Period: 10 * time.Millisecond})
	}
	waitFor(t, "every check to pass", func() bool { return m.Passing(health.Ready) })
	stop()
	readers.Wait()
	if got := len(m.Snapshot().Checks); got != n {
		t.Fatalf("%d checks at the end, want %d", got, n)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// An Update of a check waiting to be stable keeps its wait: it passes the
// moment it has been stable for StableFor, not at its next run.
func TestUpdateKeepsAStableWaitToItsMoment(t *testing.T) {
	m, clk := fakeMonitor(t)
	must(t, m.Add(health.Check{Name: "db", Level: health.Ready, Checker: passing(), Period: 10 * time.Second, StableFor: 3 * time.Second}))
	start(t, m)
	if st := waitRuns(t, m, "db", 1); st.Status != health.Pending {
		t.Fatalf("after its first run: %+v, want pending, waiting to be stable", st)
	}
	must(t, m.Update(health.Check{Name: "db", Level: health.Ready, Checker: passing(), Period: 20 * time.Second, StableFor: 3 * time.Second}))
	advance(t, clk, 1, 3*time.Second)
	waitFor(t, "db to pass at its stable moment", func() bool {
		st, _ := m.CheckState("db")
		return st.Status == health.Pass
	})
	if st, _ := m.CheckState("db"); st.Runs != 1 {
		t.Fatalf("db passed after %d runs, want its first: the wait's end, not a run", st.Runs)
	}
}

// A checker reads its run's timeout from its context, exactly, in a
// Monitor's runs and in Run's.
func TestACheckerReadsItsRunsTimeout(t *testing.T) {
	seen := make(chan time.Duration, 4)
	chk := health.CheckerFunc(func(ctx context.Context) error {
		d, ok := health.RunTimeout(ctx)
		if !ok {
			d = -1
		}
		seen <- d
		return nil
	})
	if health.Run(context.Background(), chk, 200*time.Millisecond); <-seen != 200*time.Millisecond {
		t.Fatal("Run's checker did not read its timeout")
	}
	m, _ := fakeMonitor(t)
	must(t, m.Add(health.Check{Name: "db", Level: health.Ready, Checker: chk, Timeout: 750 * time.Millisecond}))
	start(t, m)
	if d := <-seen; d != 750*time.Millisecond {
		t.Fatalf("a Monitor's checker read %v, want its 750ms", d)
	}
	if _, ok := health.RunTimeout(context.Background()); ok {
		t.Fatal("a context of no run has a timeout")
	}
}

// SetDetails and SetServiceInfo change a running Monitor's answers from the
// next one on, as WithDetails and WithServiceInfo would have at New: a
// reloaded configuration's.
func TestSetDetailsAndServiceInfoChangeTheNextAnswer(t *testing.T) {
	m, _ := fakeMonitor(t)
	must(t, m.Add(health.Check{Name: "db", Level: health.Ready, Checker: failing("db down"), Period: time.Second, FailureThreshold: 1}))
	start(t, m)
	waitRuns(t, m, "db", 1)
	get := func(url string) string {
		t.Helper()
		w := httptest.NewRecorder()
		m.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, url, nil))
		return w.Body.String()
	}
	if body := get("/readyz?verbose"); !strings.Contains(body, "db down") {
		t.Fatalf("before: %q, want the reason", body)
	}
	m.SetDetails(false)
	if body := get("/readyz?verbose"); strings.Contains(body, "db down") || !strings.Contains(body, "reason withheld") {
		t.Fatalf("after SetDetails(false): %q, want the reason withheld", body)
	}
	if err := m.Checker(health.Ready)(nil); err == nil || strings.Contains(err.Error(), "db down") {
		t.Fatalf("Checker after SetDetails(false): %v, want the reason withheld", err)
	}
	m.SetDetails(true)
	m.SetServiceInfo(health.ServiceInfo{ServiceID: "checkout"})
	if body := get("/readyz?format=json"); !strings.Contains(body, `"serviceId":"checkout"`) || !strings.Contains(body, "db down") {
		t.Fatalf("after SetServiceInfo: %q, want the serviceId and the reason", body)
	}
}
