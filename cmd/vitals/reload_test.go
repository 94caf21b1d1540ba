package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/health"
)

// reloadFile is the file of these tests, its checks given: the probe and
// API addresses of a.
func (a *agent) rewrite(t *testing.T, checks string) {
	t.Helper()
	if err := os.WriteFile(a.file, []byte(fmt.Sprintf("listen: %s\napi: %s\n%s", a.addr, a.sock, checks)), 0o600); err != nil {
		t.Fatal(err)
	}
}

// checksNow is the agent's checks by name, as GET /v1/checks lists them.
func checksNow(t *testing.T, c *client.Client) map[string]client.Check {
	t.Helper()
	list, err := c.Checks(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]client.Check{}
	for _, ch := range list {
		out[ch.Name] = ch
	}
	return out
}

// vitals reload applies what changed of the checks as a difference: the
// unchanged check runs on (its count and history continue, across 20
// reloads), a retimed one keeps its status and takes its new period, a
// removed one is gone, an added one appears; the workload is the same
// process. A file that does not load is refused with its position, exit 2,
// and nothing changes: /readyz answers as before, and a config-rejected
// event says why.
func TestReloadAppliesWhatChangedAndKeepsTheRest(t *testing.T) {
	file := os.Args[0] // a file that is there
	checks := func(bPeriod string, tail string) string {
		return fmt.Sprintf(`checks:
  a: {file: {path: %s}, period: 50ms}
  b: {file: {path: %s}, period: %s}
%s`, file, file, bPeriod, tail)
	}
	a := startAgent(t, func(*agent) string { return checks("100ms", fmt.Sprintf("  c: {file: {path: %s}, period: 50ms}\n", file)) }, "sleep")
	pid := pidIn(t, a.ready)
	c, err := client.New(a.sock, "")
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a to run a few times", a.logs, func() bool { return checksNow(t, c)["a"].Runs >= 3 })
	before := checksNow(t, c)

	a.rewrite(t, checks("200ms", fmt.Sprintf("  d: {file: {path: %s}, period: 50ms}\n", file)))
	r := a.vitals(t, "reload")
	r.expect(t, 0, "reloaded: added d; retimed b; removed c\n", "")
	after := checksNow(t, c)
	if _, ok := after["c"]; ok {
		t.Errorf("c is still there after it was removed: %+v", after["c"])
	}
	if d, ok := after["d"]; !ok || d.Level != health.Ready {
		t.Errorf("d after it was added: %+v %v", d, ok)
	}
	if b := after["b"]; time.Duration(b.Period) != 200*time.Millisecond || b.Status != health.Pass || b.Runs < before["b"].Runs {
		t.Errorf("b after its period changed: %+v, want 200ms, still passing, its runs counted on from %d", b, before["b"].Runs)
	}
	if got := after["a"].Runs; got < before["a"].Runs {
		t.Errorf("a's runs went from %d to %d: it started over", before["a"].Runs, got)
	}

	// 20 reloads, b's period back and forth: a runs on through them all.
	for i := range 20 {
		a.rewrite(t, checks([]string{"100ms", "200ms"}[i%2], fmt.Sprintf("  d: {file: {path: %s}, period: 50ms}\n", file)))
		if _, err := c.Reload(context.Background()); err != nil {
			t.Fatalf("reload %d: %v", i, err)
		}
	}
	runs := checksNow(t, c)["a"].Runs
	waitFor(t, "a to run on after the reloads", a.logs, func() bool { return checksNow(t, c)["a"].Runs > runs })
	if runs < after["a"].Runs {
		t.Errorf("a's runs went from %d to %d over 20 reloads", after["a"].Runs, runs)
	}
	if got := pidIn(t, a.ready); got != pid {
		t.Errorf("the workload is %d after the reloads, was %d", got, pid)
	}

	// A file that does not load: refused with its position, nothing changed.
	a.rewrite(t, checks("100ms", "  e: {http: {url: 5}}\n"))
	ready := readyz(a.addr)
	r = a.vitals(t, "reload")
	if r.code != 2 || !strings.Contains(r.stderr, a.file+":6:13: checks.e.http: URL \"5\"") {
		t.Fatalf("a bad file: exit %d, %q; want 2 and the error at its position", r.code, r.stderr)
	}
	if now := checksNow(t, c); len(now) != 3 || time.Duration(now["b"].Period) != 200*time.Millisecond {
		t.Errorf("checks after a refused reload: %v, want a, b (200ms) and d as they were", now)
	}
	if got := readyz(a.addr); got != ready {
		t.Errorf("/readyz %d after a refused reload, %d before", got, ready)
	}
	evs := a.events(t, 0)
	var reloaded, rejected int
	for _, e := range evs {
		switch e.Type {
		case health.EventConfigReloaded:
			reloaded++
		case health.EventConfigRejected:
			rejected++
			if !strings.Contains(e.Output, "checks.e.http: URL") || e.Reason != "vitals reload" {
				t.Errorf("config-rejected: %+v", e)
			}
		}
	}
	if reloaded != 21 || rejected != 1 {
		t.Errorf("%d config-reloaded and %d config-rejected events, want 21 and 1", reloaded, rejected)
	}
	// A change a reload does not apply: refused, saying so.
	a.rewrite(t, "drain: 3s\n"+checks("200ms", fmt.Sprintf("  d: {file: {path: %s}, period: 50ms}\n", file)))
	_, err = c.Reload(context.Background())
	var e *client.Error
	if !errors.As(err, &e) || e.Status != 400 || !strings.Contains(e.Message, "drain: changed: a reload applies a change of checks: only") {
		t.Fatalf("a changed drain: %v", err)
	}
}

// SIGHUP reloads the file, and still reaches the workload: one that exits
// 42 on SIGHUP does, and the event log has both.
func TestSIGHUPReloadsTheFileAndReachesTheWorkload(t *testing.T) {
	file := os.Args[0]
	// Restarted when it exits, so that vitals runs on after the signal.
	const service = "service: {restart: always, backoff: {initial: 10ms}}\n"
	a := startAgent(t, func(*agent) string {
		return fmt.Sprintf(service+"checks:\n  a: {file: {path: %s}, period: 50ms}\n", file)
	}, "hup")
	pidIn(t, a.ready)
	a.rewrite(t, fmt.Sprintf(service+"checks:\n  a: {file: {path: %s}, period: 50ms}\n  b: {file: {path: %s}}\n", file, file))
	if err := a.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	evs := a.waitEvent(t, "the workload's exit", func(e health.Event) bool { return e.Type == health.EventServiceExited })
	if code := evs[len(evs)-1].ExitCode; code == nil || *code != 42 {
		t.Fatalf("the workload exited with %v, want 42: the code of its SIGHUP", code)
	}
	a.waitEvent(t, "config-reloaded", func(e health.Event) bool {
		return e.Type == health.EventConfigReloaded && e.Output == "added b" && e.Reason == "SIGHUP"
	})
}
