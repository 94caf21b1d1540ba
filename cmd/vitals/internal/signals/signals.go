// Package signals names the signals vitals reads from a file or writes in
// its messages (a service's stop-signal, a workload or hook killed by one):
// a leaf that config, supervise and hooks share.
package signals

import (
	"maps"
	"slices"
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

// Names are the names ParseSignal reads, sorted, each as SIGTERM is
// written.
func Names() []string { return slices.Sorted(maps.Keys(signals)) }

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
