package supervise

import (
	"os"
	"slices"
	"testing"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/supervise/workloadtest"
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
