package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/metrics"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/health/healthtest"
	"github.com/vitals-dev/vitals/version"
)

// counted is a checker that passes while up, counting its runs.
type counted struct {
	up   atomic.Bool
	runs atomic.Int64
}

func (c *counted) Check(context.Context) error {
	c.runs.Add(1)
	if !c.up.Load() {
		return errors.New("down")
	}
	return nil
}

func newCounted(up bool) *counted {
	c := &counted{}
	c.up.Store(up)
	return c
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// waitRuns waits until a check has recorded n results.
func waitRuns(t *testing.T, m *health.Monitor, name string, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if st, _ := m.CheckState(name); st.Runs >= n {
			return
		}
		if time.Now().After(deadline) {
			st, _ := m.CheckState(name)
			t.Fatalf("%s: %d runs, not %d within 10s", name, st.Runs, n)
		}
	}
}

const header = `# HELP vitals_check_up Whether the check passes (1, pass or warn) or fails (0); absent while it is pending or stopped.
# TYPE vitals_check_up gauge
# HELP vitals_check_status The check's status: 1 for the one it is in (pending, pass, warn, fail), 0 for the others.
# TYPE vitals_check_status gauge
# HELP vitals_level_up Whether the level's probe endpoint (/startupz, /livez, /readyz) answers 200.
# TYPE vitals_level_up gauge
# HELP vitals_check_runs_total Results recorded for the check, by result (pass or fail; undecided for a run that decided nothing yet).
# TYPE vitals_check_runs_total counter
# HELP vitals_check_transitions_total Changes of the check's status, by the status entered (pass, warn, fail).
# TYPE vitals_check_transitions_total counter
`

func status(check, is string) string {
	var b strings.Builder
	for _, s := range []string{"pending", "pass", "warn", "fail"} {
		v := 0
		if s == is {
			v = 1
		}
		fmt.Fprintf(&b, "vitals_check_status{check=%q,status=%q} %d\n", check, s, v)
	}
	return b.String()
}

func TestMetricsAfterAPassAWarningAFailureAndAPassAgain(t *testing.T) {
	clk := healthtest.NewClock(time.Time{})
	c := metrics.New()
	m := health.New(health.WithClock(clk), health.WithJitter(0), health.WithLogger(slog.New(slog.DiscardHandler)),
		health.WithRecorder(c.Record))
	c.Attach(m)
	db := newCounted(true)
	must(t, m.Add(health.Check{Name: "db", Level: health.Ready, Checker: db, FailureThreshold: 2}))
	must(t, m.Add(health.Check{Name: "later", Level: health.Live, Checker: newCounted(true), InitialDelay: time.Hour}))
	must(t, m.Add(health.Check{Name: "spare", Level: health.Live, Checker: newCounted(true)}))
	loop, err := m.Heartbeat("loop", time.Hour, health.Live)
	must(t, err)
	reg := prometheus.NewPedanticRegistry()
	must(t, reg.Register(c))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m.Start(ctx)

	waitRuns(t, m, "db", 1)
	waitRuns(t, m, "spare", 1)
	loop.Beat()
	waitRuns(t, m, "loop", 1)
	must(t, m.StopCheck("spare"))
	if _, err := reg.Gather(); err != nil { // a scrape between the runs
		t.Fatal(err)
	}
	db.up.Store(false)
	for run := 2; run <= 4; run++ {
		if run == 4 {
			db.up.Store(true)
		}
		clk.Advance(10 * time.Second)
		waitRuns(t, m, "db", run)
		waitRuns(t, m, "loop", run) // a heartbeat is judged again every default period
	}

	want := header + `
vitals_check_up{check="db",level="ready"} 1
vitals_check_up{check="loop",level="live"} 1
` + status("db", "pass") + status("later", "pending") + status("spare", "pass") + status("loop", "pass") + `
vitals_level_up{level="startup"} 1
vitals_level_up{level="live"} 1
vitals_level_up{level="ready"} 1
vitals_check_runs_total{check="db",result="pass"} 2
vitals_check_runs_total{check="db",result="fail"} 2
vitals_check_runs_total{check="later",result="pass"} 0
vitals_check_runs_total{check="later",result="fail"} 0
vitals_check_runs_total{check="spare",result="pass"} 1
vitals_check_runs_total{check="spare",result="fail"} 0
vitals_check_runs_total{check="loop",result="pass"} 4
vitals_check_runs_total{check="loop",result="fail"} 0
vitals_check_transitions_total{check="db",to="pass"} 2
vitals_check_transitions_total{check="db",to="warn"} 1
vitals_check_transitions_total{check="db",to="fail"} 1
vitals_check_transitions_total{check="later",to="pass"} 0
vitals_check_transitions_total{check="later",to="warn"} 0
vitals_check_transitions_total{check="later",to="fail"} 0
vitals_check_transitions_total{check="spare",to="pass"} 1
vitals_check_transitions_total{check="spare",to="warn"} 0
vitals_check_transitions_total{check="spare",to="fail"} 0
vitals_check_transitions_total{check="loop",to="pass"} 1
vitals_check_transitions_total{check="loop",to="warn"} 0
vitals_check_transitions_total{check="loop",to="fail"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "vitals_check_up", "vitals_check_status",
		"vitals_level_up", "vitals_check_runs_total", "vitals_check_transitions_total"); err != nil {
		t.Fatal(err)
	}
	// One observation per run; heartbeats run nothing and have no durations.
	if n := testutil.CollectAndCount(c, "vitals_check_duration_seconds"); n != 2 {
		t.Fatalf("%d histograms, want db's and spare's", n)
	}
	families, err := reg.Gather()
	must(t, err)
	for _, f := range families {
		if f.GetName() != "vitals_check_duration_seconds" {
			continue
		}
		for _, h := range f.GetMetric() {
			check, count := h.GetLabel()[0].GetValue(), h.GetHistogram().GetSampleCount()
			if check == "db" && count != 4 || check == "spare" && count != 1 {
				t.Errorf("%s: %d durations", check, count)
			}
		}
	}
}

func TestAFailingCheckIsUpZeroAndFailsItsLevel(t *testing.T) {
	clk := healthtest.NewClock(time.Time{})
	c := metrics.New()
	m := health.New(health.WithClock(clk), health.WithLogger(slog.New(slog.DiscardHandler)), health.WithRecorder(c.Record))
	c.Attach(m)
	must(t, m.Add(health.Check{Name: "db", Level: health.Ready, Checker: newCounted(false), FailureThreshold: 1}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m.Start(ctx)
	waitRuns(t, m, "db", 1)
	want := header + `
vitals_check_up{check="db",level="ready"} 0
vitals_level_up{level="startup"} 1
vitals_level_up{level="live"} 1
vitals_level_up{level="ready"} 0
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want),
		"vitals_check_up", "vitals_level_up"); err != nil {
		t.Fatal(err)
	}
}

// A check that becomes stable between runs passes with no run: its
// transition is counted, and no run or duration.
func TestACheckBecomingStableIsATransitionNotARun(t *testing.T) {
	clk := healthtest.NewClock(time.Time{})
	c := metrics.New()
	m := health.New(health.WithClock(clk), health.WithJitter(0), health.WithLogger(slog.New(slog.DiscardHandler)), health.WithRecorder(c.Record))
	c.Attach(m)
	must(t, m.Add(health.Check{Name: "mq", Level: health.Ready, Checker: newCounted(true), Period: time.Hour, StableFor: 30 * time.Second}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m.Start(ctx)
	waitRuns(t, m, "mq", 1)
	if err := testutil.CollectAndCompare(c, strings.NewReader(header+status("mq", "pending")), "vitals_check_up", "vitals_check_status"); err != nil {
		t.Fatalf("waiting to be stable: %v", err)
	}
	clk.WaitPending(ctx, 1)
	clk.Advance(30 * time.Second)
	want := header + `
vitals_check_up{check="mq",level="ready"} 1
vitals_check_runs_total{check="mq",result="pass"} 1
vitals_check_runs_total{check="mq",result="fail"} 0
vitals_check_transitions_total{check="mq",to="pass"} 1
vitals_check_transitions_total{check="mq",to="warn"} 0
vitals_check_transitions_total{check="mq",to="fail"} 0
`
	// The recorder is told once the state has changed: wait for it.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		err := testutil.CollectAndCompare(c, strings.NewReader(want),
			"vitals_check_up", "vitals_check_runs_total", "vitals_check_transitions_total")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
	reg := prometheus.NewRegistry()
	must(t, reg.Register(c))
	families, err := reg.Gather()
	must(t, err)
	for _, f := range families {
		if f.GetName() == "vitals_check_duration_seconds" {
			if n := f.GetMetric()[0].GetHistogram().GetSampleCount(); n != 1 {
				t.Fatalf("%d durations, want one: the run's", n)
			}
		}
	}
}

func TestScrapingRunsNoCheck(t *testing.T) {
	clk := healthtest.NewClock(time.Time{})
	c := metrics.New()
	m := health.New(health.WithClock(clk), health.WithLogger(slog.New(slog.DiscardHandler)), health.WithRecorder(c.Record))
	c.Attach(m)
	db := newCounted(true)
	must(t, m.Add(health.Check{Name: "db", Level: health.Ready, Checker: db}))
	reg := prometheus.NewRegistry()
	must(t, reg.Register(c))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m.Start(ctx)
	waitRuns(t, m, "db", 1)
	for range 100 {
		if _, err := reg.Gather(); err != nil {
			t.Fatal(err)
		}
	}
	if n := db.runs.Load(); n != 1 {
		t.Fatalf("the checker ran %d times: scrapes ran it", n)
	}
}

// A check that records many more results than it keeps, and runs forced
// with RunNow, are all counted: the counters are fed as results are recorded.
func TestEveryRunIsCountedHoweverManyTheHistoryDropped(t *testing.T) {
	c := metrics.New()
	m := health.New(health.WithJitter(0), health.WithLogger(slog.New(slog.DiscardHandler)), health.WithRecorder(c.Record))
	c.Attach(m)
	must(t, m.Add(health.Check{Name: "fast", Level: health.Live, Period: 10 * time.Millisecond, Checker: newCounted(true)}))
	must(t, m.Add(health.Check{Name: "slow", Level: health.Live, Period: time.Hour, Checker: newCounted(false)}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m.Start(ctx)
	waitRuns(t, m, "slow", 1)
	for range 2 * health.DefaultHistory {
		if _, err := m.RunNow(context.Background(), "slow"); err != nil {
			t.Fatal(err)
		}
	}
	waitRuns(t, m, "fast", 3*health.DefaultHistory)
	cancel()
	<-m.Done()
	fast, _ := m.CheckState("fast")
	slow, _ := m.CheckState("slow")
	want := header + fmt.Sprintf(`
vitals_check_runs_total{check="fast",result="pass"} %d
vitals_check_runs_total{check="fast",result="fail"} 0
vitals_check_runs_total{check="slow",result="pass"} 0
vitals_check_runs_total{check="slow",result="fail"} %d
`, fast.Runs, slow.Runs)
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "vitals_check_runs_total"); err != nil {
		t.Fatal(err)
	}
}

// vitals_build_info says which vitals runs, as a constant 1 with its build as
// labels, and passes the linter as every vitals metric does.
func TestBuildInfoIsOneWithTheBuildAsLabels(t *testing.T) {
	c := metrics.BuildInfo(version.Build{Version: "v1.2.3", Revision: "abc123", GoVersion: "go1.26.5"})
	want := `# HELP vitals_build_info 1, with the version, the revision and the Go version vitals was built with.
# TYPE vitals_build_info gauge
vitals_build_info{goversion="go1.26.5",revision="abc123",version="v1.2.3"} 1
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	if problems, err := testutil.CollectAndLint(c); err != nil || len(problems) > 0 {
		t.Errorf("promlint: %v %v", problems, err)
	}
}

// Notices count by key, up to 32 keys; the notices of later keys count
// under key="_other", so that keys with ids in them cannot grow the scrape
// without end.
func TestNoticesCountByKeyUpToACap(t *testing.T) {
	c := metrics.New()
	m := health.New(health.WithLogger(slog.New(slog.DiscardHandler)), health.WithRecorder(c.Record))
	c.Attach(m)
	notify := func(key string) {
		t.Helper()
		e, err := m.Notify(key, nil)
		must(t, err)
		c.Notice(e)
	}
	notify("example.com/config-reloaded")
	notify("example.com/config-reloaded")
	for i := range 40 {
		notify(fmt.Sprintf("request-%d", i))
	}
	notify("example.com/config-reloaded")
	if got := noticesOf(t, c, "example.com/config-reloaded"); got != 3 {
		t.Errorf("config-reloaded counted %v, want 3", got)
	}
	if got := noticesOf(t, c, "request-30"); got != 1 {
		t.Errorf("request-30, the 32nd key, counted %v, want 1", got)
	}
	if got := noticesOf(t, c, "_other"); got != 9 {
		t.Errorf("_other counted %v, want the 9 notices of the keys past 32", got)
	}
	if n := testutil.CollectAndCount(c, "vitals_notices_total"); n != 33 {
		t.Errorf("%d series of notices, want 32 keys and _other", n)
	}
	if problems, err := testutil.CollectAndLint(c, "vitals_notices_total"); err != nil || len(problems) > 0 {
		t.Errorf("promlint: %v %v", problems, err)
	}
}

// noticesOf is the count of vitals_notices_total with the key, as c
// collects it.
func noticesOf(t *testing.T, c prometheus.Collector, key string) float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	must(t, reg.Register(c))
	families, err := reg.Gather()
	must(t, err)
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if f.GetName() == "vitals_notices_total" && m.GetLabel()[0].GetValue() == key {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// Each service has its up and restarts series, by name.
func TestServicesAreMetricsByName(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.Services(func() []metrics.Service {
		return []metrics.Service{{Name: "api", Running: true, Restarts: 2}, {Name: "worker"}}
	}))
	want := `
# HELP vitals_service_restarts_total Restarts of the supervised service since vitals started (by its policy, its rules, a check, or by hand).
# TYPE vitals_service_restarts_total counter
vitals_service_restarts_total{service="api"} 2
vitals_service_restarts_total{service="worker"} 0
# HELP vitals_service_up 1 while a run of the supervised service runs; 0 between an exit and its restart, and once it is down for good.
# TYPE vitals_service_up gauge
vitals_service_up{service="api"} 1
vitals_service_up{service="worker"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}
