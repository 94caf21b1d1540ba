//go:build linux

package probe_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/internal/testenv"
	"github.com/vitals-dev/vitals/probe"
)

// execHelperEnv makes this test binary, run by an exec probe, act as the
// command its arguments name instead of running tests (see init), so that the
// tests need no program but themselves.
const execHelperEnv = "VITALS_EXEC_HELPER"

func init() {
	if os.Getenv(execHelperEnv) == "" {
		return
	}
	os.Exit(execHelper(os.Args[1:]))
}

// execHelper is the command: args[0] says what it does, and the rest are its
// arguments. It returns the exit status.
func execHelper(args []string) int {
	sleepForever := func() int {
		for {
			time.Sleep(time.Hour)
		}
	}
	switch args[0] {
	case "exit": // exit CODE [STDOUT [STDERR]]
		if len(args) > 2 {
			fmt.Fprint(os.Stdout, args[2])
		}
		if len(args) > 3 {
			fmt.Fprint(os.Stderr, args[3])
		}
		code, _ := strconv.Atoi(args[1])
		return code
	case "args": // one argument a line, as received
		fmt.Println(strings.Join(args[1:], "\n"))
	case "getenv": // NAME...: each value on a line
		for _, name := range args[1:] {
			fmt.Println(os.Getenv(name))
		}
	case "pwd":
		dir, err := os.Getwd()
		if err != nil {
			fmt.Println(err)
			return 1
		}
		fmt.Println(dir)
	case "sigterm-self":
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
		return sleepForever()
	case "flood": // BYTES: written to stdout and stderr in turn; exits 1 if a write fails
		n, _ := strconv.Atoi(args[1])
		chunk := bytes.Repeat([]byte("x"), 4<<10)
		for i := 0; i < n; i += len(chunk) {
			w := os.Stdout
			if i/len(chunk)%2 == 1 {
				w = os.Stderr
			}
			if _, err := w.Write(chunk[:min(len(chunk), n-i)]); err != nil {
				return 1
			}
		}
	case "fork-and-sleep", "fork-and-exit": // PIDFILE: start a grandchild holding stdout
		grandchild := exec.Command(os.Args[0], "ignore-sigterm", args[1])
		grandchild.Stdout, grandchild.Stderr = os.Stdout, os.Stderr
		if err := grandchild.Start(); err != nil {
			fmt.Println(err)
			return 1
		}
		pids := fmt.Sprintf("%d %d", os.Getpid(), grandchild.Process.Pid)
		if err := os.WriteFile(args[1]+".tmp", []byte(pids), 0o600); err != nil {
			fmt.Println(err)
			return 1
		}
		if err := os.Rename(args[1]+".tmp", args[1]); err != nil {
			fmt.Println(err)
			return 1
		}
		fmt.Println("started a grandchild")
		if args[0] == "fork-and-sleep" {
			return sleepForever()
		}
	case "ignore-sigterm": // PIDFILE, only so that the marker is in its command line
		signal.Ignore(syscall.SIGTERM)
		return sleepForever()
	case "subreaper": // RUNS: become a subreaper, run an exec probe whose command leaves a child, list what is left
		return subreaper(args[1])
	default:
		fmt.Fprintf(os.Stderr, "exec helper: unknown %q\n", args[0])
		return 2
	}
	return 0
}

// subreaper makes this process a subreaper, as a container's init is in
// effect, runs an exec probe of a command that exits leaving a child in its
// group, runs times, and prints how many children this process has left
// (zombies or not) and which, as PID:STATE.
func subreaper(runs string) int {
	const prSetChildSubreaper = 36 // PR_SET_CHILD_SUBREAPER, from linux/prctl.h
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		fmt.Println("prctl:", errno)
		return 1
	}
	p, err := probe.Exec(probe.ExecSpec{Command: []string{"sh", "-c", "sleep 100 & exit 1"}})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	n, _ := strconv.Atoi(runs)
	for range n {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := p.Measure(ctx)
		cancel()
		if err == nil || err.Error() != "exited with status 1" {
			fmt.Println("run:", err)
			return 1
		}
	}
	var left []string
	for _, pid := range procPids() {
		if state, ppid, err := procStat(pid); err == nil && ppid == os.Getpid() {
			left = append(left, fmt.Sprintf("%d:%c", pid, state))
		}
	}
	fmt.Println(len(left), "children left", left)
	return 0
}

// helperSpec is an exec spec that runs this test binary as the helper command
// args name.
func helperSpec(t *testing.T, args ...string) probe.ExecSpec {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// GORACE: under the race detector, a process exiting with status 0 would
	// otherwise sleep 1s first.
	env := []string{execHelperEnv + "=1", "GORACE=atexit_sleep_ms=0"}
	return probe.ExecSpec{Command: append([]string{bin}, args...), Env: env}
}

// runExec builds an exec probe and runs it once, as a Monitor would.
func runExec(t *testing.T, spec probe.ExecSpec) health.Result {
	t.Helper()
	p, err := probe.Exec(spec)
	if err != nil {
		t.Fatalf("Exec(%+v): %v", spec, err)
	}
	return health.Run(context.Background(), p, 10*time.Second)
}

// commandLine is how the messages quote a command: argv joined by spaces.
func commandLine(spec probe.ExecSpec) string { return strings.Join(spec.Command, " ") }

func TestExecPassesOnExitZeroWithTheOutputAsTheMessage(t *testing.T) {
	r := runExec(t, helperSpec(t, "exit", "0", "  peer1.conf is in place\n"))
	if !r.OK || r.Output != "peer1.conf is in place" || r.ObservedValue != 0 || r.ObservedUnit != "exit code" {
		t.Fatalf("result %+v, want a pass with the trimmed output and exit status 0", r)
	}
	if r := runExec(t, helperSpec(t, "exit", "0")); !r.OK || r.Output != "" {
		t.Fatalf("silent command: %+v, want a pass with no output", r)
	}
}

func TestExecFailsWithTheCommandsOwnOutputAndItsStatus(t *testing.T) {
	r := runExec(t, helperSpec(t, "exit", "3", "checking peer1\n",
		"cat: can't open '/config/peer1/peer1.conf': No such file or directory\n"))
	want := "checking peer1\ncat: can't open '/config/peer1/peer1.conf': No such file or directory"
	if r.OK || r.Output != want || r.ObservedValue != 3 {
		t.Fatalf("result %+v, want a failure with stdout and stderr together and status 3", r)
	}
}

func TestExecWithoutOutputSaysTheExitStatus(t *testing.T) {
	r := runExec(t, helperSpec(t, "exit", "3"))
	want := "exited with status 3"
	if r.OK || r.Output != want || r.ObservedValue != 3 {
		t.Fatalf("result %+v, want %q", r, want)
	}
}

func TestExecKilledByASignalNamesTheSignal(t *testing.T) {
	r := runExec(t, helperSpec(t, "sigterm-self"))
	want := "killed by signal SIGTERM"
	if r.OK || r.Output != want || r.ObservedValue != 128+15 {
		t.Fatalf("result %+v, want %q and 143 as a shell reports it", r, want)
	}
}

func TestExecRunsArgvWithoutAShell(t *testing.T) {
	r := runExec(t, helperSpec(t, "args", "$HOME", "a b", "*", "; exit 1"))
	if want := "$HOME\na b\n*\n; exit 1"; !r.OK || r.Output != want {
		t.Fatalf("result %+v, want the arguments untouched: %q", r, want)
	}
}

func TestExecFindsACommandInPathWhenBuilt(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		testenv.Missing(t, "no sh in $PATH")
	}
	p, err := probe.Exec(probe.ExecSpec{Command: []string{"sh", "-c", "echo found as $0"}})
	if err != nil {
		t.Fatal(err)
	}
	// $PATH changes after the build do not move the probe: it runs what was found.
	t.Setenv("PATH", t.TempDir())
	if r := health.Run(context.Background(), p, 10*time.Second); !r.OK || r.Output != "found as sh" {
		t.Fatalf("result %+v, want %s run with its name as given", r, sh)
	}
}

func TestExecAddsEnvToTheInheritedEnvironment(t *testing.T) {
	t.Setenv("VITALS_PROBE_GREETING", "from the parent")
	t.Setenv("VITALS_PROBE_INHERITED", "inherited")
	spec := helperSpec(t, "getenv", "VITALS_PROBE_GREETING", "VITALS_PROBE_INHERITED")
	spec.Env = append(spec.Env, "VITALS_PROBE_GREETING=hello there")
	r := runExec(t, spec)
	if want := "hello there\ninherited"; !r.OK || r.Output != want {
		t.Fatalf("result %+v, want %q: Env wins over the parent's, the rest is inherited", r, want)
	}
}

func TestExecRunsTheCommandInDir(t *testing.T) {
	spec := helperSpec(t, "pwd")
	spec.Dir = t.TempDir()
	r := runExec(t, spec)
	want, err := filepath.EvalSymlinks(spec.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := filepath.EvalSymlinks(r.Output); !r.OK || got != want {
		t.Fatalf("result %+v, want the working directory %s", r, want)
	}
}

func TestExecKeepsTheFirst10KiBOfALargeOutputWithoutBlockingTheCommand(t *testing.T) {
	p, err := probe.Exec(helperSpec(t, "flood", strconv.Itoa(1<<20)))
	if err != nil {
		t.Fatal(err)
	}
	// Measure, not health.Run, whose results keep only 1 KiB of output. The
	// command exits 0 only if all of its 1 MiB was written: had it blocked
	// on a full pipe, it would have met the deadline instead.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	obs, err := p.Measure(ctx)
	if err != nil {
		t.Fatalf("Measure: %v, want a pass", err)
	}
	if obs.Message != strings.Repeat("x", 10<<10) || obs.Value != 0 {
		t.Fatalf("message of %d bytes, value %v; want the first 10 KiB and status 0", len(obs.Message), obs.Value)
	}
}

func TestExecFailsToStartAMissingProgramGivenByPath(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "check-peers")
	r := runExec(t, probe.ExecSpec{Command: []string{missing}})
	want := fmt.Sprintf("fork/exec %s: no such file or directory", missing)
	if r.OK || r.Output != want {
		t.Fatalf("result %+v, want %q", r, want)
	}
}

func TestExecRejectsBadSpecsWithTheirReasons(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "peer1.conf")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		spec probe.ExecSpec
		want string
	}{
		{probe.ExecSpec{}, `exec probe: command is required`},
		{probe.ExecSpec{Command: []string{"", "-c", "true"}}, `exec probe: the command's name (its first word) is empty`},
		{probe.ExecSpec{Command: []string{"vitals-no-such-command"}}, `exec probe: command "vitals-no-such-command" not found in $PATH`},
		{probe.ExecSpec{Command: []string{bin}, Env: []string{"GREETING"}}, `exec probe: env entry "GREETING" is not KEY=VALUE`},
		{probe.ExecSpec{Command: []string{bin}, Env: []string{"A=1", "=hello"}}, `exec probe: env entry "=hello" is not KEY=VALUE`},
		{probe.ExecSpec{Command: []string{bin}, Dir: filepath.Join(dir, "missing")},
			fmt.Sprintf(`exec probe: dir %q does not exist`, filepath.Join(dir, "missing"))},
		{probe.ExecSpec{Command: []string{bin}, Dir: file}, fmt.Sprintf(`exec probe: dir %q is not a directory`, file)},
	}
	for _, tt := range tests {
		p, err := probe.Exec(tt.spec)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Exec(%+v) = %v, %v; want the error %q", tt.spec, p, err, tt.want)
		}
	}
}

func TestExecRejectsACommandFoundOnlyThroughARelativePathEntry(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "check-peers"), []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	t.Setenv("PATH", ".")
	_, err := probe.Exec(probe.ExecSpec{Command: []string{"check-peers"}})
	want := `exec probe: command "check-peers" is found only through a relative directory in $PATH (as check-peers); give its absolute path`
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
}

func TestExecSaysWhatItRunsQuotingArgsWithSpaces(t *testing.T) {
	p, err := probe.Exec(probe.ExecSpec{Command: []string{"/bin/sh", "-c", "test -f /config/peer1/peer1.conf", ""}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `exec /bin/sh -c "test -f /config/peer1/peer1.conf" ""`; p.String() != want || p.Kind() != "exec" {
		t.Fatalf("String() %q, Kind() %q; want %q and exec", p.String(), p.Kind(), want)
	}
}

func TestExecKillsWhatTheCommandLeftRunningWhenItExits(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	t.Cleanup(func() { killMarked(pidfile) })
	start := time.Now()
	r := runExec(t, helperSpec(t, "fork-and-exit", pidfile))
	// The grandchild holds the output open: the run must not wait for it.
	if !r.OK || r.Output != "started a grandchild" || time.Since(start) > 5*time.Second {
		t.Fatalf("result %+v after %v, want a prompt pass", r, time.Since(start))
	}
	assertGroupGone(t, pidfile)
}

func TestExecCancelledWithoutADeadlineSaysSoAndKillsTheGroup(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	t.Cleanup(func() { killMarked(pidfile) })
	p, err := probe.Exec(helperSpec(t, "fork-and-sleep", pidfile))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	waitFor(t, pidfile, cancel) // cancel once both processes run
	_, err = p.Measure(ctx)
	if want := "cancelled"; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
	assertGroupGone(t, pidfile)
}

// The test: at the deadline the probe returns, says it timed out in
// the kubelet's words, and leaves nothing behind, though the command's child
// ignores SIGTERM and holds the output open.
func TestExecTimesOutAtTheDeadlineAndKillsTheWholeProcessGroup(t *testing.T) {
	const timeout = 300 * time.Millisecond
	const slack = 100 * time.Millisecond
	for attempt := 1; attempt <= 3; attempt++ {
		pidfile := filepath.Join(t.TempDir(), "pids")
		t.Cleanup(func() { killMarked(pidfile) })
		spec := helperSpec(t, "fork-and-sleep", pidfile)
		p, err := probe.Exec(spec)
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("command %q timed out after 300ms", commandLine(spec))

		done := make(chan health.Result, 1)
		start := time.Now()
		go func() { done <- health.Run(context.Background(), p, timeout) }()
		var r health.Result
		select {
		case r = <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("attempt %d: no result 5s after a %v timeout", attempt, timeout)
		}
		took := time.Since(start)
		if r.OK {
			t.Fatalf("attempt %d: %+v, want a failure", attempt, r)
		}
		_, pidsErr := os.Stat(pidfile)
		assertGroupGone(t, pidfile)
		if r.Output == want && took >= timeout && took <= timeout+slack && pidsErr == nil {
			t.Logf("attempt %d: %q after %v", attempt, r.Output, took)
			return
		}
		t.Logf("attempt %d: %q after %v (pid file: %v); want %q within %v to %v",
			attempt, r.Output, took, pidsErr, want, timeout, timeout+slack)
	}
	t.Fatalf("no attempt timed out on time with the command's own words")
}

// In a container, vitals may be PID 1, or a subreaper: the processes the
// command leaves in its group become vitals's children when the command
// exits, and once killed must be reaped, or each run leaves a zombie.
func TestExecAsASubreaperLeavesNoZombieOfTheCommandsGroup(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		testenv.Missing(t, "no sh in $PATH")
	}
	cmd := exec.Command(os.Args[0], "subreaper", "3")
	cmd.Env = append(os.Environ(), execHelperEnv+"=1", "GORACE=atexit_sleep_ms=0")
	out, err := cmd.CombinedOutput()
	if want := "0 children left []\n"; err != nil || string(out) != want {
		t.Fatalf("a subreaper after 3 runs of sh -c 'sleep 100 & exit 1': %q (%v), want %q", out, err, want)
	}
}

// A process that left the command's group (setsid) and holds the output open
// must not make a run that timed out late: health.Run waits only 20ms past
// the deadline for the probe's own words.
func TestExecTimesOutOnTimeThoughAProcessThatLeftTheGroupHoldsTheOutput(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		testenv.Missing(t, "no setsid in $PATH")
	}
	const timeout, slack = 500 * time.Millisecond, 100 * time.Millisecond
	for attempt := 1; attempt <= 3; attempt++ {
		pidfile := filepath.Join(t.TempDir(), "setsid.pid")
		t.Cleanup(func() { killPidFile(t, pidfile) })
		// The CLI's case, sh -c 'setsid sleep 301 & sleep 10', with the
		// detached sleep's pid written to pidfile ($0) for the cleanup.
		script := `setsid sh -c 'echo $$ >"$0"; exec sleep 301' "$0" & sleep 10`
		spec := probe.ExecSpec{Command: []string{"sh", "-c", script, pidfile}}
		p, err := probe.Exec(spec)
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("command %q timed out after 500ms", commandLine(spec))
		start := time.Now()
		r := health.Run(context.Background(), p, timeout)
		took := time.Since(start)
		if r.Output == want && took <= timeout+slack {
			return
		}
		t.Logf("attempt %d: %q after %v; want %q within %v", attempt, r.Output, took, want, timeout+slack)
	}
	t.Fatalf("no attempt timed out on time with the command's own words")
}

// killPidFile kills the process whose pid is in pidfile, waiting up to 2s for
// the file.
func killPidFile(t *testing.T, pidfile string) {
	for end := time.Now().Add(2 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(pidfile)
		if pid, convErr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && convErr == nil {
			syscall.Kill(pid, syscall.SIGKILL)
			return
		}
		if time.Now().After(end) {
			t.Errorf("no pid in %s to kill: %v", pidfile, err)
			return
		}
	}
}

// waitFor calls then once path exists, in the background, giving up after 5s.
func waitFor(t *testing.T, path string, then func()) {
	t.Helper()
	go func() {
		defer then()
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
			if _, err := os.Stat(path); err == nil {
				return
			}
		}
	}()
}

// assertGroupGone checks that the helper's command and its grandchild, whose
// pids are in pidfile, are gone within 2s, that no process with pidfile on its
// command line is left, and that this process has no zombie child: the command
// was reaped.
func assertGroupGone(t *testing.T, pidfile string) {
	t.Helper()
	if b, err := os.ReadFile(pidfile); err != nil {
		t.Logf("no pids to follow: %v", err)
	} else {
		var child, grandchild int
		if _, err := fmt.Sscan(string(b), &child, &grandchild); err != nil {
			t.Fatalf("pid file %q: %v", b, err)
		}
		waitGone(t, grandchild, "the grandchild, which ignores SIGTERM")
		waitGone(t, child, "the command")
	}
	poll(t, "processes running with "+pidfile, func() string {
		if pids := marked(pidfile); len(pids) > 0 {
			return fmt.Sprint(pids)
		}
		return ""
	})
	poll(t, "zombie children of the test", func() string {
		if pids := zombieChildren(); len(pids) > 0 {
			return fmt.Sprint(pids)
		}
		return ""
	})
}

// waitGone waits for pid to be gone: no such process, or a zombie whose parent
// (init or a subreaper, which the grandchild was handed to) is not this test.
// A zombie child of this test is one that nobody reaped.
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	poll(t, what, func() string {
		if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			return ""
		}
		state, ppid, err := procStat(pid)
		switch {
		case err != nil:
			return "" // gone between the two looks
		case state == 'Z' && ppid != os.Getpid():
			return ""
		}
		return fmt.Sprintf("pid %d in state %c, child of %d (the test is %d)", pid, state, ppid, os.Getpid())
	})
}

// poll calls left every 10ms until it says nothing is left, and fails the
// test with what is left after 2s.
func poll(t *testing.T, what string, left func() string) {
	t.Helper()
	end := time.Now().Add(2 * time.Second)
	for {
		l := left()
		if l == "" {
			return
		}
		if time.Now().After(end) {
			t.Errorf("%s still there after 2s: %s", what, l)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// procStat reads a process's state and parent from /proc/PID/stat.
func procStat(pid int) (state byte, ppid int, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// "PID (COMM) STATE PPID ...", where COMM may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	fields := strings.Fields(string(b[i+1:]))
	if i < 0 || len(fields) < 2 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: %q", pid, b)
	}
	ppid, err = strconv.Atoi(fields[1])
	return fields[0][0], ppid, err
}

// procPids lists the processes in /proc.
func procPids() []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// zombieChildren lists this process's children that have exited and not
// been reaped.
func zombieChildren() []int {
	var zombies []int
	for _, pid := range procPids() {
		if state, ppid, err := procStat(pid); err == nil && state == 'Z' && ppid == os.Getpid() {
			zombies = append(zombies, pid)
		}
	}
	return zombies
}

// marked lists the live processes with marker among their arguments. (A
// zombie's command line is empty.)
func marked(marker string) []int {
	var found []int
	for _, pid := range procPids() {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err == nil && bytes.Contains(b, []byte(marker)) {
			found = append(found, pid)
		}
	}
	return found
}

// killMarked kills what a failed test left running.
func killMarked(marker string) {
	for _, pid := range marked(marker) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}
