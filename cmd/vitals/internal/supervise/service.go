// Package supervise runs the workload of vitals run: it starts the command in
// a process group of its own, with vitals's standard input, output and error,
// forwards signals to it, restarts it per policy with backoff, reaps what it
// leaves behind, and stops it with its stop signal, then SIGKILL.
package supervise

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/vitals-dev/vitals/health"
)

// Restart policies.
const (
	Never     = "never"      // vitals exits with the workload
	OnFailure = "on-failure" // restart after a non-zero exit or a signal
	Always    = "always"     // restart after every exit
)

// Defaults of a Spec.
const (
	DefaultBackoffInitial = 500 * time.Millisecond
	DefaultBackoffMax     = 30 * time.Second
	DefaultStopTimeout    = 10 * time.Second
	// ResetAfter is how long the workload runs before the backoff starts
	// again from its initial delay.
	ResetAfter = 30 * time.Second
)

// Spec is what to run and how.
type Spec struct {
	Command        []string
	Env            map[string]string // added to vitals's environment
	Dir            string
	Restart        string // Never (default), OnFailure or Always
	BackoffInitial time.Duration
	BackoffMax     time.Duration
	StopSignal     syscall.Signal // default SIGTERM
	StopTimeout    time.Duration  // then SIGKILL to the group
}

// Supervisor runs one workload until it exits for good or is stopped.
type Supervisor struct {
	spec   Spec
	name   string
	path   string
	env    []string
	emit   func(health.Event)
	logger *slog.Logger
	reaper *Reaper

	mu       sync.Mutex
	pid      int // of the running workload; 0 between runs
	stopping chan struct{}
	stopOnce sync.Once
	done     chan struct{}
	code     int
}

// Start starts the workload and supervises it in the background. emit
// receives service-started and service-exited; reaper does every wait.
func Start(spec Spec, emit func(health.Event), logger *slog.Logger, reaper *Reaper) (*Supervisor, error) {
	if len(spec.Command) == 0 || spec.Command[0] == "" {
		return nil, errors.New("no command to run")
	}
	if spec.Restart == "" {
		spec.Restart = Never
	}
	if spec.BackoffInitial <= 0 {
		spec.BackoffInitial = DefaultBackoffInitial
	}
	if spec.BackoffMax <= 0 {
		spec.BackoffMax = DefaultBackoffMax
	}
	spec.BackoffMax = max(spec.BackoffMax, spec.BackoffInitial)
	if spec.StopSignal == 0 {
		spec.StopSignal = syscall.SIGTERM
	}
	path, err := exec.LookPath(spec.Command[0])
	if err != nil {
		return nil, err
	}
	env := os.Environ()
	keys := make([]string, 0, len(spec.Env))
	for k := range spec.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+spec.Env[k])
	}
	s := &Supervisor{spec: spec, name: filepath.Base(spec.Command[0]), path: path, env: env, emit: emit,
		logger: logger, reaper: reaper, stopping: make(chan struct{}), done: make(chan struct{})}
	pid, exited, err := s.start(0)
	if err != nil {
		return nil, err
	}
	go s.run(pid, exited)
	return s, nil
}

// Name is what events call the workload: its command's base name.
func (s *Supervisor) Name() string { return s.name }

// Done is closed once the workload has exited for good.
func (s *Supervisor) Done() <-chan struct{} { return s.done }

// ExitCode is the last exit's code, 128 plus the signal's number when a
// signal killed it; valid once Done is closed.
func (s *Supervisor) ExitCode() int { return s.code }

// Stop stops the workload: its stop signal to its process group, then
// SIGKILL after the stop timeout, and no more restarts. It does not wait:
// see Done.
func (s *Supervisor) Stop() { s.stopOnce.Do(func() { close(s.stopping) }) }

// Signal sends sig to the running workload, if one runs.
func (s *Supervisor) Signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pid > 0 {
		syscall.Kill(s.pid, sig)
	}
}

func (s *Supervisor) start(restarts int) (int, <-chan syscall.WaitStatus, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pid, err := syscall.ForkExec(s.path, s.spec.Command, &syscall.ProcAttr{
		Dir:   s.spec.Dir,
		Env:   s.env,
		Files: []uintptr{os.Stdin.Fd(), os.Stdout.Fd(), os.Stderr.Fd()},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
	if err != nil {
		return 0, nil, fmt.Errorf("start %s: %w", s.spec.Command[0], err)
	}
	s.pid = pid
	exited := s.reaper.Watch(pid)
	s.logger.Info("workload started", "service", s.name, "pid", pid, "restarts", restarts)
	s.emit(health.Event{Type: health.EventServiceStarted, Service: s.name, PID: pid, Restarts: restarts})
	return pid, exited, nil
}

func (s *Supervisor) run(pid int, exited <-chan syscall.WaitStatus) {
	defer close(s.done)
	restarts, delay := 0, s.spec.BackoffInitial
	for {
		began := time.Now()
		ws, stopped := s.wait(pid, exited)
		// What the workload left in its group goes with it.
		syscall.Kill(-pid, syscall.SIGKILL)
		s.mu.Lock()
		s.pid = 0
		s.mu.Unlock()
		s.code = exitCode(ws)
		e := health.Event{Type: health.EventServiceExited, Service: s.name, PID: pid, Restarts: restarts, Reason: "exited"}
		if stopped {
			e.Reason = "stopping"
		}
		if ws.Signaled() {
			e.Signal = SignalName(ws.Signal())
		} else {
			code := ws.ExitStatus()
			e.ExitCode = &code
		}
		s.logger.Info("workload exited", "service", s.name, "pid", pid, "code", s.code, "reason", e.Reason)
		s.emit(e)
		if stopped || !s.restarts(ws) {
			return
		}
		if time.Since(began) >= ResetAfter {
			delay = s.spec.BackoffInitial
		}
		wait := jitter(delay)
		delay = min(2*delay, s.spec.BackoffMax)
		s.logger.Info("restarting the workload", "service", s.name, "in", wait)
		select {
		case <-time.After(wait):
		case <-s.stopping:
			return
		}
		restarts++
		var err error
		if pid, exited, err = s.start(restarts); err != nil {
			s.logger.Error("cannot restart the workload", "service", s.name, "err", err)
			s.code = 127
			return
		}
	}
}

// wait waits for the workload to exit, or stops it when asked to.
func (s *Supervisor) wait(pid int, exited <-chan syscall.WaitStatus) (ws syscall.WaitStatus, stopped bool) {
	select {
	case ws := <-exited:
		return ws, false
	case <-s.stopping:
	}
	syscall.Kill(-pid, s.spec.StopSignal)
	timeout := time.NewTimer(s.spec.StopTimeout)
	defer timeout.Stop()
	select {
	case ws = <-exited:
		return ws, true
	case <-timeout.C:
	}
	s.logger.Warn("the workload did not stop in time: SIGKILL", "service", s.name, "pid", pid, "stop-timeout", s.spec.StopTimeout)
	syscall.Kill(-pid, syscall.SIGKILL)
	return <-exited, true
}

func (s *Supervisor) restarts(ws syscall.WaitStatus) bool {
	switch s.spec.Restart {
	case Always:
		return true
	case OnFailure:
		return ws.Signaled() || ws.ExitStatus() != 0
	}
	return false
}

// exitCode is a shell's code for a status: 128 plus the signal's number when
// a signal killed the process.
func exitCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// jitter is d give or take up to 10%.
func jitter(d time.Duration) time.Duration {
	return d + time.Duration((rand.Float64()*0.2-0.1)*float64(d))
}
