//go:build unix

package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/vitals-dev/vitals/health"
)

// maxExecOutput caps what is kept of a command's output: the kubelet keeps
// 10 KiB too (maxReadLength), and the rest is read and thrown away so that
// a chatty command never blocks on a full pipe.
const maxExecOutput = 10 << 10

// drainGrace bounds how long the output is read after a command that exited
// by itself, once the rest of its process group has been killed. By then the
// pipe is at its end unless a process that left the group (setsid) holds it
// open, which must not hold the probe; the bound is long only so that the
// reader catches up with what is already in the pipe on a loaded machine. A
// command stopped because its context ended gets no grace: its output is not
// shown, and the result is due at the deadline.
const drainGrace = 100 * time.Millisecond

// Exec builds an exec probe, the kubelet's exec probe run on this machine.
// Each run starts the command in a process group of its own, with stdin from
// /dev/null and stdout and stderr together in one pipe, of which the first
// 10 KiB are kept.
//
// Exit status 0 passes, with the command's output (trimmed) as the result's
// output. Any other status fails with that output as the error, as the
// kubelet shows it ("cat: can't open '/config/peer1/peer1.conf': No such
// file or directory"), or, when the command wrote nothing, "exited with
// status 2"; a command killed by a signal fails with "killed by signal
// SIGSEGV" and its output, if any. The observed value is the exit status (an
// int), or 128 plus the signal's number, as a shell reports it. With an
// Output comparison, a command that exits 0 passes only when what it
// printed is a number that meets it, which is then the observed value: "the
// output is 93 (want < 80)".
//
// When the context ends, the whole process group is killed with SIGKILL, so
// that a child of the command that ignores SIGTERM dies too, and the run
// fails with `command "ls /ready" timed out after 1s` (the kubelet's words,
// and the time from the run's start to the deadline), or "cancelled" when
// the context was cancelled. When the command exits, what it left running in
// its group is killed as well: a check that runs every 10s must not leave a
// process behind each time. When this process is PID 1 or a subreaper, the
// processes of the group that were handed to it are reaped too, so that
// they do not pile up as zombies.
func Exec(s ExecSpec) (*Prober, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	name := s.Command[0]
	path := name
	if !strings.Contains(name, "/") {
		found, err := exec.LookPath(name)
		switch {
		case errors.Is(err, exec.ErrNotFound):
			return nil, Invalid("exec", "command %q not found in $PATH", name)
		case errors.Is(err, exec.ErrDot):
			return nil, Invalid("exec", "command %q is found only through a relative directory in $PATH (as %s); give its absolute path", name, found)
		case err != nil:
			return nil, Invalid("exec", "command %q: %w", name, err)
		}
		path = found
	}
	if s.Dir != "" {
		fi, err := os.Stat(s.Dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, Invalid("exec", "dir %q does not exist", s.Dir)
		case err != nil:
			return nil, Invalid("exec", "dir %q: %w", s.Dir, errors.Unwrap(err))
		case !fi.IsDir():
			return nil, Invalid("exec", "dir %q is not a directory", s.Dir)
		}
	}
	var want *Comparison
	if s.Output != "" {
		c, _ := ParseComparison(s.Output) // Validate read it
		want = &c
	}
	e := &execProbe{
		want: want,
		path: path,
		argv: append([]string(nil), s.Command...),
		env:  append([]string(nil), s.Env...),
		dir:  s.Dir,
		line: strings.Join(s.Command, " "),
	}
	return &Prober{kind: "exec", target: "exec " + quoteArgs(s.Command), measure: e.measure}, nil
}

// exitCodeUnit is the unit of an exec probe's observed value, the command's
// exit code (128 plus the signal's number for a command a signal killed, as
// a shell says it): the word Docker and the kubelet use for it.
const exitCodeUnit = "exit code"

type execProbe struct {
	want *Comparison // what the output must meet; nil: the exit status decides
	path string      // the program, resolved in $PATH
	argv []string    // as given, so Command[0] is the program's name for itself
	env  []string
	dir  string
	line string // argv joined by spaces, as the kubelet's messages quote it
}

func (e *execProbe) measure(ctx context.Context) (health.Observation, error) {
	start := time.Now()
	r, w, err := os.Pipe()
	if err != nil {
		return health.Observation{}, err
	}
	defer r.Close()

	cmd := exec.CommandContext(ctx, e.path)
	cmd.Args = e.argv
	if len(e.env) > 0 {
		cmd.Env = append(os.Environ(), e.env...)
	}
	cmd.Dir = e.dir
	// One *os.File for both: the child writes into the pipe itself, in the
	// order it writes, and Wait waits for the child, not for the pipe.
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cancelled := false // read after Wait, which waits for Cancel to return
	cmd.Cancel = func() error {
		// Before Wait reaps the leader: the group's id is still its pid.
		err := killGroup(cmd.Process.Pid)
		cancelled = err == nil
		return err
	}
	err = cmd.Start()
	w.Close() // the child has its copy; the pipe ends when every holder exits
	if err != nil {
		if ctx.Err() != nil {
			return health.Observation{}, e.stopped(ctx, start)
		}
		return health.Observation{}, err // Go's error names the program: "fork/exec /bin/x: …"
	}
	copied := make(chan string, 1)
	go func() { copied <- readCapped(r) }()

	waitErr := cmd.Wait()
	pgid := cmd.Process.Pid
	if !cancelled {
		// Kill what the command left in its group. Wait has reaped the leader
		// by now, and os/exec offers no moment between its exit and its
		// reaping, so the group's id is no longer held by the leader's pid: it
		// stays taken while any member lives, but were the group empty already
		// and the pids of the system to wrap around to this one in the moment
		// since, the signal would reach a new group. Cancel, above, kills
		// before the reaping.
		_ = killGroup(pgid)
	}
	reapGroup(pgid)
	output := strings.TrimSpace(drain(ctx, r, copied))

	state := cmd.ProcessState
	if state == nil {
		return health.Observation{}, waitErr
	}
	status, _ := state.Sys().(syscall.WaitStatus)
	switch {
	case status.Signaled() && cancelled:
		return health.Observation{}, e.stopped(ctx, start)
	case status.Signaled():
		sig := status.Signal()
		msg := "killed by signal " + signalName(sig)
		if output != "" {
			msg += ": " + output
		}
		return health.Observation{Value: 128 + int(sig), Unit: exitCodeUnit}, errors.New(msg)
	case state.ExitCode() != 0:
		code := state.ExitCode()
		if output == "" {
			output = fmt.Sprintf("exited with status %d", code)
		}
		return health.Observation{Value: code, Unit: exitCodeUnit}, errors.New(output)
	}
	if e.want != nil {
		return outputValue(output, *e.want)
	}
	return health.Observation{Value: 0, Unit: exitCodeUnit, Message: output}, nil
}

// reapGroup reaps the killed processes of the group pgid that were handed to
// this process. When it is PID 1 (in a container) or a subreaper, a process
// whose parent has exited becomes its child, and once dead stays a zombie
// until this process waits for it. It waits for the group only, after Wait
// has reaped the leader, so that it never takes a child from os/exec, and
// returns once no child of this process is left in the group (at once, when
// it is neither PID 1 nor a subreaper, as the group's orphans went to one).
// The group has been sent SIGKILL, so each wait is short.
func reapGroup(pgid int) {
	for {
		_, err := syscall.Wait4(-pgid, nil, 0, nil)
		if err != nil && err != syscall.EINTR { // ECHILD: none left
			return
		}
	}
}

// drain returns what readCapped reads from r, the command's output, ending
// the read drainGrace after the command exited, or at once when ctx has
// ended: a process that left the group may hold the pipe open for good.
func drain(ctx context.Context, r *os.File, copied <-chan string) string {
	grace := time.NewTimer(drainGrace)
	defer grace.Stop()
	select {
	case out := <-copied:
		return out
	case <-grace.C:
	case <-ctx.Done():
	}
	_ = r.SetReadDeadline(time.Now()) // ends the read: a pipe has deadlines
	return <-copied
}

// stopped is the error of a run whose command was killed because ctx ended.
// It does not wrap context.DeadlineExceeded: it already says it timed out.
func (e *execProbe) stopped(ctx context.Context, start time.Time) error {
	deadline, ok := ctx.Deadline()
	if !ok || !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return errors.New("cancelled")
	}
	timeout, ok := health.RunTimeout(ctx)
	if !ok {
		timeout = roundUpToMillisecond(deadline.Sub(start))
	}
	return fmt.Errorf("command %q timed out after %v", e.line, timeout)
}

// roundUpToMillisecond rounds d up to the millisecond: a run starts a moment
// after its caller set the deadline, so this gives back the timeout it chose.
func roundUpToMillisecond(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	r := d.Truncate(time.Millisecond)
	if r < d {
		r += time.Millisecond
	}
	return r
}

// killGroup sends SIGKILL to every process of the group that the command
// leads (its pid is the group's id), and says os.ErrProcessDone, as
// exec.Cmd.Cancel expects, when none is left.
func killGroup(pid int) error {
	err := syscall.Kill(-pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// readCapped reads r to its end or its first error, keeping the first
// maxExecOutput bytes and discarding the rest.
// An error ends the output: what came before it is all there is.
func readCapped(r io.Reader) string {
	var out strings.Builder
	_, err := io.Copy(&out, io.LimitReader(r, maxExecOutput))
	if err == nil {
		_, _ = io.Copy(io.Discard, r)
	}
	return out.String()
}

// quoteArgs joins args with spaces, quoting those that would not read as one
// word.
func quoteArgs(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\") {
			a = strconv.Quote(a)
		}
		quoted[i] = a
	}
	return strings.Join(quoted, " ")
}

// signalName is a signal's name, such as SIGKILL: syscall's String gives a
// description ("killed") instead.
func signalName(sig syscall.Signal) string {
	if name, ok := signalNames[sig]; ok {
		return name
	}
	return "signal " + strconv.Itoa(int(sig))
}

// signalNames has the signals every Unix has, by the names kill -l uses.
var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT",
	syscall.SIGILL: "SIGILL", syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT",
	syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE", syscall.SIGKILL: "SIGKILL",
	syscall.SIGUSR1: "SIGUSR1", syscall.SIGSEGV: "SIGSEGV", syscall.SIGUSR2: "SIGUSR2",
	syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM", syscall.SIGTERM: "SIGTERM",
	syscall.SIGCHLD: "SIGCHLD", syscall.SIGCONT: "SIGCONT", syscall.SIGSTOP: "SIGSTOP",
	syscall.SIGTSTP: "SIGTSTP", syscall.SIGTTIN: "SIGTTIN", syscall.SIGTTOU: "SIGTTOU",
	syscall.SIGURG: "SIGURG", syscall.SIGXCPU: "SIGXCPU", syscall.SIGXFSZ: "SIGXFSZ",
	syscall.SIGVTALRM: "SIGVTALRM", syscall.SIGPROF: "SIGPROF", syscall.SIGWINCH: "SIGWINCH",
	syscall.SIGIO: "SIGIO", syscall.SIGSYS: "SIGSYS",
}
