package supervise

import (
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// signals names the signals a stop-signal may be, by their usual names.
var signals = map[string]syscall.Signal{
	"SIGHUP": syscall.SIGHUP, "SIGINT": syscall.SIGINT, "SIGQUIT": syscall.SIGQUIT,
	"SIGABRT": syscall.SIGABRT, "SIGKILL": syscall.SIGKILL, "SIGUSR1": syscall.SIGUSR1,
	"SIGUSR2": syscall.SIGUSR2, "SIGPIPE": syscall.SIGPIPE, "SIGALRM": syscall.SIGALRM,
	"SIGTERM": syscall.SIGTERM, "SIGCONT": syscall.SIGCONT, "SIGSTOP": syscall.SIGSTOP,
	"SIGTSTP": syscall.SIGTSTP, "SIGWINCH": syscall.SIGWINCH,
}

// ParseSignal reads a signal's name: SIGTERM, or TERM.
func ParseSignal(name string) (syscall.Signal, bool) {
	if !strings.HasPrefix(name, "SIG") {
		name = "SIG" + name
	}
	s, ok := signals[name]
	return s, ok
}

// SignalName is the name of s, such as SIGTERM.
func SignalName(s syscall.Signal) string {
	for name, v := range signals {
		if v == s {
			return name
		}
	}
	return "SIG" + strings.ToUpper(strings.ReplaceAll(s.String(), " ", "-"))
}

// Forwarded are the signals vitals passes on to the workload as they come.
var Forwarded = []os.Signal{syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGQUIT, syscall.SIGWINCH}

// Forward passes every Forwarded signal vitals receives to the workload that
// runs at the time, until the returned function is called.
func (s *Supervisor) Forward() (stop func()) {
	ch := make(chan os.Signal, 8)
	signal.Notify(ch, Forwarded...)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-ch:
				s.Signal(sig.(syscall.Signal))
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}
