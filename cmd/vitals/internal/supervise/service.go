// Package supervise runs the services of vitals run: each command in a
// process group of its own, with vitals's standard input, output and error;
// it forwards signals to them, restarts each as its policy and rules say
// (Decide, a pure function) with backoff, reaps what they leave behind, and
// stops them with their stop signal, then SIGKILL. A Group starts several in
// order and stops them in reverse; Actions carries out the checks'
// on-failure on them.
//
// It takes the file's plain types as they are, as Pebble's service manager
// takes its plan: a service is a config.Service (its Spec adds only what
// the agent connects it to), a check's on-failure and a restart rule's
// action are config's words, and every default is config's. It sits below
// config, which knows nothing of it.
package supervise

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/signals"
	"github.com/vitals-dev/vitals/health"
)

// Spec is a service to run: the file's, as config gives it, and what the
// agent adds to run it, which the file does not say.
type Spec struct {
	// Service is what to run and how: a zero field takes the file's
	// default (config.Service.WithDefaults), and a zero Name the command's
	// base name.
	config.Service
	// Output is where the runs' standard output and error go.
	Output Output
	// Checks, if set, start over with the workload: they are paused when it
	// has exited to be started again (there is nothing to judge, and
	// readiness fails at once), and reset once the new instance has its pid
	// (they judge it, with fresh thresholds). *health.Monitor is one.
	Checks Checks
	// Notify, if set, is told of each run as it starts, so that what the
	// run's processes say of themselves can be told from what others say,
	// and is given the run's notification pipe (Service.NotificationFD).
	// *notify.Receiver is one.
	Notify Notify
	// WatchdogPID sets WATCHDOG_PID, in each run's environment, to the
	// run's own pid, as systemd does for a service with a watchdog. Only
	// the process itself knows its pid before it executes the command: the
	// run is started as vitals (/proc/self/exe), which sets it and executes
	// the command in its place, the pid unchanged (ExecWorkload).
	WatchdogPID bool
	// Clock measures the runs and waits out the backoff; nil: the system
	// clock. Tests pass healthtest.NewClock, to see a backoff's waits
	// without waiting them.
	Clock health.Clock
}

// Notify is what is told of each run of the workload (package notify).
// Both are called with the supervisor's lock held: they must not call it.
type Notify interface {
	// Starting is called before run (the number of restarts before it)
	// starts, with the read end of its notification pipe (nil without
	// Spec.NotificationFD), which it owns from then on.
	Starting(run int, pipe *os.File)
	// Started is called once run has started as pid (0 when it could not
	// start), before its checks start over.
	Started(run, pid int)
}

// Checks are what starts over with the workload.
type Checks interface {
	Pause(reason string)
	Reset(reason string)
}

// Output is where the workload's standard output and error go. The
// workload writes to pipes that vitals reads, new ones for each run, so that
// what it prints can be watched (log checks) on its way, and what one run
// printed is never taken for the next one's.
type Output struct {
	Stdout, Stderr io.Writer // default vitals's own
	// Copy copies one stream (named "stdout" or "stderr") from the pipe to
	// its writer until the pipe ends; default io.Copy. If it fails (vitals's
	// own output is gone), the rest of the stream is discarded, so that the
	// workload never blocks on a full pipe.
	Copy func(dst io.Writer, src io.Reader, stream string) error
}

// outputGrace is how long, after a run of the workload has exited, its
// output is still read: a process it left outside its group may hold the
// pipes open.
const outputGrace = 2 * time.Second

// closedGrace is how long, once the pipes' read ends are closed, a Copy has
// to return: one that was reading returns at once; one still inside a write
// to vitals's own output (a log that nobody reads) will not, and is not
// waited for longer.
const closedGrace = 250 * time.Millisecond

// Supervisor runs one workload until it exits for good or is stopped.
type Supervisor struct {
	spec Spec // its Service under mu: Update changes it
	name string
	// notificationFD is the spec's, which Update keeps: read as a run
	// starts, before mu.
	notificationFD int
	path           string
	env            []string
	emit           func(health.Event)
	logger         *slog.Logger
	reaper         *Reaper

	mu        sync.Mutex
	pid       int  // of the running workload; 0 between runs
	run       int  // restarts so far: which run of the workload is the current one
	finishing bool // vitals is stopping: no more restarts
	req       *request
	wake      chan struct{} // a request was made
	done      chan struct{}
	code      int
	outcome   Decision // what ended it for good
}

// request is what the supervisor is asked to do to the running workload.
type request struct {
	cause  Cause  // Stopped: stop it for good; Check or Hand: restart it
	reason string // what service-exited says
	// grace, when not 0, is the stop's timeout instead of the spec's: a
	// check's own (the kubelet's probe-level grace).
	grace time.Duration
}

// Start starts the workload and supervises it in the background. emit
// receives service-started and service-exited; reaper does every wait.
func Start(spec Spec, emit func(health.Event), logger *slog.Logger, reaper *Reaper) (*Supervisor, error) {
	if len(spec.Command) == 0 || spec.Command[0] == "" {
		return nil, errors.New("no command to run")
	}
	spec.Service = spec.Service.WithDefaults()
	if spec.Output.Stdout == nil {
		spec.Output.Stdout = os.Stdout
	}
	if spec.Output.Stderr == nil {
		spec.Output.Stderr = os.Stderr
	}
	if spec.Output.Copy == nil {
		spec.Output.Copy = func(dst io.Writer, src io.Reader, _ string) error {
			_, err := io.Copy(dst, src)
			return err
		}
	}
	path, env, err := runnable(spec.Service)
	if err != nil {
		return nil, err
	}
	if spec.Name == "" {
		spec.Name = filepath.Base(spec.Command[0])
	}
	s := &Supervisor{spec: spec, name: spec.Name, notificationFD: spec.NotificationFD, path: path, env: env, emit: emit,
		logger: logger, reaper: reaper, wake: make(chan struct{}, 1), done: make(chan struct{})}
	r, err := s.start(0)
	if err != nil {
		return nil, err
	}
	go s.supervise(r)
	return s, nil
}

// runnable checks that svc can be run here: the path of its command, and
// its environment, vitals's own with svc's added.
func runnable(svc config.Service) (path string, env []string, err error) {
	if len(svc.Command) == 0 || svc.Command[0] == "" {
		return "", nil, errors.New("no command to run")
	}
	path, err = exec.LookPath(svc.Command[0])
	if err != nil {
		return "", nil, fmt.Errorf("command %q: %w", svc.Command[0], err)
	}
	if svc.Dir != "" {
		if fi, err := os.Stat(svc.Dir); err != nil {
			return "", nil, fmt.Errorf("dir: %w", err)
		} else if !fi.IsDir() {
			return "", nil, fmt.Errorf("dir %s: not a directory", svc.Dir)
		}
	}
	if svc.NotificationFD != 0 && svc.NotificationFD < 3 {
		return "", nil, fmt.Errorf("notification descriptor %d: 0, 1 and 2 are the workload's standard input, output and error", svc.NotificationFD)
	}
	return path, withEnv(os.Environ(), svc.Env), nil
}

// Update makes svc the service's definition from now on (a reload of the
// file), with its defaults; its name and notification-fd stay. Its restart
// policy, rules, backoff, stop signal and timeout hold from the next exit
// or stop on; a changed command, environment or directory restarts the
// run under way at once, as vitals restart does ("its definition
// changed"), and says so (true): a run between two is started as svc says
// when its backoff ends. The error says what of svc cannot be run here,
// and nothing changed then.
func (s *Supervisor) Update(svc config.Service) (restarted bool, err error) {
	svc = svc.WithDefaults()
	path, env, err := runnable(svc)
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	was := s.spec.Service
	svc.Name, svc.NotificationFD = was.Name, was.NotificationFD
	s.spec.Service, s.path, s.env = svc, path, env
	if slices.Equal(was.Command, svc.Command) && maps.Equal(was.Env, svc.Env) && was.Dir == svc.Dir {
		return false, nil
	}
	if s.pid == 0 || s.req != nil || s.finishing {
		return false, nil
	}
	s.req = &request{cause: Hand, reason: "its definition changed"}
	notify(s.wake)
	return true, nil
}

// output is one run's output pipes, and the copying of them.
type output struct {
	r, w   [2]*os.File
	copied sync.WaitGroup
}

// openOutput makes a run's output pipes and starts copying them.
func (s *Supervisor) openOutput() (*output, error) {
	o := &output{}
	for i, stream := range []string{"stdout", "stderr"} {
		r, w, err := os.Pipe()
		if err != nil {
			o.closeWriters()
			o.finish(s.logger)
			return nil, fmt.Errorf("a pipe for the workload's %s: %w", stream, err)
		}
		o.r[i], o.w[i] = r, w
		dst := []io.Writer{s.spec.Output.Stdout, s.spec.Output.Stderr}[i]
		o.copied.Add(1)
		go func() {
			defer o.copied.Done()
			if err := s.spec.Output.Copy(dst, r, stream); err != nil && !errors.Is(err, os.ErrClosed) {
				s.logger.Error("cannot pass the workload's output on: the rest is discarded", "stream", stream, "err", err)
				io.Copy(io.Discard, r)
			}
		}()
	}
	return o, nil
}

// closeWriters closes vitals's copies of the write ends: once the run has
// them, its exit (and its group's) ends the pipes.
func (o *output) closeWriters() {
	for _, w := range o.w {
		if w != nil {
			w.Close()
		}
	}
}

// finish waits, for at most outputGrace, for what is in the pipes to be
// passed on, then closes them.
func (o *output) finish(logger *slog.Logger) {
	copied := make(chan struct{})
	go func() { o.copied.Wait(); close(copied) }()
	select {
	case <-copied:
	case <-time.After(outputGrace):
		logger.Warn("the workload's output is still open: no longer read (a process outside its group holds it, or vitals's own output blocks)", "grace", outputGrace)
		for _, r := range o.r {
			if r != nil {
				r.Close() // ends a Copy that reads
			}
		}
		select {
		case <-copied:
		case <-time.After(closedGrace):
			// A Copy stuck writing to vitals's own output cannot be
			// ended; it is left behind rather than hold up the exit.
		}
	}
	for _, r := range o.r {
		if r != nil {
			r.Close()
		}
	}
}

// Name is what events call the service: Spec.Name.
func (s *Supervisor) Name() string { return s.name }

// Done is closed once the workload has exited for good, and its output has
// been passed on.
func (s *Supervisor) Done() <-chan struct{} { return s.done }

// ExitCode is the last exit's code, 128 plus the signal's number when a
// signal killed it; valid once Done is closed.
func (s *Supervisor) ExitCode() int { return s.code }

// Outcome is what ended the service for good, valid once Done is closed:
// ActionExit (vitals is to stop, and exit with Code: the policy or a rule
// said so, or it could not be started again), ActionIgnore (a rule leaves
// it down) or ActionStop (it was stopped).
func (s *Supervisor) Outcome() Decision { return s.outcome }

// Stop stops the workload: its stop signal to its process group, then
// SIGKILL after the stop timeout, and no more restarts. It does not wait:
// see Done. Its service-exited event says "stopping".
func (s *Supervisor) Stop() { s.StopFor("stopping", 0) }

// StopFor is Stop with the reason its service-exited event gives, such as
// "check ui failed", and, when grace is not 0, that stop timeout instead
// of the spec's.
func (s *Supervisor) StopFor(reason string, grace time.Duration) {
	s.mu.Lock()
	if s.req == nil || s.req.cause != Stopped {
		s.req = &request{cause: Stopped, reason: reason, grace: grace}
	}
	s.mu.Unlock()
	notify(s.wake)
}

// Current is the run of the workload that runs now (the number of restarts
// before it), and whether one runs and may be acted on: not between an exit
// and a restart, nor while it is being stopped or restarted, nor once vitals
// is stopping.
func (s *Supervisor) Current() (run int, running bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// A workload that has died but is not reaped yet does not run: a check
	// that fails then judged a crash, which the restart policy handles.
	return s.run, s.pid > 0 && s.req == nil && !s.finishing && !hasExited(s.pid)
}

// PID is the pid of the workload's run that runs now; 0 between runs,
// once it has exited (a restart gives the next run a new pid).
func (s *Supervisor) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pid
}

// Finishing says that vitals is stopping (it drains): from now on the
// workload is not restarted, by its policy or on request; it runs until Stop.
// One that waits out its backoff has exited for good.
func (s *Supervisor) Finishing() {
	s.mu.Lock()
	s.finishing = true
	s.mu.Unlock()
	notify(s.wake)
}

// Restart stops run of the workload as Stop does, then starts it again:
// after the backoff's delay for a check (cause Check), at once for a
// restart by hand (Hand). It reports false, doing nothing, when that run is
// not the one running (it has exited, or has been restarted already), or
// when a stop or restart is under way. reason is what its service-exited
// event says; grace, when not 0, is the stop's timeout instead of the
// spec's.
func (s *Supervisor) Restart(reason string, run int, cause Cause, grace time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pid == 0 || s.run != run || s.req != nil || s.finishing {
		return false
	}
	s.req = &request{cause: cause, reason: reason, grace: grace}
	notify(s.wake)
	return true
}

// Kill sends SIGKILL to the running workload's process group now, as the
// end of the stop timeout would: for whoever will not wait for it.
func (s *Supervisor) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pid > 0 {
		syscall.Kill(-s.pid, syscall.SIGKILL)
	}
}

// Signal sends sig to the running workload, if one runs.
func (s *Supervisor) Signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pid > 0 {
		syscall.Kill(s.pid, sig)
	}
}

// aRun is one run of the workload.
type aRun struct {
	pid    int
	exited <-chan syscall.WaitStatus
	out    *output
}

func (s *Supervisor) start(restarts int) (aRun, error) {
	out, err := s.openOutput()
	if err != nil {
		return aRun{}, err
	}
	// A process group of its own cannot read a terminal (SIGTTIN would stop
	// it for good): then its stdin is /dev/null.
	stdin := os.Stdin
	if isTerminal(os.Stdin) {
		if stdin, err = os.Open(os.DevNull); err != nil {
			out.closeWriters()
			out.finish(s.logger)
			return aRun{}, err
		}
		defer stdin.Close()
	}
	files := []uintptr{stdin.Fd(), out.w[0].Fd(), out.w[1].Fd()}
	var notification *os.File // the run's end of its notification pipe
	var pipe *os.File         // vitals's
	if fd := s.notificationFD; fd > 0 {
		if pipe, notification, err = os.Pipe(); err != nil {
			out.closeWriters()
			out.finish(s.logger)
			return aRun{}, fmt.Errorf("a pipe for the workload's notification-fd: %w", err)
		}
		defer notification.Close()
		for len(files) < fd {
			files = append(files, ^uintptr(0)) // -1: closed in the run
		}
		files = append(files, notification.Fd())
	}
	s.mu.Lock() // Update may change the definition between runs
	defer s.mu.Unlock()
	path, env := s.path, s.env
	if s.spec.WatchdogPID {
		path, env = "/proc/self/exe", append(env[:len(env):len(env)], execEnv+"="+s.path)
	}
	if s.spec.Notify != nil {
		s.spec.Notify.Starting(restarts, pipe)
	} else if pipe != nil {
		pipe.Close()
	}
	pid, err := syscall.ForkExec(path, s.spec.Command, &syscall.ProcAttr{
		Dir:   s.spec.Dir,
		Env:   env,
		Files: files,
		// The run dies with vitals: a vitals killed with SIGKILL (a
		// manager's kill-delay past, a frozen vitals restarted) leaves no
		// workload behind to hold its ports against the next one. The
		// kernel sends it when the thread that forked exits, and Go ends
		// a thread only with a goroutine locked to it, which vitals has
		// none of.
		Sys: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	})
	out.closeWriters()
	if err != nil {
		if s.spec.Notify != nil {
			s.spec.Notify.Started(restarts, 0)
		}
		out.finish(s.logger)
		return aRun{}, fmt.Errorf("start %s: %w", s.spec.Command[0], err)
	}
	s.pid, s.run = pid, restarts
	if s.spec.Notify != nil {
		s.spec.Notify.Started(restarts, pid)
	}
	if restarts > 0 && s.spec.Checks != nil {
		// Under s.mu: no one acts on this run before its checks start over.
		s.spec.Checks.Reset(fmt.Sprintf("%s started again (restart %d, pid %d)", s.name, restarts, pid))
	}
	exited := s.reaper.Watch(pid)
	s.logger.Info("workload started", "service", s.name, "pid", pid, "restarts", restarts)
	s.emit(health.Event{Type: health.EventServiceStarted, Service: s.name, PID: pid, Restarts: restarts})
	return aRun{pid, exited, out}, nil
}

// supervise waits for each run of the workload to end, and does what
// Decide says of it: restart it, or end for good.
func (s *Supervisor) supervise(r aRun) {
	defer close(s.done)
	restarts := 0
	var delay time.Duration // the backoff's, for the next restart
	for {
		began := s.now()
		pid := r.pid
		ws, acted := s.wait(pid, r.exited)
		// What the workload left in its group goes with it (the pid is
		// reaped: no signal goes to it any more), and what it printed is
		// passed on before its exit is told.
		s.mu.Lock()
		s.pid = 0
		s.mu.Unlock()
		syscall.Kill(-pid, syscall.SIGKILL)
		r.out.finish(s.logger)
		s.mu.Lock()
		pending := s.req
		s.req = nil
		finishing := s.finishing
		svc := s.spec.Service // as Update left it
		s.mu.Unlock()
		s.code = exitCode(ws)
		e := health.Event{Type: health.EventServiceExited, Service: s.name, PID: pid, Restarts: restarts, Reason: "crash"}
		switch {
		case acted != nil:
			e.Reason = acted.reason
		case !ws.Signaled() && ws.ExitStatus() == 0:
			e.Reason = "exited"
		}
		if ws.Signaled() {
			e.Signal = signals.SignalName(ws.Signal())
		} else {
			code := ws.ExitStatus()
			e.ExitCode = &code
		}
		s.logger.Info("workload exited", "service", s.name, "pid", pid, "code", s.code, "reason", e.Reason)
		s.emit(e)
		// A request made while the workload went its own way still counts:
		// a stop still stops it, a restart restarts it.
		end := Ended{Status: ws, Ran: s.now().Sub(began)}
		if pending != nil {
			end.Cause = pending.cause
		}
		d := Decide(svc, end, delay, rand.Float64()*2-1)
		if finishing {
			d.Action, d.Why = ActionStop, "vitals is stopping"
		}
		if d.Action != ActionRestart {
			s.end(d, describe(ws))
			return
		}
		delay = d.Delay
		s.logger.Info("restarting the workload", "service", s.name, "in", d.Wait, "why", d.Why)
		if s.spec.Checks != nil {
			s.spec.Checks.Pause(fmt.Sprintf("%s exited (%s): restarting in %v", s.name, e.Reason, d.Wait.Round(time.Millisecond)))
		}
		if !s.sleep(d.Wait) {
			s.outcome = Decision{Action: ActionStop, Code: s.code, Why: "stopped while waiting to restart"}
			return
		}
		restarts++
		var err error
		if r, err = s.start(restarts); err != nil {
			s.logger.Error("cannot restart the workload", "service", s.name, "err", err)
			s.code = 127
			s.outcome = Decision{Action: ActionExit, Code: 127, Why: "cannot start it again: " + err.Error()}
			return
		}
	}
}

// now is the time on the spec's clock.
func (s *Supervisor) now() time.Time {
	if s.spec.Clock != nil {
		return s.spec.Clock.Now()
	}
	return time.Now()
}

// end keeps what ended the service for good, and says it when that is not
// a stop: vitals exits with its code, or it stays down.
func (s *Supervisor) end(d Decision, how string) {
	s.outcome = d
	switch d.Action {
	case ActionExit:
		s.logger.Info("the service is not restarted: vitals stops", "service", s.name, "ended", how, "code", d.Code, "why", d.Why)
	case ActionIgnore:
		s.logger.Info("the service is not restarted, and stays down: vitals goes on", "service", s.name, "ended", how, "why", d.Why)
	}
}

// sleep waits for d between runs; false when asked to stop meanwhile, or
// when vitals began to stop.
func (s *Supervisor) sleep(d time.Duration) bool {
	var fired <-chan time.Time
	if s.spec.Clock != nil {
		t := s.spec.Clock.NewTimer(d)
		defer t.Stop()
		fired = t.C()
	} else {
		t := time.NewTimer(d)
		defer t.Stop()
		fired = t.C
	}
	for {
		select {
		case <-fired:
			return true
		case <-s.wake:
			s.mu.Lock()
			req, finishing := s.req, s.finishing
			s.req = nil
			s.mu.Unlock()
			if req != nil && req.cause == Stopped || finishing {
				return false
			}
		}
	}
}

// wait waits for the workload to exit, or stops it when asked to; acted is
// the request it acted on, nil when the workload exited on its own.
func (s *Supervisor) wait(pid int, exited <-chan syscall.WaitStatus) (ws syscall.WaitStatus, acted *request) {
	for acted == nil {
		select {
		case ws := <-exited:
			return ws, nil
		case <-s.wake:
		}
		s.mu.Lock()
		acted = s.req
		s.mu.Unlock()
	}
	s.mu.Lock()
	sig, grace := s.spec.StopSignal, cmp.Or(acted.grace, s.spec.StopTimeout)
	s.mu.Unlock()
	syscall.Kill(-pid, sig)
	timeout := time.NewTimer(grace)
	defer timeout.Stop()
	select {
	case ws = <-exited:
		return ws, acted
	case <-timeout.C:
	}
	s.logger.Warn("the workload did not stop in time: SIGKILL", "service", s.name, "pid", pid, "stop-timeout", grace)
	syscall.Kill(-pid, syscall.SIGKILL)
	return <-exited, acted
}

// notify wakes whoever waits on ch, a channel with room for one.
func notify(ch chan<- struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// exitCode is a shell's code for a status: 128 plus the signal's number when
// a signal killed the process.
func exitCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// withEnv is env with the variables of add set, those it lacks appended
// sorted by name. A variable env has already is replaced where it stands,
// and a second of one name dropped: of two, C's getenv reads the first and
// a shell the last, and every program must see what the file says.
func withEnv(env []string, add map[string]string) []string {
	out := make([]string, 0, len(env)+len(add))
	seen := make(map[string]bool, len(env)+len(add))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if seen[name] {
			continue
		}
		seen[name] = true
		if v, ok := add[name]; ok {
			kv = name + "=" + v
		}
		out = append(out, kv)
	}
	for _, name := range slices.Sorted(maps.Keys(add)) {
		if !seen[name] {
			out = append(out, name+"="+add[name])
		}
	}
	return out
}

// execEnv names, in the environment of a run that the supervisor starts as
// vitals (Spec.WatchdogPID), the command that vitals executes in its
// place.
const execEnv = "VITALS_EXEC_WORKLOAD"

// ExecWorkload is what vitals does first, before anything else, when the
// supervisor started it as a run of the workload (Spec.WatchdogPID): it
// sets WATCHDOG_PID to its own pid, which the command it executes in its
// place keeps, and executes the command, with the run's arguments and
// environment. It returns at once in any other process; it does not return
// in that one (a command it cannot execute exits 127, as a shell's does).
func ExecWorkload() {
	path, ok := os.LookupEnv(execEnv)
	if !ok {
		return
	}
	os.Unsetenv(execEnv)
	os.Setenv("WATCHDOG_PID", strconv.Itoa(os.Getpid()))
	err := syscall.Exec(path, os.Args, os.Environ())
	fmt.Fprintf(os.Stderr, "vitals: execute %s: %v\n", path, err)
	os.Exit(127)
}
