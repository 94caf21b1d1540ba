package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
	"github.com/vitals-dev/vitals/health"
)

// R5 of the reliability suite: the faults of a workload under vitals run (a
// crash loop, a SIGTERM ignored, zombies and grandchildren, an exit during
// the drain) leave no zombie and no process behind, keep the workload's exit
// code, bound the backoff, and end with SIGKILL at the stop timeout.

// faultEnv, set, makes this test binary one of the faulty workloads of
// faultWorkload instead of running the tests.
const faultEnv = "VITALS_FAULT_WORKLOAD"

// markEnv carries a test's own mark into vitals, its workload and everything
// the workload starts, so that what is left of them can be found in /proc.
const markEnv = "VITALS_FAULT_MARK"

func init() {
	if os.Getenv(faultEnv) != "" {
		os.Exit(faultWorkload(os.Args[1:]))
	}
}

// faultWorkload is the workload: args[0] says what it does, args[1] is a
// file it writes its pid to once it is ready for signals. Every process of
// a workload appends its pid to FILE.pids as it starts, so that a test
// knows each one, zombies included.
//
//	crash FILE CODE        exits with CODE at once
//	term-exit FILE CODE D  on SIGTERM, waits D, then exits with CODE
//	usr2-exit FILE CODE    sleeps; exits with CODE on SIGUSR2, and with 0 on SIGTERM
//	family FILE exit|ignore  leaves three zombie children; starts a child that
//	                       starts two lingering grandchildren and exits unwaited
//	                       (a zombie, its children orphans), a lingering child,
//	                       and a lingering daemon (in a session of its own, so
//	                       out of its group); then sleeps. On SIGTERM, with
//	                       exit, it leaves two more zombie children and exits 0;
//	                       with ignore, SIGTERM is ignored.
//
// and for a family's members: exit-now FILE (exits 0), linger FILE (sleeps
// through SIGTERM), orphaner FILE (starts two lingers and exits 0).
func faultWorkload(args []string) int {
	if len(args) < 2 {
		return 100
	}
	ready := args[1]
	recordPid(ready)
	switch args[0] {
	case "crash":
		code, _ := strconv.Atoi(args[2])
		return code
	case "term-exit":
		code, _ := strconv.Atoi(args[2])
		d, _ := time.ParseDuration(args[3])
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		writePid(ready)
		<-term
		time.Sleep(d)
		return code
	case "usr2-exit":
		code, _ := strconv.Atoi(args[2])
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGUSR2, syscall.SIGTERM)
		writePid(ready)
		if <-sig == syscall.SIGTERM {
			return 0
		}
		return code
	case "family":
		term := make(chan os.Signal, 1)
		if args[2] == "ignore" {
			signal.Ignore(syscall.SIGTERM)
		} else {
			signal.Notify(term, syscall.SIGTERM)
		}
		// The family: 3 zombies, the orphaner and its 2 lingers, a linger, a
		// daemon.
		for _, mode := range []string{"exit-now", "exit-now", "exit-now", "orphaner"} {
			if startZombie(mode, ready) != nil {
				return 99
			}
		}
		if _, err := startMember("linger", ready); err != nil {
			return 99
		}
		// A daemon: a linger in a session of its own, out of the group.
		if _, err := syscall.ForkExec(os.Args[0], []string{os.Args[0], "linger", ready},
			&syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{0, 1, 2}, Sys: &syscall.SysProcAttr{Setsid: true}}); err != nil {
			return 99
		}
		if !waitPids(ready, 1+3+1+2+1+1) {
			return 98
		}
		writePid(ready)
		<-term
		for range 2 { // zombies at its exit
			if startZombie("exit-now", ready) != nil {
				return 97
			}
		}
		return 0
	case "exit-now":
		return 0
	case "linger":
		signal.Ignore(syscall.SIGTERM)
		time.Sleep(time.Hour)
	case "orphaner":
		var lingers []int
		for range 2 {
			p, err := startMember("linger", ready)
			if err != nil {
				return 99
			}
			lingers = append(lingers, p.Pid)
		}
		for deadline := time.Now().Add(10 * time.Second); !slices.Contains(pidsOf(ready), lingers[0]) || !slices.Contains(pidsOf(ready), lingers[1]); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				return 98
			}
		}
		return 0 // unwaited by its parent: a zombie, and its children orphans
	}
	return 100
}

// startMember starts a member of a workload's family, in its group, and
// does not wait for it.
func startMember(mode, ready string) (*os.Process, error) {
	return os.StartProcess(os.Args[0], []string{os.Args[0], mode, ready},
		&os.ProcAttr{Env: os.Environ(), Files: []*os.File{nil, os.Stdout, os.Stderr}})
}

// startZombie starts a member that exits soon, and returns once it is a
// zombie: never waited for, it stays one as long as its parent lives.
func startZombie(mode, ready string) error {
	p, err := startMember(mode, ready)
	if err != nil {
		return err
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if state, _ := procState(p.Pid); state == "Z" {
			return nil
		}
	}
	return fmt.Errorf("child %d did not exit", p.Pid)
}

func recordPid(ready string) {
	f, err := os.OpenFile(ready+".pids", os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	fmt.Fprintf(f, "%d\n", os.Getpid())
	f.Close()
}

func writePid(ready string) { os.WriteFile(ready, []byte(strconv.Itoa(os.Getpid())), 0o600) }

// pidsOf lists the pids the processes of a workload recorded.
func pidsOf(ready string) []int {
	b, _ := os.ReadFile(ready + ".pids")
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitPids waits (a guard only) until n processes have recorded their pids.
func waitPids(ready string, n int) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if len(pidsOf(ready)) >= n {
			return true
		}
	}
	return false
}

// procState is the state (R, S, Z …) and parent of pid, from /proc; "" when
// there is no such process.
func procState(pid int) (state string, ppid int) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil || bytes.LastIndexByte(b, ')') < 0 {
		return "", 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 2 {
		return "", 0
	}
	ppid, _ = strconv.Atoi(f[1])
	return f[0], ppid
}

// marked lists the live processes whose environment holds mark.
func marked(mark string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && bytes.Contains(env, []byte("\x00"+markEnv+"="+mark+"\x00")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// leftovers describes what is left of a test's processes once vitals has
// exited: a live process with its mark, or a process its workload recorded
// (a zombie has no environment to show the mark). A recorded pid taken
// again since, by a process without the mark, is no leftover.
func leftovers(mark, ready string) []string {
	var left []string
	seen := map[int]bool{}
	for _, pid := range marked(mark) {
		seen[pid] = true
		state, ppid := procState(pid)
		left = append(left, fmt.Sprintf("pid %d (%s, parent %d)", pid, state, ppid))
	}
	self, _ := os.ReadFile("/proc/self/comm")
	for _, pid := range pidsOf(ready) {
		if seen[pid] {
			continue
		}
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if state, ppid := procState(pid); state == "Z" && bytes.Equal(comm, self) {
			left = append(left, fmt.Sprintf("pid %d (zombie, parent %d)", pid, ppid))
		}
	}
	return left
}

// zombieChildren lists the zombie children of this test process.
func zombieChildren() []int {
	var z []int
	for pid, state := range children(os.Getpid()) {
		if state == "Z" {
			z = append(z, pid)
		}
	}
	return z
}

// startFaulty runs vitals with the file that config makes from the agent's
// addresses, its workload this test binary as faultWorkload, doing what;
// vitals and everything it starts carry mark.
func startFaulty(t *testing.T, mark string, config func(a *agent) string, what ...string) *agent {
	t.Helper()
	a := &agent{addr: freeAddr(t), dir: t.TempDir(), logs: &vitalstest.Buffer{}, stdout: &vitalstest.Buffer{}}
	a.sock, a.ready = filepath.Join(a.dir, "vitals.sock"), filepath.Join(a.dir, "ready")
	os.WriteFile(filepath.Join(a.dir, "ok"), []byte("ok"), 0o600)
	path := writeConfig(t, fmt.Sprintf("listen: %s\napi: %s\n%s", a.addr, a.sock, config(a)))
	args := append([]string{"run", "-c", path, "--", os.Args[0], what[0], a.ready}, what[1:]...)
	a.cmd = exec.Command(vitals, args...)
	a.cmd.Env = append(quickExit(os.Environ()), faultEnv+"=1", markEnv+"="+mark)
	a.cmd.Stderr, a.cmd.Stdout = a.logs, a.stdout
	a.cmd.WaitDelay = 2 * time.Second // a process left behind by a failed test holds the output open
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		a.cmd.Process.Kill()
		a.cmd.Wait()
		for _, pid := range marked(mark) { // what a failed test left
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return a
}

// quickExit is env with the race detector's wait at exit left out: a
// workload built with -race would otherwise take a second to exit, and so
// would each member of its family.
func quickExit(env []string) []string {
	race := "atexit_sleep_ms=0"
	env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		if v, ok := strings.CutPrefix(kv, "GORACE="); ok {
			race = v + " " + race
			return true
		}
		return false
	})
	return append(env, "GORACE="+race)
}

// okCheck is a ready check that passes from its first run: the file
// startFaulty writes.
func okCheck(a *agent) string {
	return fmt.Sprintf("checks:\n  ok: {file: {path: %s}, period: 100ms, failure-threshold: 1}\n", filepath.Join(a.dir, "ok"))
}

// newMark is a mark of this test's own.
func newMark(t *testing.T) string {
	return fmt.Sprintf("%s-%d-%d", strings.ReplaceAll(t.Name(), "/", "-"), os.Getpid(), time.Now().UnixNano())
}

// expectNothingLeft fails when a process of the test or a zombie outlives
// vitals, which has exited.
func expectNothingLeft(t *testing.T, a *agent, mark string) {
	t.Helper()
	// A process killed as vitals exits may take a moment to go; one that
	// stays is left.
	var left []string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if left = leftovers(mark, a.ready); len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(left) > 0 {
		t.Errorf("left behind once vitals exited: %s; logs:\n%s", strings.Join(left, ", "), a.logs)
	}
	if z := zombieChildren(); len(z) > 0 {
		t.Errorf("zombie children of the test process: %v", z)
	}
}

// afterStopping is vitals's logs from the line where it began to stop: what
// it did while stopping.
func afterStopping(logs string) string {
	i := strings.Index(logs, "stopping: readiness fails from now on")
	if i < 0 {
		return ""
	}
	return logs[i:]
}

// A workload that exits 3 at once, restarted on failure, is started again
// after delays that double from backoff.initial up to backoff.max, give or
// take 10%, and never longer; every exit is a crash. SIGTERM during the
// drain restarts it no more, and vitals exits with its last code, 3,
// leaving nothing behind.
func TestACrashLoopBacksOffUpToItsMaximumAndStopsWithTheLastCode(t *testing.T) {
	const initial, maxDelay = 50 * time.Millisecond, 200 * time.Millisecond
	starts := 8
	if soak {
		starts = 150
	}
	mark := newMark(t)
	a := startFaulty(t, mark, func(a *agent) string {
		return fmt.Sprintf("service: {restart: on-failure, backoff: {initial: %v, max: %v}}\ndrain: 1s\n%s", initial, maxDelay, okCheck(a))
	}, "crash", "3")
	waitSocket(t, a)
	// Read as they come, by cursor: a long loop has more events than the
	// log keeps.
	var evs []health.Event
	guard := time.Now().Add(time.Duration(starts) * (maxDelay + time.Second))
	for last, done := uint64(0), false; !done; time.Sleep(20 * time.Millisecond) {
		for _, e := range a.events(t, last) {
			if !done {
				evs = append(evs, e)
			}
			last = e.ID
			done = done || e.Type == health.EventServiceStarted && e.Restarts == starts-1
		}
		if !done && time.Now().After(guard) {
			t.Fatalf("no start %d by now; events:\n%s\nlogs:\n%s", starts, eventLines(evs), a.logs)
		}
	}
	var exitedAt []time.Time
	var delays []time.Duration
	for _, e := range evs {
		switch e.Type {
		case health.EventServiceExited:
			if e.Reason != "crash" || e.ExitCode == nil || *e.ExitCode != 3 || e.Restarts != len(exitedAt) {
				t.Fatalf("exit %d: reason %q, code %v, restarts %d; want a crash with code 3:\n%s",
					len(exitedAt), e.Reason, e.ExitCode, e.Restarts, eventLines(evs))
			}
			exitedAt = append(exitedAt, e.Time)
		case health.EventServiceStarted:
			if e.Restarts > 0 {
				delays = append(delays, e.Time.Sub(exitedAt[e.Restarts-1]))
			}
		}
	}
	// A timer never fires early: each delay is at least its step of the
	// backoff less 10%. Late is the machine's load: bounded generously, but
	// below the 3.2s that the seventh delay of a backoff without its max
	// would reach.
	const late = 2 * time.Second
	step := initial
	for i, d := range delays {
		if d < step*9/10 || d > maxDelay*11/10+late {
			t.Errorf("restart %d came %v after the crash; want %v give or take 10%%, never over %v (and %v for the load)",
				i+1, d, step, maxDelay*11/10, late)
		}
		step = min(2*step, maxDelay)
	}
	if t.Failed() {
		t.Fatalf("delays %v; events:\n%s", delays, eventLines(evs))
	}
	t.Logf("delays between a crash and the next start: %v", delays)

	a.cmd.Process.Signal(syscall.SIGTERM)
	if code := exited(t, a.cmd); code != 3 {
		t.Fatalf("exit %d, want the workload's last code 3; logs:\n%s", code, a.logs)
	}
	if stopping := afterStopping(a.logs.String()); stopping == "" || strings.Contains(stopping, "workload started") {
		t.Fatalf("the workload was started again after SIGTERM, during the drain; logs:\n%s", a.logs)
	}
	expectNothingLeft(t, a, mark)
}

// SIGTERM that comes while a crashed workload waits out its backoff ends
// the loop: through the drain and after it, the workload is not started
// again, and vitals exits with its last code at once: it waits out neither
// the backoff nor the drain.
func TestACrashedWorkloadIsNotRestartedWhenSIGTERMComesDuringItsBackoff(t *testing.T) {
	const backoff, drain = 10 * time.Second, 10 * time.Second
	mark := newMark(t)
	a := startFaulty(t, mark, func(a *agent) string {
		return fmt.Sprintf("service: {restart: on-failure, backoff: {initial: %v, max: %v}}\ndrain: %v\n%s", backoff, backoff, drain, okCheck(a))
	}, "crash", "3")
	waitSocket(t, a)
	a.waitEvent(t, "the first crash", func(e health.Event) bool { return e.Type == health.EventServiceExited })
	sent := time.Now()
	a.cmd.Process.Signal(syscall.SIGTERM) // within the backoff's 9s at least
	if code := exited(t, a.cmd); code != 3 {
		t.Fatalf("exit %d, want the workload's last code 3; logs:\n%s", code, a.logs)
	}
	if took := time.Since(sent); took > drain/2 {
		t.Errorf("vitals exited %v after SIGTERM; want at once, not after the backoff or the drain (%v each)", took, drain)
	}
	if n := strings.Count(a.logs.String(), "workload started"); n != 1 {
		t.Fatalf("the workload started %d times, want once: not again after SIGTERM; logs:\n%s", n, a.logs)
	}
	expectNothingLeft(t, a, mark)
}

// A workload that ignores SIGTERM gets SIGKILL, with its whole group, at
// stop-timeout after its stop signal: not before, and not much after.
// vitals exits 137, 128 plus SIGKILL.
func TestAWorkloadThatIgnoresSIGTERMIsKilledWithItsGroupAtTheStopTimeout(t *testing.T) {
	const stopTimeout = 3 * time.Second
	mark := newMark(t)
	a := startFaulty(t, mark, func(a *agent) string {
		return fmt.Sprintf("service: {stop-timeout: %v}\n%s", stopTimeout, okCheck(a))
	}, "family", "ignore")
	pid := pidIn(t, a.ready)
	var members []int // of its group: not the daemon, which left it
	for _, p := range pidsOf(a.ready) {
		if pgid, err := syscall.Getpgid(p); err == nil && pgid == pid {
			members = append(members, p)
		}
	}
	if len(members) != 8 {
		t.Fatalf("%d processes in the workload's group, want 8: it, 3 zombies, the orphaner's zombie and 3 lingers", len(members))
	}
	// dead waits for every member of the group to be dead (a zombie, or
	// gone) and says when the last one was found so.
	dead := make(chan time.Time, 1)
	go func() {
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			alive := false
			for _, p := range members {
				if state, _ := procState(p); state != "" && state != "Z" {
					alive = true
				}
			}
			if !alive {
				dead <- time.Now()
				return
			}
		}
		close(dead)
	}()
	sent := time.Now()
	a.cmd.Process.Signal(syscall.SIGTERM)
	// A quarter of the way, the family still lives: SIGTERM did not end it.
	time.Sleep(stopTimeout / 4)
	if state, _ := procState(pid); state == "" || state == "Z" {
		t.Fatalf("the workload is dead %v after SIGTERM, before its stop timeout of %v; logs:\n%s", time.Since(sent), stopTimeout, a.logs)
	}
	at, ok := <-dead
	if !ok {
		t.Fatalf("the workload's group still lives 30s after SIGTERM; logs:\n%s", a.logs)
	}
	took := at.Sub(sent)
	t.Logf("the workload's group died %v after SIGTERM, with a stop timeout of %v", took, stopTimeout)
	if took < stopTimeout || took > stopTimeout+3*time.Second {
		t.Errorf("the workload's group died %v after SIGTERM; want at its stop timeout of %v (within 3s for the load)", took, stopTimeout)
	}
	if code := exited(t, a.cmd); code != 128+int(syscall.SIGKILL) {
		t.Fatalf("exit %d, want 137; logs:\n%s", code, a.logs)
	}
	for _, want := range []string{"the workload did not stop in time: SIGKILL", "reason=stopping", "code=137"} {
		if !strings.Contains(a.logs.String(), want) {
			t.Errorf("logs lack %q:\n%s", want, a.logs)
		}
	}
	expectNothingLeft(t, a, mark)
}

// The workload leaves zombies while it runs and at its exit, orphans
// grandchildren in its group (handed to vitals, its subreaper), keeps a
// child in its group that outlives it, and a daemon out of its group.
// Whether it exits on SIGTERM, is killed by SIGKILL at the stop timeout, or
// is killed from outside while it runs, none of them outlives vitals, and no
// zombie is left.
func TestNoZombieNorGrandchildOutlivesVitals(t *testing.T) {
	for _, tc := range []struct {
		name, onTerm string
		stopTimeout  time.Duration
		stop         func(a *agent, pid int)
		code         int
	}{
		{"the workload exits on SIGTERM", "exit", 10 * time.Second, func(a *agent, _ int) { a.cmd.Process.Signal(syscall.SIGTERM) }, 0},
		{"the workload ignores SIGTERM", "ignore", 500 * time.Millisecond, func(a *agent, _ int) { a.cmd.Process.Signal(syscall.SIGTERM) }, 137},
		{"the workload is killed while it runs", "exit", 10 * time.Second, func(_ *agent, pid int) { syscall.Kill(pid, syscall.SIGKILL) }, 137},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rounds := 1
			if soak {
				rounds = 10
			}
			for range rounds {
				familyOutlivesNothing(t, tc.onTerm, tc.stopTimeout, tc.stop, tc.code)
			}
		})
	}
}

// familyOutlivesNothing runs a family under vitals, stops it with stop, and
// expects vitals to exit with code, leaving nothing behind.
func familyOutlivesNothing(t *testing.T, onTerm string, stopTimeout time.Duration, stop func(a *agent, pid int), code int) {
	mark := newMark(t)
	a := startFaulty(t, mark, func(a *agent) string {
		return fmt.Sprintf("service: {stop-timeout: %v}\n%s", stopTimeout, okCheck(a))
	}, "family", onTerm)
	pid := pidIn(t, a.ready)
	// While it runs: its three zombies and the orphaner's are its own, and
	// the orphaner's two lingering children were handed to vitals.
	var zombies, underVitals int
	for _, p := range pidsOf(a.ready) {
		switch state, ppid := procState(p); {
		case p == pid:
		case state == "Z" && ppid == pid:
			zombies++
		case ppid == a.cmd.Process.Pid:
			underVitals++
		}
	}
	if zombies != 4 || underVitals != 2 {
		t.Fatalf("the family: %d zombies of the workload, %d orphans under vitals; want 4 and 2", zombies, underVitals)
	}
	stop(a, pid)
	if got := exited(t, a.cmd); got != code {
		t.Fatalf("exit %d, want %d; logs:\n%s", got, code, a.logs)
	}
	expectNothingLeft(t, a, mark)
}

// The workload exits with 7 a while after its stop signal, which comes
// after the drain: vitals exits with 7. Through the drain readiness fails
// while the workload runs, and, though its policy is always, it is not
// started again.
func TestAWorkloadThatExitsSlowlyOnSIGTERMKeepsItsCode(t *testing.T) {
	const drain = 3 * time.Second
	mark := newMark(t)
	a := startFaulty(t, mark, func(a *agent) string {
		return fmt.Sprintf("service: {restart: always, stop-timeout: 10s}\ndrain: %v\n%s", drain, okCheck(a))
	}, "term-exit", "7", "300ms")
	pid := pidIn(t, a.ready)
	waitReadyz(t, a)
	sent := time.Now()
	a.cmd.Process.Signal(syscall.SIGTERM)
	time.Sleep(drain / 3)
	if code := readyz(a.addr); code != 503 {
		t.Errorf("readyz %d during the drain, want 503", code)
	}
	if state, _ := procState(pid); state == "" || state == "Z" {
		t.Errorf("the workload is dead during the drain")
	}
	if code := exited(t, a.cmd); code != 7 {
		t.Fatalf("exit %d, want the workload's 7; logs:\n%s", code, a.logs)
	}
	if took := time.Since(sent); took < drain+300*time.Millisecond {
		t.Errorf("vitals exited %v after SIGTERM, before the drain (%v) and the workload's 300ms", took, drain)
	}
	logs := a.logs.String()
	if n := strings.Count(logs, "workload started"); n != 1 || !strings.Contains(logs, "code=7 reason=stopping") {
		t.Fatalf("%d starts, want 1, and an exit with code 7 while stopping; logs:\n%s", n, logs)
	}
	expectNothingLeft(t, a, mark)
}

// The workload exits with 7 on its own during the drain, before its stop
// signal: vitals exits with 7 at once, without waiting out the drain, and
// does not start it again though its policy is always.
func TestAWorkloadThatExitsDuringTheDrainKeepsItsCodeAndIsNotRestarted(t *testing.T) {
	const drain = 10 * time.Second
	mark := newMark(t)
	a := startFaulty(t, mark, func(a *agent) string {
		return fmt.Sprintf("service: {restart: always, backoff: {initial: 50ms, max: 50ms}}\ndrain: %v\n%s", drain, okCheck(a))
	}, "usr2-exit", "7")
	pid := pidIn(t, a.ready)
	waitReadyz(t, a)
	a.cmd.Process.Signal(syscall.SIGTERM)
	for deadline := time.Now().Add(20 * time.Second); readyz(a.addr) != 503; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("readyz did not fail within 20s of SIGTERM; logs:\n%s", a.logs)
		}
	}
	told := time.Now()
	syscall.Kill(pid, syscall.SIGUSR2)
	if code := exited(t, a.cmd); code != 7 {
		t.Fatalf("exit %d, want the workload's 7; logs:\n%s", code, a.logs)
	}
	if took := time.Since(told); took > drain/2 {
		t.Errorf("vitals exited %v after the workload did; want at once, not at the end of the %v drain", took, drain)
	}
	logs := a.logs.String()
	if n := strings.Count(logs, "workload started"); n != 1 || !strings.Contains(logs, "code=7 reason=crash") {
		t.Fatalf("%d starts, want 1, and an exit with code 7 (a crash: it was not asked to); logs:\n%s", n, logs)
	}
	expectNothingLeft(t, a, mark)
}

// vitals exits with the workload's code: its exit status, or 128 plus the
// number of the signal that killed it, whatever the restart policy made of
// it before.
func TestTheWorkloadsExitCodeIsVitalsExitCode(t *testing.T) {
	for _, tc := range []struct {
		service, script string
		code            int
	}{
		{"{}", "exit 0", 0},
		{"{}", "exit 1", 1},
		{"{}", "exit 255", 255},
		{"{restart: on-failure}", "exit 0", 0}, // no failure: no restart, and vitals exits with it
		{"{}", "kill -USR1 $$", 128 + int(syscall.SIGUSR1)},
		{"{}", "kill -ALRM $$", 128 + int(syscall.SIGALRM)},
		{"{}", "kill -TERM $$", 128 + int(syscall.SIGTERM)},
	} {
		path := writeConfig(t, fmt.Sprintf("listen: %s\napi: %s\nservice: %s\nchecks:\n  a: {heartbeat: {ttl: 1h}}\n",
			freeAddr(t), filepath.Join(t.TempDir(), "vitals.sock"), tc.service))
		r := vitalsRun(t, "run", "-c", path, "--", "sh", "-c", tc.script)
		if r.code != tc.code {
			t.Errorf("service %s, workload sh -c %q: exit %d, want %d; logs:\n%s", tc.service, tc.script, r.code, tc.code, r.stderr)
		}
	}
}

// waitSocket waits (a guard only) for the agent's API socket.
func waitSocket(t *testing.T, a *agent) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(a.sock); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no API socket within 20s; logs:\n%s", a.logs)
		}
	}
}

// waitReadyz waits (a guard only) for the agent's readiness to pass.
func waitReadyz(t *testing.T, a *agent) {
	t.Helper()
	waitReadyzIs(t, a.addr, 200, a.logs)
}
