package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/supervise/workloadtest"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
	"github.com/vitals-dev/vitals/health"
)

// agent is a vitals run under test, its workload this test binary.
type agent struct {
	cmd    *exec.Cmd
	logs   *vitalstest.Buffer // vitals's standard error: its logs, and the workload's
	stdout *vitalstest.Buffer // vitals's standard output: the workload's
	addr   string             // the probe endpoints
	sock   string             // the management API
	ready  string             // the workload's ready file
	dir    string
	file   string // the configuration file: config may choose it
}

// startAgent runs vitals with the file that config makes from the agent's
// addresses (listen, api and the workload's ready file are filled in), and
// the workload doing what.
func startAgent(t *testing.T, config func(a *agent) string, what ...string) *agent {
	t.Helper()
	return startAgentWith(t, nil, config, what...)
}

// startAgentWith is startAgent with flags for vitals run (--log-format …).
func startAgentWith(t *testing.T, flags []string, config func(a *agent) string, what ...string) *agent {
	t.Helper()
	a := &agent{addr: freeAddr(t), dir: t.TempDir(), logs: &vitalstest.Buffer{}, stdout: &vitalstest.Buffer{}}
	a.sock, a.ready = filepath.Join(a.dir, "vitals.sock"), filepath.Join(a.dir, "ready")
	text := fmt.Sprintf("listen: %s\napi: %s\n%s", a.addr, a.sock, config(a))
	path := a.file // where config put the file, if it chose
	if path == "" {
		path = writeConfig(t, text)
	} else if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	a.file = path
	args := append(append(append([]string{"run"}, flags...), "-c", path, "--", os.Args[0], what[0], a.ready), what[1:]...)
	a.cmd = exec.Command(vitals, args...)
	a.cmd.Env = append(os.Environ(), workloadtest.Env+"=1")
	a.cmd.Stderr, a.cmd.Stdout = a.logs, a.stdout
	a.cmd.WaitDelay = 2 * time.Second // a workload left behind by a failed test holds the output open
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.cmd.Process.Kill(); a.cmd.Wait(); killWorkload(a.ready) })
	return a
}

// events returns the agent's events after id after.
func (a *agent) events(t *testing.T, after uint64) []health.Event {
	t.Helper()
	c := http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", a.sock)
	}}}
	res, err := c.Get(fmt.Sprintf("http://vitals/v1/events?after=%d", after))
	if err != nil {
		t.Fatalf("events: %v; logs:\n%s", err, a.logs)
	}
	defer res.Body.Close()
	var evs []health.Event
	if err := json.NewDecoder(res.Body).Decode(&evs); err != nil {
		t.Fatal(err)
	}
	return evs
}

// waitEvent waits (a guard only) for an event that match accepts, and
// returns the events up to it.
func (a *agent) waitEvent(t *testing.T, what string, match func(health.Event) bool) []health.Event {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		evs := a.events(t, 0)
		for i, e := range evs {
			if match(e) {
				return evs[:i+1]
			}
		}
	}
	t.Fatalf("no event %s within 30s; events:\n%s\nlogs:\n%s", what, eventLines(a.events(t, 0)), a.logs)
	return nil
}

func eventLines(evs []health.Event) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "%d %s check=%s level=%v to=%v pid=%d restarts=%d reason=%q output=%q\n",
			e.ID, e.Type, e.Check, e.Level, e.To, e.PID, e.Restarts, e.Reason, e.Output)
	}
	return b.String()
}

// restartsFor counts the service-exited events that give reason.
func restartsFor(evs []health.Event, reason string) int {
	n := 0
	for _, e := range evs {
		if e.Type == health.EventServiceExited && e.Reason == reason {
			n++
		}
	}
	return n
}

// breakWorkload makes the serving workload with pid answer 503.
func (a *agent) breakWorkload(t *testing.T, pid int) {
	t.Helper()
	if err := os.WriteFile(a.ready+".503", []byte(fmt.Sprint(pid)), 0o600); err != nil {
		t.Fatal(err)
	}
}

// The Kubeflow story: the workload answers 503 while it runs; its live check
// fails and restarts it, once per pass→fail transition, and the checks of the
// new instance start over, startup first.
func TestAFailingCheckRestartsTheWorkloadOncePerTransition(t *testing.T) {
	workloadAddr := freeAddr(t)
	a := startAgent(t, func(a *agent) string {
		return fmt.Sprintf(`service: {backoff: {initial: 100ms, max: 100ms}, stop-timeout: 10s}
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
    failure-threshold: 2
    on-failure: restart
`, workloadAddr, workloadAddr)
	}, "serve", workloadAddr)
	first := pidIn(t, a.ready)
	a.waitEvent(t, "ui passed", func(e health.Event) bool { return e.Type == health.EventCheckPassed && e.Check == "ui" })
	os.Remove(a.ready)
	a.breakWorkload(t, first)

	started := a.waitEvent(t, "the restart", func(e health.Event) bool {
		return e.Type == health.EventServiceStarted && e.Restarts == 1
	})
	evs := a.waitEvent(t, "the restarted workload's ui passed", func(e health.Event) bool {
		return e.Type == health.EventCheckPassed && e.Check == "ui" && e.ID > started[len(started)-1].ID
	})
	second := pidIn(t, a.ready)
	if second == first {
		t.Fatal("the same workload runs after the restart")
	}
	// In order: ui fails, the workload exits for it, the checks start over,
	// it starts again, startup passes before ui runs again.
	var order []string
	for _, e := range evs {
		switch {
		case e.Type == health.EventCheckFailed && e.Check == "ui":
			order = append(order, "ui failed")
		case e.Type == health.EventServiceExited:
			order = append(order, "exited: "+e.Reason)
		case e.Type == health.EventChecksReset:
			order = append(order, "reset")
		case e.Type == health.EventServiceStarted:
			order = append(order, fmt.Sprintf("started %d", e.Restarts))
		case e.Type == health.EventCheckPassed && e.Check == "started":
			order = append(order, "started passed")
		case e.Type == health.EventCheckPassed && e.Check == "ui":
			order = append(order, "ui passed")
		}
	}
	want := []string{"started 0", "started passed", "ui passed", "ui failed", "exited: check ui failed", "reset", "reset",
		"started 1", "started passed", "ui passed"}
	if strings.Join(order, ", ") != strings.Join(want, ", ") {
		t.Fatalf("events in order:\n  %s\nwant:\n  %s\nall:\n%s", strings.Join(order, ", "), strings.Join(want, ", "), eventLines(evs))
	}
	// The new instance serves: no second restart while nothing fails.
	time.Sleep(time.Second)
	if n := restartsFor(a.events(t, 0), "check ui failed"); n != 1 {
		t.Fatalf("%d restarts for ui; want 1 for 1 transition:\n%s", n, eventLines(a.events(t, 0)))
	}
	// A second transition, a second restart.
	os.Remove(a.ready)
	a.breakWorkload(t, second)
	a.waitEvent(t, "the second restart", func(e health.Event) bool {
		return e.Type == health.EventServiceStarted && e.Restarts == 2
	})
	if n := restartsFor(a.events(t, 0), "check ui failed"); n != 2 {
		t.Fatalf("%d restarts for ui after 2 transitions:\n%s", n, eventLines(a.events(t, 0)))
	}
}

func TestRestartByHandStartsANewWorkloadAtOnce(t *testing.T) {
	workloadAddr := freeAddr(t)
	a := startAgent(t, func(a *agent) string {
		return fmt.Sprintf("service: {backoff: {initial: 1h, max: 1h}, stop-timeout: 10s}\nchecks:\n  ui: {http: {url: \"http://%s/\"}, period: 100ms}\n", workloadAddr)
	}, "serve", workloadAddr)
	first := pidIn(t, a.ready)
	os.Remove(a.ready)
	r := vitalsRun(t, "restart", "--api", a.sock)
	second := pidIn(t, a.ready) // not after the hour of backoff
	r.expect(t, 0, fmt.Sprintf("pid %d (restart 1)", second), "")
	if second == first {
		t.Fatal("the same workload runs after the restart")
	}
	if n := restartsFor(a.events(t, 0), "restart requested"); n != 1 {
		t.Fatalf("%d exits for a restart by hand:\n%s", n, eventLines(a.events(t, 0)))
	}
	// An agent with no workload has nothing to restart.
	dir := t.TempDir()
	sock := filepath.Join(dir, "vitals.sock")
	path := writeConfig(t, fmt.Sprintf("listen: %s\napi: %s\nchecks:\n  a: {heartbeat: {ttl: 1h}}\n", freeAddr(t), sock))
	bare := exec.Command(vitals, "run", "-c", path)
	if err := bare.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bare.Process.Kill(); bare.Wait() })
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no API socket within 20s")
		}
	}
	vitalsRun(t, "restart", "--api", sock).expect(t, 2, "", "no service: this agent runs no workload")
}

func TestOnFailureExitStopsTheWorkloadAndExits1(t *testing.T) {
	workloadAddr := freeAddr(t)
	a := startAgent(t, func(a *agent) string {
		// Startup first: the live check does not run before the workload listens.
		return fmt.Sprintf(`service: {stop-timeout: 10s}
checks:
  started: {level: startup, tcp: {address: %q}, period: 100ms, failure-threshold: 100}
  ui: {level: live, http: {url: "http://%s/"}, period: 100ms, failure-threshold: 1, on-failure: exit}
`, workloadAddr, workloadAddr)
	}, "serve", workloadAddr)
	pid := pidIn(t, a.ready)
	a.waitEvent(t, "ui passed", func(e health.Event) bool { return e.Type == health.EventCheckPassed && e.Check == "ui" })
	a.breakWorkload(t, pid)
	if code := exited(t, a.cmd); code != 1 {
		t.Fatalf("exit %d, want 1; logs:\n%s", code, a.logs)
	}
	for _, want := range []string{"on-failure: exit: stopping", `why="check ui failed"`, `reason="check ui failed"`} {
		if !strings.Contains(a.logs.String(), want) {
			t.Errorf("logs lack %q:\n%s", want, a.logs)
		}
	}
}

func TestARestartWithoutAWorkloadIsAConfigurationError(t *testing.T) {
	path := writeConfig(t, "checks:\n  ui: {http: {url: \"http://localhost:1/\"}, on-failure: restart}\n")
	vitalsRun(t, "run", "-c", path).expect(t, 2, "", path+": checks.ui.on-failure: restart needs a workload to restart")
}

// The workload floods 50 MB onto stdout and stderr; vitals passes it on to
// one file, as a container runtime gets it, line by line: every line whole,
// none lost, each stream in order, and the log checks still see the last one.
func TestAFloodOf50MBPassesThroughWholeAndLogChecksStillMatch(t *testing.T) {
	const mb = 50
	out, err := os.CreateTemp(t.TempDir(), "output")
	if err != nil {
		t.Fatal(err)
	}
	a := &agent{addr: freeAddr(t), dir: t.TempDir(), logs: &vitalstest.Buffer{}, stdout: &vitalstest.Buffer{}}
	a.sock, a.ready = filepath.Join(a.dir, "vitals.sock"), filepath.Join(a.dir, "ready")
	path := writeConfig(t, fmt.Sprintf(`listen: %s
api: %s
service: {stop-timeout: 10s}
checks:
  done:
    level: startup
    log: {pattern: "^flood done$"}
    period: 100ms
    failure-threshold: 1000
  errors:
    log: {fail-pattern: "stdout line", stream: stderr, window: 1h}
`, a.addr, a.sock))
	a.cmd = exec.Command(vitals, "run", "-c", path, "--", os.Args[0], "flood", a.ready, fmt.Sprint(mb))
	a.cmd.Env = append(os.Environ(), workloadtest.Env+"=1")
	a.cmd.Stdout, a.cmd.Stderr = out, out // one file for both, as 2>&1
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.cmd.Process.Kill(); a.cmd.Wait(); killWorkload(a.ready) })
	pidIn(t, a.ready)
	a.waitEvent(t, "the log check saw the last line", func(e health.Event) bool {
		return e.Type == health.EventCheckPassed && e.Check == "done"
	})
	a.waitEvent(t, "readiness", func(e health.Event) bool {
		return e.Type == health.EventLevelPassed && e.Level == health.Ready
	})
	a.cmd.Process.Signal(syscall.SIGTERM)
	exited(t, a.cmd)

	b, err := os.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	next := [2]int{0, 1} // the next line number on stdout, on stderr
	size, done := 0, false
	for line := range strings.Lines(string(b)) {
		switch {
		case strings.HasPrefix(line, "stdout line ") || strings.HasPrefix(line, "stderr line "):
			i := 0
			if line[:6] == "stderr" {
				i = 1
			}
			if want := workloadtest.FloodLine(next[i]); line != want {
				t.Fatalf("a line of the flood:\n%q\nwant\n%q", line, want)
			}
			next[i] += 2
			size += len(line)
		case line == "flood done\n":
			done = true
		case strings.HasPrefix(line, "time="): // vitals's own log
		default:
			t.Fatalf("a line that is neither the workload's nor vitals's, whole: %.300q", line)
		}
	}
	if size < mb<<20 || !done || next[0] != next[1]+1 && next[0] != next[1]-1 {
		t.Fatalf("%d bytes of flood, lines up to %v, done %v; want %d MB, both streams whole, then done", size, next, done, mb)
	}
}

// Hooks get the events they are on, in order, a webhook again after a 500.
func TestHooksDeliverTheEventsInOrderAndRetryAfterA500(t *testing.T) {
	var mu sync.Mutex
	var got []health.Event
	calls := 0
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 1 {
			http.Error(w, "not now", http.StatusInternalServerError)
			return
		}
		var e health.Event
		if err := json.NewDecoder(r.Body).Decode(&e); err != nil || r.Header.Get("Authorization") != "Bearer s3cret-token" {
			http.Error(w, "bad", http.StatusBadRequest)
			return
		}
		got = append(got, e)
	}))
	t.Cleanup(receiver.Close)
	t.Setenv("HOOK_TOKEN", "s3cret-token")
	workloadAddr := freeAddr(t)
	a := startAgent(t, func(a *agent) string {
		return fmt.Sprintf(`service: {stop-timeout: 10s}
hooks:
  - on: [service-started, check-passed, service-exited]
    webhook: {url: %q, headers: {Authorization: "Bearer ${HOOK_TOKEN}"}, timeout: 2s, backoff: {initial: 50ms, max: 50ms}}
checks:
  ui: {http: {url: "http://%s/"}, period: 100ms}
`, receiver.URL, workloadAddr)
	}, "serve", workloadAddr)
	pidIn(t, a.ready)
	a.waitEvent(t, "ui passed", func(e health.Event) bool { return e.Type == health.EventCheckPassed })
	a.cmd.Process.Signal(syscall.SIGTERM)
	exited(t, a.cmd)
	mu.Lock()
	defer mu.Unlock()
	var types []string
	for i, e := range got {
		types = append(types, string(e.Type))
		if i > 0 && e.ID <= got[i-1].ID {
			t.Fatalf("event %d after %d: out of order", e.ID, got[i-1].ID)
		}
	}
	if strings.Join(types, ",") != "service-started,check-passed,service-exited" || calls != 4 {
		t.Fatalf("delivered %v in %d calls; want started, passed, exited, the first after a 500", types, calls)
	}
	if strings.Contains(a.logs.String(), "s3cret-token") {
		t.Fatalf("the token is in the logs:\n%s", a.logs)
	}
}

// Without a workload, on-failure: exit stops vitals itself, with 1: a
// sidecar whose check fails gets its container restarted.
func TestOnFailureExitWithoutAWorkloadStopsVitals(t *testing.T) {
	dir := t.TempDir()
	path := writeConfig(t, fmt.Sprintf("listen: %s\napi: %s\nchecks:\n  peer:\n    file: {path: %s}\n    period: 100ms\n    failure-threshold: 2\n    on-failure: exit\n",
		freeAddr(t), filepath.Join(dir, "vitals.sock"), filepath.Join(dir, "missing")))
	r := vitalsRun(t, "run", "-c", path)
	r.expect(t, 1, "", `why="check peer failed"`)
}

// A file with a service and no checks is valid: vitals supervises the
// workload and serves the endpoints, and --print writes a file that loads
// again. A file with neither is an error that says what to give.
func TestAServiceWithNoChecksValidatesAndRuns(t *testing.T) {
	for _, text := range []string{"service: {command: [sleep, \"0.5\"]}\n", "service: {command: [sleep, \"0.5\"]}\nchecks: {}\n"} {
		path := writeConfig(t, text)
		vitalsRun(t, "validate", "-c", path).expect(t, 0, "ok: "+path+": 0 checks", "")
		r := vitalsRun(t, "validate", "-c", path, "--print")
		r.expect(t, 0, "checks: {}\n", "")
		vitalsRun(t, "validate", "-c", writeConfig(t, r.stdout)).expect(t, 0, ": 0 checks", "")
	}
	addr := freeAddr(t)
	path := writeConfig(t, fmt.Sprintf("listen: %s\napi: %s\nservice: {command: [sleep, \"0.5\"]}\n", addr, filepath.Join(t.TempDir(), "api.sock")))
	vitalsRun(t, "run", "-c", path).expect(t, 0, "", "checks=0")
	vitalsRun(t, "validate", "-c", writeConfig(t, "listen: :8558\n")).expect(t, 2, "",
		":1:7: checks: no checks: give at least one, or a service: to supervise")
}

// --print shows the hooks, on-failure and log checks with their defaults,
// secrets hidden, in a file that loads again.
func TestValidatePrintShowsHooksOnFailureAndLogChecks(t *testing.T) {
	t.Setenv("HOOK_TOKEN", "s3cret-token")
	t.Setenv("PEBBLE_SOCKET", "")
	t.Setenv("PEBBLE", "/charm/container/pebble")
	path := writeConfig(t, `service: {command: [sleep, "100"]}
hooks:
  - on: [check-failed]
    webhook: {url: "http://operator:pw@localhost:9/hook", headers: {Authorization: "Bearer ${HOOK_TOKEN}"}}
  - on: [service-exited]
    exec: [true]
  - pebble-notice: {}
checks:
  ui: {http: {url: "http://localhost:1/"}, on-failure: restart}
  started: {level: startup, log: {pattern: "Listening on"}}
`)
	r := vitalsRun(t, "validate", "-c", path, "--print")
	for _, want := range []string{"  - name: hook-1\n    on: [check-failed]\n", "url: \"http://operator:xxxxx@localhost:9/hook\"",
		"retries: 3", "exec: {command: [\"true\"], timeout: 10s}", "    on-failure: restart\n", "    log: {pattern: \"Listening on\"}\n",
		"  - name: hook-3\n    on: [check-failed, check-passed, level-failed, level-passed, service-exited, notice]\n" +
			"    pebble-notice:\n      socket: \"/charm/container/pebble/.pebble.socket\"\n      repeat-after: 0s\n      timeout: 5s\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--print lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "s3cret-token") || strings.Contains(r.stdout, ":pw@") {
		t.Fatalf("--print shows a secret:\n%s", r.stdout)
	}
	printed := writeConfig(t, r.stdout)
	vitalsRun(t, "validate", "-c", printed).expect(t, 0, "2 checks", "")
}

// Between a crash and the restart there is no workload to judge: the checks
// are paused, so a live check with on-failure: exit does not stop vitals
// during the backoff (the kubelet does not probe a container that is not
// running).
func TestNoCheckActsWhileTheWorkloadIsDownForItsBackoff(t *testing.T) {
	workloadAddr := freeAddr(t)
	a := startAgent(t, func(a *agent) string {
		return fmt.Sprintf(`service: {restart: on-failure, backoff: {initial: 1500ms, max: 1500ms}}
checks:
  started: {level: startup, tcp: {address: %q}, period: 100ms, failure-threshold: 100}
  ui: {level: live, http: {url: "http://%s/"}, period: 100ms, failure-threshold: 1, on-failure: exit}
`, workloadAddr, workloadAddr)
	}, "serve", workloadAddr)
	pid := pidIn(t, a.ready)
	a.waitEvent(t, "ui passed", func(e health.Event) bool { return e.Type == health.EventCheckPassed && e.Check == "ui" })
	syscall.Kill(pid, syscall.SIGKILL) // a crash
	started := a.waitEvent(t, "the restart", func(e health.Event) bool { return e.Type == health.EventServiceStarted && e.Restarts == 1 })
	evs := a.waitEvent(t, "ui passed on the new instance", func(e health.Event) bool {
		return e.Type == health.EventCheckPassed && e.Check == "ui" && e.ID > started[len(started)-1].ID
	})
	for _, e := range evs {
		if e.Type == health.EventCheckFailed || e.Type == health.EventStopping {
			t.Fatalf("event %s during the backoff:\n%s\nlogs:\n%s", e.Type, eventLines(evs), a.logs)
		}
	}
	if code := readyz(a.addr); code != 200 {
		t.Fatalf("readyz %d after the restart; logs:\n%s", code, a.logs)
	}
}
