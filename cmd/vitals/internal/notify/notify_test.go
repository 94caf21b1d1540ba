package notify

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/health/healthtest"
	"github.com/vitals-dev/vitals/internal/testenv"
)

// guard bounds the waits of these tests on real processes and sockets; it
// is no measurement.
const guard = 20 * time.Second

// listening is a Receiver listening in a directory of the test's, with its
// logs and the names of the checks it wakes.
type listening struct {
	*Receiver
	logs  *vitalstest.Buffer
	wakes chan string
	ctx   context.Context
}

// newReceiver makes a Receiver of o with the checks add adds, and makes its
// socket; start starts it. Both are undone when the test ends.
func newReceiver(t *testing.T, o Options, add func(*Receiver)) *listening {
	t.Helper()
	l := &listening{logs: &vitalstest.Buffer{}, wakes: make(chan string, 100)}
	o.Logger, o.Dir = l.logs.Logger(), vitalstest.ShortDir(t)
	l.Receiver = New(o)
	add(l.Receiver)
	if err := l.Listen(); err != nil {
		t.Fatal(err)
	}
	var cancel context.CancelFunc
	l.ctx, cancel = context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		if err := l.Close(); err != nil {
			t.Error(err)
		}
	})
	return l
}

// start starts reading; a test may call it late, once messages wait.
func (l *listening) start() { l.Start(l.ctx, func(name string) { l.wakes <- name }) }

// woken waits for the Receiver to wake the check named name.
func (l *listening) woken(t *testing.T, name string) {
	t.Helper()
	timeout := time.After(guard)
	for {
		select {
		case got := <-l.wakes:
			if got == name {
				return
			}
		case <-timeout:
			t.Fatalf("%s was not woken within %v; logs:\n%s", name, guard, l.logs)
		}
	}
}

// logged waits for the Receiver to log a line with s.
func (l *listening) logged(t *testing.T, s string) {
	t.Helper()
	for deadline := time.Now().Add(guard); !strings.Contains(l.logs.String(), s); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no log line with %q within %v; logs:\n%s", s, guard, l.logs)
		}
	}
}

// taken waits until the Receiver has taken every datagram from its socket:
// none is left to peek at.
func (l *listening) taken(t *testing.T) {
	t.Helper()
	raw, err := l.conn.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(guard); ; time.Sleep(5 * time.Millisecond) {
		var peek error
		raw.Control(func(fd uintptr) {
			_, _, peek = syscall.Recvfrom(int(fd), make([]byte, 1), syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		})
		if peek == syscall.EAGAIN {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a datagram still waits after %v", guard)
		}
	}
}

// answer is c's answer now, as TestJudge spells it.
func answer(c *Check) string {
	o, err := c.Measure(context.Background())
	switch {
	case errors.Is(err, health.ErrUndecided):
		return "undecided: " + err.Error()
	case err != nil:
		return "fail: " + err.Error()
	}
	return "pass: " + o.Message
}

// client is the sd_notify client of testdata, a Python program's own.
func client(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		testenv.Missing(t, "no python3, the sd_notify client of these tests: %v", err)
	}
	path, err := filepath.Abs("testdata/sdnotify.py")
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// workload starts sh -c script in a process group of its own and in a
// directory of its own, as the supervisor starts a run, told where to
// notify l; it is killed when the test ends.
func workload(t *testing.T, l *listening, script string) (pid int, dir string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = append(os.Environ(), SocketEnv+"="+l.path)
	cmd.Dir = t.TempDir()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	return cmd.Process.Pid, cmd.Dir
}

// waitFile waits for the workload to make path.
func waitFile(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(guard); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s was not made within %v", path, guard)
		}
	}
}

// sendFromHere sends datagram to l's socket from this test's process.
func sendFromHere(t *testing.T, l *listening, datagram string) {
	t.Helper()
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: l.path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(datagram)); err != nil {
		t.Fatal(err)
	}
}

func TestTheSocketIsOpenToAnyUserInADirectoryNoneListsAndGoesWithClose(t *testing.T) {
	r := New(Options{Dir: vitalstest.ShortDir(t)})
	r.Check("alive", 10*time.Second)
	r.Check("quick", 1500*time.Millisecond)
	r.Check("up", 0)
	if err := r.Listen(); err != nil {
		t.Fatal(err)
	}
	// A workload that drops its privileges reaches the socket; the
	// credentials decide whose word counts.
	fi, err := os.Stat(filepath.Dir(r.path))
	if err != nil || fi.Mode().Perm() != 0o711 {
		t.Fatalf("the socket's directory: %v, %v; want mode 0711", fi.Mode(), err)
	}
	if fi, err := os.Stat(r.path); err != nil || fi.Mode().Perm() != 0o666 {
		t.Fatalf("the socket: %v, %v; want mode 0666", fi.Mode(), err)
	}
	if env := r.Env(); len(env) != 2 || env[SocketEnv] != r.path || env[WatchdogEnv] != "1500000" {
		t.Fatalf("the workload's environment: %v; want the socket and the shortest watchdog in microseconds", env)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(r.path)); !os.IsNotExist(err) {
		t.Fatalf("the socket's directory is still there: %v", err)
	}
}

func TestOnlyTheWorkloadsProcessesAreTakenAtTheirWord(t *testing.T) {
	py := client(t)
	var up *Check
	l := newReceiver(t, Options{}, func(r *Receiver) { up = r.Check("up", 0) })
	l.start()
	l.Starting(0, nil)
	// The workload is a shell; its child, the client, says it is ready
	// once the test says go.
	main, dir := workload(t, l, "while [ ! -e go ]; do sleep 0.01; done; python3 "+py+" --barrier READY=1 'STATUS=up and running' && exec sleep 60")
	l.Started(0, main)
	if got := answer(up); !strings.HasPrefix(got, "fail: no READY=1 since the workload started") {
		t.Fatalf("before a word: %s", got)
	}
	// The test's own process, and a client it starts, are no process of
	// the workload: ignored, and said so.
	sendFromHere(t, l, "READY=1")
	l.logged(t, "its sender is no process of the workload")
	outsider := exec.Command("python3", py, "--barrier", "READY=1", "STATUS=an outsider")
	outsider.Env = append(os.Environ(), SocketEnv+"="+l.path)
	if out, err := outsider.CombinedOutput(); err != nil {
		t.Fatalf("the outside client: %v: %s", err, out)
	}
	if got := answer(up); !strings.HasPrefix(got, "fail: no READY=1") {
		t.Fatalf("after the outsiders' READY=1: %s", got)
	}
	os.WriteFile(filepath.Join(dir, "go"), nil, 0o600)
	l.woken(t, "up")
	if got := answer(up); got != "pass: up and running" {
		t.Fatalf("after the workload's READY=1: %s", got)
	}
}

// A sender is told a process of the workload by its pid, which the kernel
// vouches for, and its parents: a sender that has exited, and been reaped,
// before vitals reads its message cannot be told, and is not taken at its
// word. sd_notify_barrier(3) is the protocol's answer, which systemd-notify
// uses: the sender waits until vitals has read its message.
func TestASenderGoneBeforeItsMessageIsReadIsIgnoredAndOneThatWaitsOnTheBarrierIsNot(t *testing.T) {
	py := client(t)
	var up *Check
	l := newReceiver(t, Options{}, func(r *Receiver) { up = r.Check("up", 0) })
	l.Starting(0, nil)
	// Nothing reads yet. The first client sends and exits, and the shell
	// reaps it before it makes gone; the second waits on the barrier.
	main, dir := workload(t, l, "python3 "+py+" READY=1 'STATUS=said and gone' && touch gone && "+
		"python3 "+py+" --barrier --sent waiting READY=1 'STATUS=said and waited' && touch done && exec sleep 60")
	l.Started(0, main)
	waitFile(t, filepath.Join(dir, "gone"))
	waitFile(t, filepath.Join(dir, "waiting"))
	l.start()
	l.logged(t, "it exited before vitals read it")
	l.woken(t, "up")
	if got := answer(up); got != "pass: said and waited" {
		t.Fatalf("after both: %s", got)
	}
	waitFile(t, filepath.Join(dir, "done")) // the barrier ended: the client did not time out
}

func TestSystemdNotifyIsHeard(t *testing.T) {
	if _, err := exec.LookPath("systemd-notify"); err != nil {
		testenv.Missing(t, "no systemd-notify (Debian's systemd): %v", err)
	}
	var up *Check
	l := newReceiver(t, Options{}, func(r *Receiver) { up = r.Check("up", 0) })
	l.start()
	l.Starting(0, nil)
	// As root it says it is its parent, the shell (a privileged sender may
	// claim another pid); as another user, itself, and it waits on the
	// barrier. Either is a process of the workload.
	main, dir := workload(t, l, "systemd-notify --ready --status='heard from systemd-notify' && touch done && exec sleep 60")
	l.Started(0, main)
	l.woken(t, "up")
	if got := answer(up); got != "pass: heard from systemd-notify" {
		t.Fatalf("after systemd-notify: %s", got)
	}
	waitFile(t, filepath.Join(dir, "done"))
}

func TestAWatchdogFailsTheMomentItRunsOut(t *testing.T) {
	clock := healthtest.NewClock(start)
	var alive, up *Check
	l := newReceiver(t, Options{Clock: clock}, func(r *Receiver) {
		alive, up = r.Check("alive", 10*time.Second), r.Check("up", 0)
	})
	l.start()
	// The workload is this test's process: its messages are the
	// workload's.
	l.Starting(0, nil)
	l.Started(0, os.Getpid())
	advance := func(d time.Duration) {
		t.Helper()
		if err := clock.WaitPending(l.ctx, 1); err != nil { // the watchdog's timer
			t.Fatal(err)
		}
		clock.Advance(d)
	}
	advance(10 * time.Second)
	l.woken(t, "alive")
	if got := answer(alive); got != "fail: no WATCHDOG=1 or READY=1 since the workload started 10s ago (watchdog 10s)" {
		t.Fatalf("at the watchdog: %s", got)
	}
	sendFromHere(t, l, "WATCHDOG=1\nSTATUS=working")
	l.woken(t, "alive")
	if got := answer(alive); got != "pass: working" {
		t.Fatalf("after WATCHDOG=1: %s", got)
	}
	advance(10 * time.Second)
	l.woken(t, "alive")
	if got := answer(alive); got != "fail: no WATCHDOG=1 or READY=1 for 10s (watchdog 10s); status: working" {
		t.Fatalf("10s after WATCHDOG=1: %s", got)
	}
	sendFromHere(t, l, "WATCHDOG=1")
	l.woken(t, "alive")
	sendFromHere(t, l, "WATCHDOG=trigger")
	l.woken(t, "alive")
	if got := answer(alive); got != "fail: the workload said WATCHDOG=trigger; status: working" {
		t.Fatalf("after WATCHDOG=trigger: %s", got)
	}
	sendFromHere(t, l, "READY=1\nSTATUS=serving")
	l.woken(t, "up")
	if a, u := answer(alive), answer(up); a != "pass: serving" || u != "pass: serving" {
		t.Fatalf("after READY=1: alive %s, up %s", a, u)
	}
	sendFromHere(t, l, "STOPPING=1\nSTATUS=bye")
	l.woken(t, "up")
	clock.Advance(time.Hour)
	if a, u := answer(alive), answer(up); a != "pass: bye" || u != "fail: the workload said STOPPING=1; status: bye" {
		t.Fatalf("after STOPPING=1: alive %s, up %s", a, u)
	}
}

func TestARestartForgetsWhatTheRunBeforeSaid(t *testing.T) {
	var up *Check
	l := newReceiver(t, Options{}, func(r *Receiver) { up = r.Check("up", 0) })
	l.start()
	l.Starting(0, nil)
	l.Started(0, os.Getpid())
	sendFromHere(t, l, "READY=1")
	l.woken(t, "up")
	l.Starting(1, nil)
	if got := answer(up); got != "fail: the workload has not started" {
		t.Fatalf("as the next run starts: %s", got)
	}
	next, _ := workload(t, l, "exec sleep 60")
	l.Started(1, next)
	if got := answer(up); !strings.HasPrefix(got, "fail: no READY=1 since the workload started") {
		t.Fatalf("once the next run started: %s", got)
	}
	// The run before's process is no process of this one.
	sendFromHere(t, l, "READY=1")
	l.logged(t, "its sender is no process of the workload")
	if got := answer(up); !strings.HasPrefix(got, "fail: no READY=1") {
		t.Fatalf("after the run before's READY=1: %s", got)
	}
}

func TestAMessageReadAsARunStartsWaitsForItsPid(t *testing.T) {
	var up *Check
	l := newReceiver(t, Options{}, func(r *Receiver) { up = r.Check("up", 0) })
	l.start()
	l.Starting(0, nil)
	// The run said READY=1 before the supervisor told its pid, and the
	// Receiver has read it: it waits for the pid to tell whose it is.
	sendFromHere(t, l, "READY=1")
	l.taken(t)
	l.Started(0, os.Getpid())
	l.woken(t, "up")
	if got := answer(up); got != "pass: the workload said it is ready" {
		t.Fatalf("got %s", got)
	}
}

func TestANewlineOnTheNotificationPipeSaysReadyAndEndsItsReading(t *testing.T) {
	var up *Check
	l := newReceiver(t, Options{FD: 3, Clock: healthtest.NewClock(start)}, func(r *Receiver) { up = r.Check("up", 0) })
	l.start()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	l.Starting(0, r)
	l.Started(0, os.Getpid())
	w.WriteString("almost")
	if got := answer(up); got != "fail: no READY=1 or a newline on fd 3 since the workload started 0s ago" {
		t.Fatalf("before the newline: %s", got)
	}
	w.WriteString(" there\n")
	l.woken(t, "up")
	if got := answer(up); got != "pass: the workload said it is ready" {
		t.Fatalf("after the newline: %s", got)
	}
	// Nothing reads the pipe any more, as s6-supervise does not.
	for deadline := time.Now().Add(guard); ; time.Sleep(5 * time.Millisecond) {
		if _, err := w.WriteString("\n"); errors.Is(err, syscall.EPIPE) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pipe is still read %v after the newline", guard)
		}
	}
	// The next run has its own pipe; one it closes without a newline says
	// nothing.
	r, w, err = os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	l.Starting(1, r)
	l.Started(1, os.Getpid())
	w.WriteString("no newline")
	w.Close()
	sendFromHere(t, l, "STATUS=still starting")
	for deadline := time.Now().Add(guard); answer(up) != "fail: no READY=1 or a newline on fd 3 since the workload started 0s ago; status: still starting"; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the next run: %s", answer(up))
		}
	}
}

func TestAReloadFailsTheCheckFromRELOADING1UntilREADY1(t *testing.T) {
	clock := healthtest.NewClock(start)
	var alive, up *Check
	l := newReceiver(t, Options{Clock: clock}, func(r *Receiver) {
		alive, up = r.Check("alive", 10*time.Second), r.Check("up", 0)
	})
	l.start()
	l.Starting(0, nil)
	l.Started(0, os.Getpid())
	sendFromHere(t, l, "READY=1\nSTATUS=serving")
	l.woken(t, "up")
	// As systemd's Type=notify-reload has it: RELOADING=1, with the
	// moment it began, then READY=1 once done.
	sendFromHere(t, l, "RELOADING=1\nMONOTONIC_USEC=81234567\nSTATUS=reloading rules")
	l.woken(t, "up")
	l.logged(t, "the workload is reloading")
	clock.Advance(2 * time.Second)
	if a, u := answer(alive), answer(up); a != "pass: reloading rules" ||
		u != "fail: reloading since 03:04:05, 2s ago (RELOADING=1): waiting for READY=1; status: reloading rules" {
		t.Fatalf("while reloading: alive %s, up %s", a, u)
	}
	sendFromHere(t, l, "READY=1\nSTATUS=serving the new rules")
	l.woken(t, "up")
	l.logged(t, "the workload has reloaded: it is ready")
	if got := answer(up); got != "pass: serving the new rules" {
		t.Fatalf("after READY=1: %s", got)
	}
	// A workload that restarts while reloading starts over: the next run
	// waits for its first READY=1.
	sendFromHere(t, l, "RELOADING=1")
	l.woken(t, "up")
	l.Starting(1, nil)
	l.Started(1, os.Getpid())
	if got := answer(up); got != "fail: no READY=1 since the workload started 0s ago" {
		t.Fatalf("the next run: %s", got)
	}
}

func TestSystemdNotifysReloadIsHeard(t *testing.T) {
	if _, err := exec.LookPath("systemd-notify"); err != nil {
		testenv.Missing(t, "no systemd-notify (Debian's systemd): %v", err)
	}
	var up *Check
	l := newReceiver(t, Options{}, func(r *Receiver) { up = r.Check("up", 0) })
	l.start()
	l.Starting(0, nil)
	// systemd-notify --reloading (systemd 253) sends these two; an older
	// one sends them as they are written.
	main, dir := workload(t, l, "systemd-notify --ready && touch ready && while [ ! -e reload ]; do sleep 0.01; done && "+
		"systemd-notify RELOADING=1 MONOTONIC_USEC=81234567 'STATUS=reloading rules' && touch reloading && while [ ! -e done ]; do sleep 0.01; done && "+
		"systemd-notify --ready --status='serving the new rules' && exec sleep 60")
	l.Started(0, main)
	waitFile(t, filepath.Join(dir, "ready"))
	l.woken(t, "up")
	os.WriteFile(filepath.Join(dir, "reload"), nil, 0o600)
	waitFile(t, filepath.Join(dir, "reloading"))
	l.woken(t, "up")
	if got := answer(up); !strings.HasPrefix(got, "fail: reloading since ") || !strings.HasSuffix(got, "(RELOADING=1): waiting for READY=1; status: reloading rules") {
		t.Fatalf("while reloading: %s", got)
	}
	os.WriteFile(filepath.Join(dir, "done"), nil, 0o600)
	l.woken(t, "up")
	if got := answer(up); got != "pass: serving the new rules" {
		t.Fatalf("after the reload: %s", got)
	}
}

// A startup check that waits for READY=1 counts failures toward its
// threshold; while the time the workload asked for with
// EXTEND_TIMEOUT_USEC= stands, its runs count for nothing, and at the
// moment that time ends it runs, and fails.
func TestAnExtendedStartStaysPendingUntilTheExtensionEndsAndFailsThen(t *testing.T) {
	clock := healthtest.NewClock(start)
	var started *Check
	l := newReceiver(t, Options{Clock: clock}, func(r *Receiver) { started = r.Check("started", 0) })
	m := health.New(health.WithClock(clock), health.WithLogger(l.logs.Logger()))
	if err := m.Add(health.Check{Name: "started", Level: health.Startup, Checker: started, Period: 10 * time.Second, FailureThreshold: 3}); err != nil {
		t.Fatal(err)
	}
	// The test runs the check each period, and when the Receiver wakes it,
	// as the agent does.
	run := func(when string) health.CheckState {
		t.Helper()
		if _, err := m.RunNow(l.ctx, "started"); err != nil {
			t.Fatal(err)
		}
		s, _ := m.CheckState("started")
		if s.Status != health.Pending {
			t.Fatalf("%s: %v since %v, %d failures; want pending", when, s.Status, s.Since.Sub(start), s.ConsecutiveFailures)
		}
		return s
	}
	l.start()
	l.Starting(0, nil)
	l.Started(0, os.Getpid())
	run("at the start")
	clock.Advance(10 * time.Second)
	run("one period on") // two failures of three
	clock.Advance(5 * time.Second)
	sendFromHere(t, l, "EXTEND_TIMEOUT_USEC=30000000\nSTATUS=migrating the database")
	l.woken(t, "started")
	l.logged(t, "the workload asked for more time to start up")
	run("at the extension")
	for _, at := range []time.Duration{20 * time.Second, 30 * time.Second, 40 * time.Second} {
		clock.Advance(start.Add(at).Sub(clock.Now()))
		s := run(fmt.Sprint(at, " after the start, within the extension"))
		if last, _ := s.Last(); !last.Undecided || s.ConsecutiveFailures != 2 {
			t.Fatalf("%v after the start: %+v, %d failures; want undecided, and the two failures before", at, last, s.ConsecutiveFailures)
		}
	}
	// The Receiver wakes the check at the extension's end, 45s after the
	// start, not at its next period.
	waitTimer(t, l, clock, start.Add(45*time.Second))
	clock.Advance(5 * time.Second)
	l.woken(t, "started")
	if _, err := m.RunNow(l.ctx, "started"); err != nil {
		t.Fatal(err)
	}
	s, _ := m.CheckState("started")
	last, _ := s.Last()
	if s.Status != health.Fail || !s.Since.Equal(start.Add(45*time.Second)) ||
		last.Output != "no READY=1 since the workload started 45s ago, nor in the time it asked for, until 03:04:50 (EXTEND_TIMEOUT_USEC=); status: migrating the database" {
		t.Fatalf("at the extension's end: %v since %v: %s", s.Status, s.Since.Sub(start), last.Output)
	}
}

func TestReadyWithinTheExtensionPassesAndALaterExtensionMovesTheWakeUp(t *testing.T) {
	clock := healthtest.NewClock(start)
	var started *Check
	l := newReceiver(t, Options{Clock: clock}, func(r *Receiver) { started = r.Check("started", 0) })
	l.start()
	l.Starting(0, nil)
	l.Started(0, os.Getpid())
	sendFromHere(t, l, "EXTEND_TIMEOUT_USEC=10000000")
	l.woken(t, "started")
	waitTimer(t, l, clock, start.Add(10*time.Second))
	// A daemon that works long asks again before its time ends, from that
	// moment; the check stays undecided, and is woken at the new end.
	clock.Advance(8 * time.Second)
	sendFromHere(t, l, "EXTEND_TIMEOUT_USEC=10000000\nSTATUS=still migrating")
	waitTimer(t, l, clock, start.Add(18*time.Second))
	if got := answer(started); got != "undecided: no READY=1 since the workload started 8s ago; it asked for time until 03:04:23, 10s from now (EXTEND_TIMEOUT_USEC=); status: still migrating" {
		t.Fatalf("after the second extension: %s", got)
	}
	clock.Advance(5 * time.Second)
	sendFromHere(t, l, "READY=1\nSTATUS=serving")
	l.woken(t, "started")
	if got := answer(started); got != "pass: serving" {
		t.Fatalf("after READY=1: %s", got)
	}
	// Once ready, nothing changes with time: no wake-up waits.
	for deadline := time.Now().Add(guard); clock.Pending() != 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("a wake-up still waits once ready: %v", clock.Deadlines())
		}
	}
}

func TestAnExtensionThatIsNoNumberIsIgnoredWithAWarningAndTheRestOfItsMessageIsNot(t *testing.T) {
	clock := healthtest.NewClock(start)
	var started *Check
	l := newReceiver(t, Options{Clock: clock}, func(r *Receiver) { started = r.Check("started", 0) })
	l.start()
	l.Starting(0, nil)
	l.Started(0, os.Getpid())
	sendFromHere(t, l, "EXTEND_TIMEOUT_USEC=5s\nSTATUS=migrating")
	l.logged(t, `msg="notify: an assignment is ignored, not the rest of its message" pid=`)
	l.logged(t, `reason="EXTEND_TIMEOUT_USEC=5s is no whole number of microseconds"`)
	l.taken(t)
	for deadline := time.Now().Add(guard); answer(started) != "fail: no READY=1 since the workload started 0s ago; status: migrating"; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after the message: %s", answer(started))
		}
	}
	if n := clock.Pending(); n != 0 {
		t.Fatalf("%d wake-ups wait for an extension that was not", n)
	}
}

// waitTimer waits until the Receiver's loop waits for at, the next moment
// an answer changes with time alone.
func waitTimer(t *testing.T, l *listening, clock *healthtest.Clock, at time.Time) {
	t.Helper()
	for deadline := time.Now().Add(guard); ; time.Sleep(5 * time.Millisecond) {
		if d := clock.Deadlines(); len(d) == 1 && d[0].Equal(at) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Receiver waits for %v, not for %v; logs:\n%s", clock.Deadlines(), at, l.logs)
		}
	}
}
