package supervise

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/supervise/workloadtest"
	"github.com/vitals-dev/vitals/health"
)

func TestTheSpecsEnvironmentReplacesAnInheritedVariable(t *testing.T) {
	t.Setenv("VITALS_TEST_INHERITED", "vitals's")
	_, _, ready := workload(t, Spec{Service: config.Service{Env: map[string]string{"VITALS_TEST_INHERITED": "the file's", "VITALS_TEST_NEW": "new"}}},
		"env", "VITALS_TEST_INHERITED", "VITALS_TEST_NEW")
	workloadtest.WaitPID(t, ready)
	if b, _ := os.ReadFile(ready + ".env"); string(b) != "VITALS_TEST_INHERITED=the file's\nVITALS_TEST_NEW=new\n" {
		t.Fatalf("the run's environment has %q", b)
	}
}

func TestWithEnv(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		add  map[string]string
		want []string
	}{
		{[]string{"A=1", "B=2"}, nil, []string{"A=1", "B=2"}},
		{[]string{"A=1", "B=2"}, map[string]string{"B": "3", "D": "4", "C": "5"}, []string{"A=1", "B=3", "C=5", "D=4"}},
		// Of two inherited, the first is the one C's getenv read: kept, or
		// replaced where it stands.
		{[]string{"A=1", "B=2", "A=3"}, nil, []string{"A=1", "B=2"}},
		{[]string{"A=1", "B=2", "A=3"}, map[string]string{"A": "4"}, []string{"A=4", "B=2"}},
		{[]string{"NOTIFY_SOCKET=/run/systemd/notify"}, map[string]string{"NOTIFY_SOCKET": "/run/vitals/notify-1/notify.sock"},
			[]string{"NOTIFY_SOCKET=/run/vitals/notify-1/notify.sock"}},
	} {
		if got := withEnv(tc.env, tc.add); !slices.Equal(got, tc.want) {
			t.Errorf("withEnv(%q, %v) = %q, want %q", tc.env, tc.add, got, tc.want)
		}
	}
}

// Update, as a reload of the file: a changed policy alone restarts
// nothing; a changed environment restarts the run at once, as by hand,
// and the next run has it; a command that is not there is refused, and
// nothing changes.
func TestUpdateRestartsARunOnlyForWhatItRuns(t *testing.T) {
	svc := config.Service{Env: map[string]string{"VITALS_TEST_NEW": "first"}}
	sv, ev, ready := workload(t, Spec{Service: svc}, "env", "VITALS_TEST_NEW")
	first := workloadtest.WaitPID(t, ready)
	next := sv.spec.Service
	next.Restart = config.RestartAlways
	if restarted, err := sv.Update(next); restarted || err != nil {
		t.Fatalf("Update of the policy: restarted %v, %v", restarted, err)
	}
	bad := next
	bad.Command = []string{"/nowhere/at-all"}
	if _, err := sv.Update(bad); err == nil || !strings.Contains(err.Error(), `command "/nowhere/at-all"`) {
		t.Fatalf("Update with a command that is not there: %v", err)
	}
	os.Remove(ready)
	next.Env = map[string]string{"VITALS_TEST_NEW": "second"}
	if restarted, err := sv.Update(next); !restarted || err != nil {
		t.Fatalf("Update of the environment: restarted %v, %v", restarted, err)
	}
	if pid := workloadtest.WaitPID(t, ready); pid == first {
		t.Fatalf("the run is still %d", pid)
	}
	if b, _ := os.ReadFile(ready + ".env"); string(b) != "VITALS_TEST_NEW=second\n" {
		t.Fatalf("the new run's environment has %q", b)
	}
	var reasons []string
	for _, e := range ev.list() {
		if e.Type == health.EventServiceExited {
			reasons = append(reasons, e.Reason)
		}
	}
	if !slices.Equal(reasons, []string{"its definition changed"}) {
		t.Fatalf("service-exited reasons %v, want its definition changed", reasons)
	}
}
