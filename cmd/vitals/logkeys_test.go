package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/internal/logkeys"
)

// vitals run --log-format json --log-level debug, through a workload that
// serves, breaks and is restarted by its live check (a startup check waits
// for it to listen), a ready check that
// fails, a hook whose receiver is down, and a stop: every line vitals writes
// is a JSON object that gives each key once (a collector keeps one value per
// key), with slog's time, level and msg first and component=vitals, the
// check's level under check_level; the workload's output passes through on
// stdout as it was.
func TestEveryJSONLineVitalsRunLogsGivesEachKeyOnce(t *testing.T) {
	workloadAddr := freeAddr(t)
	a := startAgentWith(t, []string{"--log-format", "json", "--log-level", "debug"}, func(a *agent) string {
		return fmt.Sprintf(`service: {backoff: {initial: 100ms, max: 100ms}, stop-timeout: 10s}
hooks:
  - on: [check-failed]
    webhook: {url: "http://%s/", timeout: 1s, retries: 1, backoff: {initial: 50ms, max: 50ms}}
checks:
  started:
    level: startup
    tcp: {address: %q}
    period: 100ms
    failure-threshold: 100
  ui:
    level: live
    http: {url: "http://%s/"}
    period: 100ms
    failure-threshold: 1
    on-failure: restart
  peer:
    file: {path: %s}
    period: 100ms
    failure-threshold: 1
`, closedPort(t), workloadAddr, workloadAddr, filepath.Join(a.dir, "peer1.conf"))
	}, "serve", workloadAddr)
	first := pidIn(t, a.ready)
	a.waitEvent(t, "ui passed", func(e health.Event) bool { return e.Type == health.EventCheckPassed && e.Check == "ui" })
	a.breakWorkload(t, first)
	a.waitEvent(t, "the restart", func(e health.Event) bool { return e.Type == health.EventServiceStarted && e.Restarts == 1 })
	waitFor(t, "the restarted workload's ui to pass and the hook to give up", a.logs, func() bool {
		logs := a.logs.String()
		return strings.Count(logs, `"msg":"check passed","component":"vitals","check":"ui"`) >= 2 &&
			strings.Contains(logs, `"msg":"hook: event not delivered"`)
	})
	a.cmd.Process.Signal(syscall.SIGTERM)
	if code := exited(t, a.cmd); code != 0 {
		t.Fatalf("exit %d; logs:\n%s", code, a.logs)
	}

	var said []string
	for line := range strings.Lines(a.logs.String()) {
		keys, err := logkeys.Keys([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(keys[:4], []string{"time", "level", "msg", "component"}) || slices.Contains(keys[4:], "source") ||
			!strings.Contains(line, `"component":"vitals"`) {
			t.Errorf("keys %q: want time, level, msg and component=vitals first, then none of slog's own: %s", keys, line)
		}
		msg := line[strings.Index(line, `"msg":"`)+len(`"msg":"`):]
		said = append(said, msg[:strings.Index(msg, `"`)])
		if (strings.HasPrefix(msg, `check passed"`) || strings.HasPrefix(msg, `check failed"`) || strings.HasPrefix(msg, `level `)) &&
			!slices.Contains(keys, "check_level") {
			t.Errorf("no check_level: %s", line)
		}
	}
	for _, want := range []string{"vitals running", "workload started", "check passed", "check failed", "level passed",
		"level failed", "on-failure: restart: restarting the service", "workload exited", "restarting the workload",
		"hook: attempt failed, trying again", "hook: event not delivered", "stopping: readiness fails from now on", "stopped"} {
		if !slices.Contains(said, want) {
			t.Errorf("no line %q among:\n%s", want, a.logs)
		}
	}
	for _, want := range []string{`"level":"WARN","msg":"check failed","component":"vitals","check":"peer","check_level":"ready"`,
		`"level":"WARN","msg":"check failed","component":"vitals","check":"ui","check_level":"live"`} {
		if !strings.Contains(a.logs.String(), want) {
			t.Errorf("no line with %s among:\n%s", want, a.logs)
		}
	}
	if want := "Listening on " + workloadAddr + "\n"; a.stdout.String() != want+want {
		t.Errorf("stdout %q: want the two runs' lines as they wrote them, and nothing of vitals's", a.stdout)
	}
}
