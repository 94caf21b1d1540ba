package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/supervise/workloadtest"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/internal/testenv"
)

// startServices runs vitals run with the file that config makes from the
// agent's addresses (listen and api are filled in), with no command after
// --: the file's services: are the workloads, each this test binary
// (a.workload) or a command of the file's own.
func startServices(t *testing.T, config func(a *agent) string) *agent {
	t.Helper()
	a := startServicesUnder(t, nil, config)
	t.Cleanup(func() {
		// Killed, vitals takes its services with it (their run's
		// PR_SET_PDEATHSIG); what a failed test left goes too.
		a.cmd.Process.Kill()
		a.cmd.Wait()
		ready, _ := filepath.Glob(filepath.Join(a.dir, "*.ready"))
		for _, f := range ready {
			killWorkload(f)
		}
	})
	return a
}

// startServicesUnder is startServices with vitals run by the command wrap
// (unshare …), whose cleanup is the test's: the ready files may then hold
// the pids of another namespace.
func startServicesUnder(t *testing.T, wrap []string, config func(a *agent) string) *agent {
	t.Helper()
	a := &agent{addr: freeAddr(t), dir: vitalstest.ShortDir(t), logs: &vitalstest.Buffer{}, stdout: &vitalstest.Buffer{}}
	a.sock = filepath.Join(a.dir, "vitals.sock")
	path := writeConfig(t, fmt.Sprintf("listen: %s\napi: %s\n%s", a.addr, a.sock, config(a)))
	a.file = path
	args := append(append(wrap[:len(wrap):len(wrap)], vitals), "run", "-c", path)
	a.cmd = exec.Command(args[0], args[1:]...)
	a.cmd.Env = append(os.Environ(), workloadtest.Env+"=1")
	a.cmd.Stderr, a.cmd.Stdout = a.logs, a.stdout
	a.cmd.WaitDelay = 2 * time.Second // a workload left behind by a failed test holds the output open
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return a
}

// workload is the command, as a YAML list, of the service name that is
// this test binary doing what (workloadtest.Run), with a.readyOf(name) as
// its ready file.
func (a *agent) workload(name, what string, args ...string) string {
	argv := append([]string{os.Args[0], what, a.readyOf(name)}, args...)
	for i, arg := range argv {
		argv[i] = strconv.Quote(arg)
	}
	return "[" + strings.Join(argv, ", ") + "]"
}

// readyOf is the ready file of the service name (a.workload).
func (a *agent) readyOf(name string) string { return filepath.Join(a.dir, name+".ready") }

// okFile is a file that a file check passes on while it is there.
func (a *agent) okFile(t *testing.T) string {
	t.Helper()
	ok := filepath.Join(a.dir, "ok")
	if err := os.WriteFile(ok, []byte("ok"), 0o600); err != nil {
		t.Fatal(err)
	}
	return ok
}

// runsOf says, in order, which services started and exited in evs: "a
// started", "c exited".
func runsOf(evs []health.Event) []string {
	var out []string
	for _, e := range evs {
		switch e.Type {
		case health.EventServiceStarted:
			out = append(out, e.Service+" started")
		case health.EventServiceExited:
			out = append(out, e.Service+" exited")
		}
	}
	return out
}

// isService matches an event of type typ of the service named service,
// after the event id after.
func isService(typ health.EventType, service string, after uint64) func(health.Event) bool {
	return func(e health.Event) bool { return e.Type == typ && e.Service == service && e.ID > after }
}

// alive reports whether pid runs: a zombie has ended.
func alive(pid int) bool {
	state, _ := procState(pid)
	return state != "" && state != "Z"
}

// saidLine reports whether a line of logs holds every one of parts.
func saidLine(logs string, parts ...string) bool {
	for line := range strings.Lines(logs) {
		if !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(line, p) }) {
			return true
		}
	}
	return false
}

// followEvents runs vitals events --follow on the agent's socket, which
// prints every event as JSON until the agent has stopped; the events it
// printed, once it ends.
func followEvents(t *testing.T, a *agent) func() []health.Event {
	t.Helper()
	waitSocket(t, a)
	cmd := exec.Command(vitals, "events", "--follow", "-o", "json", "--api", a.sock)
	out := &vitalstest.Buffer{}
	cmd.Stdout, cmd.Stderr = out, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return func() []health.Event {
		t.Helper()
		if code := exited(t, cmd); code != 0 {
			t.Fatalf("vitals events --follow: exit %d; output:\n%s", code, out)
		}
		var evs []health.Event
		for sc := bufio.NewScanner(strings.NewReader(out.String())); sc.Scan(); {
			var e health.Event
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				t.Fatalf("vitals events -o json: %v: %q", err, sc.Text())
			}
			evs = append(evs, e)
		}
		return evs
	}
}

// Services start in the order of their dependencies, whatever the file's
// (c after b, b requires a: a, b, c), and stop in the reverse, each once
// the one after it has exited; vitals drains once, and as each stops at its
// SIGTERM none waits for its stop-timeout.
func TestServicesStartInDependencyOrderAndStopInReverse(t *testing.T) {
	a := startServices(t, func(a *agent) string {
		return fmt.Sprintf(`services:
  c: {command: %s, after: [b], stop-timeout: 30s}
  a: {command: %s, stop-timeout: 30s}
  b: {command: %s, requires: [a], stop-timeout: 30s}
`, a.workload("c", "sleep"), a.workload("a", "sleep"), a.workload("b", "sleep"))
	})
	events := followEvents(t, a)
	pids := map[string]int{}
	for _, name := range []string{"a", "b", "c"} {
		pids[name] = pidIn(t, a.readyOf(name))
	}
	a.cmd.Process.Signal(syscall.SIGTERM)
	if code := exited(t, a.cmd); code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit %d, want 143: the services' SIGTERM; logs:\n%s", code, a.logs)
	}
	evs := events()
	if got, want := strings.Join(runsOf(evs), ", "), "a started, b started, c started, c exited, b exited, a exited"; got != want {
		t.Fatalf("the services' events:\n  %s\nwant\n  %s\nall:\n%s", got, want, eventLines(evs))
	}
	stopping := 0
	for _, e := range evs {
		switch e.Type {
		case health.EventStopping:
			stopping++
		case health.EventServiceStarted, health.EventServiceExited:
			if e.PID != pids[e.Service] {
				t.Errorf("%s of %s: pid %d, want the pid it wrote, %d", e.Type, e.Service, e.PID, pids[e.Service])
			}
			if e.Type == health.EventServiceExited && (e.Signal != "SIGTERM" || e.Reason != "stopping") {
				t.Errorf("%s exited by %q for %q; want SIGTERM for stopping", e.Service, e.Signal, e.Reason)
			}
		}
	}
	if stopping != 1 {
		t.Errorf("%d stopping events, want one drain:\n%s", stopping, eventLines(evs))
	}
	if strings.Contains(a.logs.String(), "did not stop in time") {
		t.Errorf("a service that stops at SIGTERM was killed:\n%s", a.logs)
	}
}

// A cycle of after, before and requires is an error at the name that
// closes it, from vitals validate and from vitals run, which starts
// nothing.
func TestACycleOfServicesIsAPositionedErrorAndStartsNothing(t *testing.T) {
	addr := freeAddr(t)
	started := filepath.Join(t.TempDir(), "started")
	touch := fmt.Sprintf("[touch, %q]", started)
	text := fmt.Sprintf(`listen: %s
services:
  x: {command: %s, after: [z]}
  y: {command: %s, requires: [x]}
  z: {command: %s, after: [y]}
`, addr, touch, touch, touch)
	path := writeConfig(t, text)
	at := strings.Index(text, "after: [z]") + len("after: [")
	line, col := strings.Count(text[:at], "\n")+1, at-strings.LastIndex(text[:at], "\n")
	want := fmt.Sprintf("%s:%d:%d: services.x.after[0]: a cycle: x after z, z after y, y requires x; no service could start first", path, line, col)
	vitalsRun(t, "validate", "-c", path).expect(t, 2, "", want)
	vitalsRun(t, "run", "-c", path).expect(t, 2, "", want)
	if _, err := os.Stat(started); err == nil {
		t.Error("vitals run started a service of a file with a cycle")
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Error("something listens on the probe address after a file with a cycle")
	}
}

// A check's on-failure: restart restarts its own service (service:), and
// no other.
func TestAFailingCheckRestartsOnlyItsOwnService(t *testing.T) {
	var ok string
	a := startServices(t, func(a *agent) string {
		ok = a.okFile(t)
		return fmt.Sprintf(`services:
  a: {command: %s}
  b: {command: %s, backoff: {initial: 500ms, max: 500ms}}
checks:
  b-ok: {file: {path: %s}, service: b, on-failure: restart, period: 100ms, failure-threshold: 1}
`, a.workload("a", "sleep"), a.workload("b", "sleep"), ok)
	})
	pidA, pidB := pidIn(t, a.readyOf("a")), pidIn(t, a.readyOf("b"))
	waitSocket(t, a)
	passed := a.waitEvent(t, "b-ok passed", func(e health.Event) bool { return e.Type == health.EventCheckPassed && e.Check == "b-ok" })
	os.Remove(a.readyOf("b"))
	os.Remove(ok)
	evs := a.waitEvent(t, "b exited", isService(health.EventServiceExited, "b", passed[len(passed)-1].ID))
	os.WriteFile(ok, []byte("ok"), 0o600) // the new run of b is well
	if e := evs[len(evs)-1]; e.Reason != "check b-ok failed" || e.PID != pidB {
		t.Fatalf("b (pid %d) exited: pid %d, reason %q; want \"check b-ok failed\"", pidB, e.PID, e.Reason)
	}
	a.waitEvent(t, "b started again", isService(health.EventServiceStarted, "b", evs[len(evs)-1].ID))
	if again := pidIn(t, a.readyOf("b")); again == pidB {
		t.Fatalf("b runs as pid %d after its restart, as before", again)
	}
	all := a.events(t, 0)
	for _, e := range all {
		if e.Service == "a" && e.Type == health.EventServiceExited {
			t.Fatalf("a exited when b's check failed:\n%s", eventLines(all))
		}
	}
	if now := pidIn(t, a.readyOf("a")); now != pidA || !alive(pidA) {
		t.Fatalf("a ran as pid %d, and now as %d (alive %v)", pidA, now, alive(pidA))
	}
}

// vitals restart NAME (POST /v1/services/NAME/restart) restarts that
// service at once, and no other.
func TestRestartByNameRestartsThatServiceAlone(t *testing.T) {
	a := startServices(t, func(a *agent) string {
		return fmt.Sprintf("services:\n  a: {command: %s}\n  b: {command: %s, backoff: {initial: 1h, max: 1h}}\n",
			a.workload("a", "sleep"), a.workload("b", "sleep"))
	})
	pidA, pidB := pidIn(t, a.readyOf("a")), pidIn(t, a.readyOf("b"))
	waitSocket(t, a)
	os.Remove(a.readyOf("b"))
	r := a.vitals(t, "restart", "b")
	second := pidIn(t, a.readyOf("b")) // not after the hour of backoff
	r.expect(t, 0, fmt.Sprintf("restarted b: pid %d (restart 1)\n", second), "")
	if second == pidB {
		t.Fatalf("b runs as pid %d after its restart, as before", second)
	}
	// The API's route does the same.
	os.Remove(a.readyOf("b"))
	code, _, body := call(socketClient(a.sock), "POST", "http://vitals/v1/services/b/restart")
	var e health.Event
	if code != 200 || json.Unmarshal([]byte(body), &e) != nil || e.Service != "b" || e.Restarts != 2 {
		t.Fatalf("POST /v1/services/b/restart: %d %s; want 200 and b's second restart", code, body)
	}
	if third := pidIn(t, a.readyOf("b")); third != e.PID || third == second {
		t.Fatalf("b runs as pid %d; the answer said %d, and the run before was %d", third, e.PID, second)
	}
	evs := a.events(t, 0)
	if n := restartsFor(evs, "restart requested"); n != 2 {
		t.Errorf("%d exits for a restart by hand, want 2:\n%s", n, eventLines(evs))
	}
	if got, want := strings.Join(runsOf(evs), ", "), "a started, b started, b exited, b started, b exited, b started"; got != want {
		t.Errorf("the services' events:\n  %s\nwant\n  %s", got, want)
	}
	if now := pidIn(t, a.readyOf("a")); now != pidA || !alive(pidA) {
		t.Fatalf("a ran as pid %d, and now as %d (alive %v)", pidA, now, alive(pidA))
	}
}

// Every run of every service dies with vitals, a run restarted later too:
// a vitals killed with SIGKILL leaves none behind (PR_SET_PDEATHSIG).
func TestAKilledVitalsLeavesNoServiceBehind(t *testing.T) {
	a := startServices(t, func(a *agent) string {
		return fmt.Sprintf("services:\n  a: {command: %s}\n  b: {command: %s}\n", a.workload("a", "sleep"), a.workload("b", "sleep"))
	})
	pidIn(t, a.readyOf("b"))
	waitSocket(t, a)
	os.Remove(a.readyOf("b"))
	a.vitals(t, "restart", "b").expect(t, 0, "restarted b", "")
	pids := []int{pidIn(t, a.readyOf("a")), pidIn(t, a.readyOf("b"))}
	a.cmd.Process.Kill()
	exited(t, a.cmd)
	for deadline := time.Now().Add(20 * time.Second); alive(pids[0]) || alive(pids[1]); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("20s after vitals was killed, its services run: a %d alive %v, b %d alive %v; logs:\n%s",
				pids[0], alive(pids[0]), pids[1], alive(pids[1]), a.logs)
		}
	}
}

// As PID 1 of a PID namespace, vitals reaps the orphans of every service.
func TestAsPID1ItReapsTheOrphansOfEveryService(t *testing.T) {
	if out, err := exec.Command("unshare", "--pid", "--fork", "true").CombinedOutput(); err != nil {
		testenv.Missing(t, "this machine does not allow a new PID namespace (unshare --pid --fork: %v: %s); run as root to test vitals as PID 1", err, bytes.TrimSpace(out))
	}
	const orphans = 3 // each service's
	a := startServicesUnder(t, []string{"unshare", "--pid", "--fork"}, func(a *agent) string {
		return fmt.Sprintf("services:\n  a: {command: %s}\n  b: {command: %s}\n",
			a.workload("a", "orphans", strconv.Itoa(orphans)), a.workload("b", "orphans", strconv.Itoa(orphans)))
	})
	// The ready files hold pids of the namespace: never kill by them here.
	// Killing vitals, the namespace's PID 1, takes every process in it.
	t.Cleanup(func() { a.cmd.Process.Kill(); a.cmd.Wait() })
	var pid1 int // vitals, as the host sees it: unshare's child
	waitFor(t, "unshare to start vitals", a.logs, func() bool {
		for child := range children(a.cmd.Process.Pid) {
			pid1 = child
		}
		return pid1 != 0
	})
	t.Cleanup(func() { syscall.Kill(pid1, syscall.SIGKILL) })
	// Both services and their orphans are vitals's children while the
	// orphans sleep (3s from their start, which may be apart on a loaded
	// machine: every child seen counts).
	seen := map[int]bool{}
	waitFor(t, "the services and their orphans under vitals", a.logs, func() bool {
		for child := range children(pid1) {
			seen[child] = true
		}
		return len(seen) >= 2+2*orphans
	})
	// They exit; vitals reaps them: no zombie is left under it.
	waitFor(t, "vitals to reap the orphans", a.logs, func() bool {
		left := children(pid1)
		for _, state := range left {
			if state == "Z" {
				return false
			}
		}
		return len(left) == 2
	})
	if strings.Contains(a.logs.String(), "cannot become a subreaper") {
		t.Errorf("vitals as PID 1 tried to become a subreaper; logs:\n%s", a.logs)
	}
	syscall.Kill(pid1, syscall.SIGTERM)
	if code := exited(t, a.cmd); code != 128+int(syscall.SIGTERM) {
		t.Fatalf("exit %d, want 143, the services' SIGTERM; logs:\n%s", code, a.logs)
	}
}

// A service's restart-rules are read before its restart policy, the first
// rule for the exit's code deciding.
func TestRestartRulesDecideBeforeThePolicy(t *testing.T) {
	t.Run("restart", func(t *testing.T) {
		// restart: never, but 42 asks for a restart.
		a := startServices(t, func(a *agent) string {
			return fmt.Sprintf(`services:
  r:
    command: %s
    restart: never
    restart-rules: [{action: restart, exit-codes: {operator: in, values: [42]}}]
    backoff: {initial: 100ms, max: 100ms}
`, a.workload("r", "exits", "42"))
		})
		waitSocket(t, a)
		evs := a.waitEvent(t, "r started again", func(e health.Event) bool {
			return e.Type == health.EventServiceStarted && e.Service == "r" && e.Restarts == 1
		})
		pid := pidIn(t, a.readyOf("r")) // the second run sleeps
		if e := evs[len(evs)-1]; e.PID != pid {
			t.Fatalf("the second run is pid %d, and wrote %d", e.PID, pid)
		}
		var exit *health.Event
		for _, e := range evs {
			if e.Type == health.EventServiceExited {
				exit = &e
			}
		}
		if exit == nil || exit.ExitCode == nil || *exit.ExitCode != 42 {
			t.Fatalf("r's exit before its restart is not 42:\n%s", eventLines(evs))
		}
		if !alive(a.cmd.Process.Pid) {
			t.Fatalf("vitals exited; logs:\n%s", a.logs)
		}
	})
	t.Run("exit", func(t *testing.T) {
		// restart: always, but 3 ends vitals with that code; db, which
		// runs beside, is stopped.
		a := startServices(t, func(a *agent) string {
			return fmt.Sprintf(`services:
  db: {command: %s}
  worker:
    command: %s
    restart: always
    restart-rules: [{action: exit, exit-codes: {operator: in, values: [3]}}]
    backoff: {initial: 100ms, max: 100ms}
`, a.workload("db", "sleep"), a.workload("worker", "exits", "0", "3"))
		})
		if code := exited(t, a.cmd); code != 3 {
			t.Fatalf("exit %d, want worker's 3; logs:\n%s", code, a.logs)
		}
		if !saidLine(a.logs.String(), `msg="stopping: readiness fails from now on"`, `why="service worker exited (restart-rules[0]: exit if in [3])"`) ||
			!saidLine(a.logs.String(), `msg="workload exited"`, "service=db", "reason=stopping") {
			t.Errorf("logs do not say that worker's exit stopped vitals, and db with it:\n%s", a.logs)
		}
		// worker's first run exited 0 and was restarted: by then db ran,
		// most likely as far as its ready file.
		if b, err := os.ReadFile(a.readyOf("db")); err == nil {
			if db, _ := strconv.Atoi(string(b)); alive(db) {
				t.Errorf("db (pid %d) runs after vitals exited", db)
			}
		}
	})
	t.Run("ignore", func(t *testing.T) {
		// restart: on-failure, but 5 leaves job down; vitals goes on, and
		// stays ready.
		var ok string
		a := startServices(t, func(a *agent) string {
			ok = a.okFile(t)
			return fmt.Sprintf(`services:
  db: {command: %s}
  job:
    command: %s
    restart: on-failure
    restart-rules: [{action: ignore, exit-codes: {operator: in, values: [5]}}]
    backoff: {initial: 100ms, max: 100ms}
checks:
  ok: {file: {path: %s}, period: 100ms, failure-threshold: 1}
`, a.workload("db", "sleep"), a.workload("job", "exits", "5"), ok)
		})
		waitSocket(t, a)
		a.waitEvent(t, "job exited", isService(health.EventServiceExited, "job", 0))
		waitFor(t, "the log to say job stays down", a.logs, func() bool {
			return strings.Contains(a.logs.String(), "the service is not restarted, and stays down: vitals goes on")
		})
		waitReadyz(t, a)
		// Ten of its backoffs later, job is still down, and vitals ready.
		time.Sleep(time.Second)
		if code := readyz(a.addr); code != 200 || !alive(a.cmd.Process.Pid) {
			t.Fatalf("readyz %d, vitals running %v; logs:\n%s", code, alive(a.cmd.Process.Pid), a.logs)
		}
		evs := a.events(t, 0)
		if got, want := strings.Join(runsOf(evs), ", "), "db started, job started, job exited"; got != want {
			t.Fatalf("the services' events:\n  %s\nwant\n  %s", got, want)
		}
		if db := pidIn(t, a.readyOf("db")); !alive(db) {
			t.Fatalf("db (pid %d) is gone; logs:\n%s", db, a.logs)
		}
	})
}

// A check's stop-timeout bounds the stop of the restart it asks for: a
// service that ignores SIGTERM, with a stop-timeout of 30s, is killed after
// the check's 1s and started again.
func TestTheGraceOfACheckBoundsTheStopOfItsRestart(t *testing.T) {
	var ok string
	a := startServices(t, func(a *agent) string {
		ok = a.okFile(t)
		return fmt.Sprintf(`services:
  slow: {command: %s, stop-timeout: 30s, backoff: {initial: 100ms, max: 100ms}}
checks:
  slow-ok: {file: {path: %s}, service: slow, on-failure: restart, stop-timeout: 1s, period: 100ms, failure-threshold: 1}
`, a.workload("slow", "ignore-term"), ok)
	})
	first := pidIn(t, a.readyOf("slow"))
	waitSocket(t, a)
	passed := a.waitEvent(t, "slow-ok passed", func(e health.Event) bool { return e.Type == health.EventCheckPassed && e.Check == "slow-ok" })
	os.Remove(ok)
	began := time.Now()
	evs := a.waitEvent(t, "slow exited", isService(health.EventServiceExited, "slow", passed[len(passed)-1].ID))
	os.WriteFile(ok, []byte("ok"), 0o600) // the new run is well
	a.waitEvent(t, "slow started again", isService(health.EventServiceStarted, "slow", evs[len(evs)-1].ID))
	// A coarse bound: 1s of grace, the check's period and the backoff,
	// on a loaded machine; the service's own 30s would be far past it.
	if took := time.Since(began); took > 15*time.Second {
		t.Errorf("slow started again %v after its check failed; want about the check's stop-timeout of 1s", took)
	}
	if e := evs[len(evs)-1]; e.PID != first || e.Signal != "SIGKILL" || e.Reason != "check slow-ok failed" {
		t.Errorf("slow (pid %d) exited: pid %d by %q for %q; want SIGKILL for check slow-ok failed", first, e.PID, e.Signal, e.Reason)
	}
	if !saidLine(a.logs.String(), `msg="the workload did not stop in time: SIGKILL"`, "service=slow", "pid="+strconv.Itoa(first)+" stop-timeout=1s") {
		t.Errorf("logs do not say slow was killed after the check's stop-timeout of 1s:\n%s", a.logs)
	}
}

// A check with startup: disabled is stopped from the start: it neither
// runs nor counts, so readiness passes without it, until vitals start
// starts it.
func TestADisabledCheckCountsOnceStarted(t *testing.T) {
	var ok, missing string
	a := startServices(t, func(a *agent) string {
		ok, missing = a.okFile(t), filepath.Join(a.dir, "missing")
		return fmt.Sprintf(`services:
  app: {command: %s}
checks:
  ok: {file: {path: %s}, period: 100ms, failure-threshold: 1}
  gate: {file: {path: %s}, startup: disabled, period: 100ms, failure-threshold: 1}
`, a.workload("app", "sleep"), ok, missing)
	})
	waitSocket(t, a)
	waitReadyz(t, a)
	time.Sleep(500 * time.Millisecond) // five of its periods: it would have run
	if code := readyz(a.addr); code != 200 {
		t.Fatalf("readyz %d with gate disabled; logs:\n%s", code, a.logs)
	}
	code, _, body := call(socketClient(a.sock), "GET", "http://vitals/v1/checks")
	var checks []client.Check
	if code != 200 || json.Unmarshal([]byte(body), &checks) != nil {
		t.Fatalf("GET /v1/checks: %d %s", code, body)
	}
	i := slices.IndexFunc(checks, func(c client.Check) bool { return c.Name == "gate" })
	if i < 0 {
		t.Fatalf("GET /v1/checks has no gate: %s", body)
	}
	if c := checks[i]; !c.Stopped || c.Status != health.Pending || c.Runs != 0 {
		t.Fatalf("gate before it is started: stopped %v, %s, %d runs; want stopped, pending, none", c.Stopped, c.Status, c.Runs)
	}
	a.vitals(t, "start", "gate").expect(t, 0, "started gate (ready, ", "")
	waitReadyzIs(t, a.addr, 503, a.logs)
	a.waitEvent(t, "gate failed", func(e health.Event) bool { return e.Type == health.EventCheckFailed && e.Check == "gate" })
}

// Each service has its own notification-fd, and a notify check hears the
// service it names: one service says it is ready, the other not yet, and
// only the first's check passes; a log check reads its own service's
// output only.
func TestEachServiceIsHeardOnItsOwn(t *testing.T) {
	a := startServices(t, func(a *agent) string {
		return fmt.Sprintf(`services:
  quick:
    command: %s
    notification-fd: 3
  slow:
    command: %s
    notification-fd: 3
checks:
  quick-ready: {notify: {}, service: quick, period: 100ms}
  slow-ready: {notify: {}, service: slow, period: 100ms}
  slow-said: {log: {pattern: "to stdout"}, service: slow, period: 100ms, failure-threshold: 1000}
`, "[sh, -c, 'echo to stdout; exec \"$@\"', sh, "+strings.TrimPrefix(a.workload("quick", "notify-fd", "3"), "["), a.workload("slow", "sleep"))
	})
	waitSocket(t, a)
	a.waitEvent(t, "quick ready", func(e health.Event) bool { return e.Type == health.EventCheckPassed && e.Check == "quick-ready" })
	waitFor(t, "quick's line", a.logs, func() bool { return strings.Contains(a.stdout.String(), "to stdout") })
	time.Sleep(500 * time.Millisecond) // five periods of slow-ready's
	for _, e := range a.events(t, 0) {
		if e.Type == health.EventCheckPassed && (e.Check == "slow-ready" || e.Check == "slow-said") {
			t.Fatalf("%s passed, yet slow said nothing: a message or a line of quick's was taken for slow's; events:\n%s",
				e.Check, eventLines(a.events(t, 0)))
		}
	}
}
