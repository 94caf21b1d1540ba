package health_test

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/internal/logkeys"
)

// Every line a Monitor logs, through everything it logs about (checks that
// pass, fail, flap, time out and panic, a heartbeat, a watchdog, a second
// Start, pause, reset, the pause and reset of one service's checks, drain
// and the stop), gives each key once, and never one of slog's own: a
// collector keeps one value per key, so a check's level given as "level"
// would have replaced the line's severity.
func TestEveryJSONLineTheMonitorLogsGivesEachKeyOnce(t *testing.T) {
	var out bytes.Buffer // written by the Monitor's own LogQueue; read once Done says it is flushed
	m, clk := fakeMonitor(t, health.WithLogger(slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	flaky := passing()
	entered := make(chan struct{}, 1)
	slow := health.CheckerFunc(func(ctx context.Context) error {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-ctx.Done()
		return ctx.Err()
	})
	boom := health.CheckerFunc(func(context.Context) error { panic("nil map write") })
	for _, c := range []health.Check{
		{Name: "boot", Level: health.Startup, Checker: passing()},
		{Name: "db", Level: health.Ready, Checker: passing()},
		{Name: "cache", Level: health.Ready, Checker: failing("dial tcp 127.0.0.1:6379: connection refused"), FailureThreshold: 1},
		{Name: "flaky", Level: health.Ready, Checker: flaky, FailureThreshold: 1},
		{Name: "slow", Level: health.Ready, Checker: slow, Timeout: time.Second, FailureThreshold: 1},
		{Name: "boom", Level: health.Live, Checker: boom, FailureThreshold: 1},
	} {
		c.Period = time.Hour // the test runs them; no period passes unasked
		if err := m.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	hb, err := m.Heartbeat("loop", 3*time.Second, health.Live)
	if err != nil {
		t.Fatal(err)
	}
	wd, err := m.Watchdog("reconcile", 30*time.Second, health.Live)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m.Start(ctx)
	m.Start(ctx) // said, and ignored
	waitFor(t, "startup to pass", func() bool { return m.Passing(health.Startup) })
	waitRuns(t, m, "cache", 1) // before Pause, which would drop a run under way
	hb.Beat()
	<-entered
	clk.Advance(time.Second) // slow times out
	waitRuns(t, m, "slow", 1)
	for range 2 {
		flaky.fail("HTTP 503")
		m.RunNow(ctx, "flaky")
		flaky.pass()
		m.RunNow(ctx, "flaky")
	}
	unit := wd.Begin()
	clk.Advance(30 * time.Second) // the unit overruns, the heartbeat misses its ttl
	waitFor(t, "the watchdog and the heartbeat to fail", func() bool {
		r, _ := m.CheckState("reconcile")
		h, _ := m.CheckState("loop")
		return r.Status == health.Fail && h.Status == health.Fail
	})
	unit()
	hb.Beat()
	waitFor(t, "the watchdog and the heartbeat to pass again", func() bool {
		r, _ := m.CheckState("reconcile")
		h, _ := m.CheckState("loop")
		return r.Status == health.Pass && h.Status == health.Pass
	})
	m.Pause("maintenance")
	m.Reset("the workload restarted")
	m.PauseChecks("api", "api exited", []string{"db"})
	m.ResetChecks("api", "api started", []string{"db"})
	waitFor(t, "startup to pass again", func() bool { return m.Passing(health.Startup) })
	m.Drain()
	cancel()
	select {
	case <-m.Done():
	case <-time.After(settle):
		t.Fatalf("the monitor did not stop within %v", settle)
	}

	var said []string
	for line := range strings.Lines(out.String()) {
		keys, err := logkeys.Keys([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(keys[:3], []string{"time", "level", "msg"}) || slices.Contains(keys[3:], "source") {
			t.Errorf("keys %q: want time, level and msg first, then none of slog's own: %s", keys, line)
		}
		msg := line[strings.Index(line, `"msg":`):]
		if strings.HasPrefix(msg, `"msg":"check passed"`) || strings.HasPrefix(msg, `"msg":"check failed"`) ||
			strings.HasPrefix(msg, `"msg":"level `) {
			if !slices.Contains(keys, "check_level") {
				t.Errorf("no check_level: %s", line)
			}
		}
		said = append(said, msg[:strings.IndexAny(msg[len(`"msg":"`):], `"`)+len(`"msg":"`)])
	}
	for _, want := range []string{"health monitor started twice; the second start is ignored",
		"check passed", "check failed", "check panicked", "level passed", "level failed",
		"checks paused", "checks start over"} {
		if !slices.Contains(said, `"msg":"`+want) {
			t.Errorf("no line %q among:\n%s", want, out.String())
		}
	}
	for _, want := range []string{`"output":"timed out after 1s"`, `"output":"no beat for`, `units of work have run longer than 30s`,
		`"output":"HTTP 503"`, `"level":"WARN","msg":"check failed","check":"cache","check_level":"ready"`,
		`"level":"WARN","msg":"level failed","check_level":"live"`,
		`"level":"INFO","msg":"level passed","check_level":"startup"`,
		`"msg":"checks paused","reason":"api exited","service":"api","checks":["db"]`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no line with %s among:\n%s", want, out.String())
		}
	}
}
