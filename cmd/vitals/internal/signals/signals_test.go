package signals

import (
	"syscall"
	"testing"
)

func TestParseSignal(t *testing.T) {
	for name, want := range map[string]syscall.Signal{"SIGTERM": syscall.SIGTERM, "TERM": syscall.SIGTERM, "SIGQUIT": syscall.SIGQUIT, "SIGKILL": syscall.SIGKILL} {
		if got, ok := ParseSignal(name); !ok || got != want {
			t.Errorf("ParseSignal(%q) = %v, %v", name, got, ok)
		}
	}
	for _, bad := range []string{"", "SIGFOO", "term", "15"} {
		if _, ok := ParseSignal(bad); ok {
			t.Errorf("ParseSignal(%q) ok", bad)
		}
	}
	if SignalName(syscall.SIGTERM) != "SIGTERM" || SignalName(syscall.SIGKILL) != "SIGKILL" {
		t.Errorf("SignalName: %q %q", SignalName(syscall.SIGTERM), SignalName(syscall.SIGKILL))
	}
}
