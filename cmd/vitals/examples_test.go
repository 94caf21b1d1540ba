package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vitals-dev/vitals/internal/testenv"
)

// The runnable examples of the README and docs/agent.md run, and show what
// those pages say they show.
func TestTheREADMEExamplesShowWhatTheySay(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		testenv.Missing(t, "the examples need curl")
	}
	for _, tc := range []struct {
		script string
		want   []string
	}{
		{"examples/quickstart/run.sh", []string{"(HTTP 503)", "(HTTP 200)", "[-]peer-config", "[+]peer-config ok"}},
		{"examples/kubeflow/run.sh", []string{
			"authservice answers 302",
			"service-exited  authservice",
			": check oidc failed",
			"checks-reset: authservice started again (restart 1, pid",
			"restarts 1",
			`"type":"service-exited"`,
		}},
	} {
		t.Run(filepath.Base(filepath.Dir(tc.script)), func(t *testing.T) {
			out, err := exec.Command("bash", filepath.Join("..", "..", tc.script)).CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", tc.script, err, out)
			}
			for _, want := range tc.want {
				if !strings.Contains(string(out), want) {
					t.Errorf("%s's output lacks %q:\n%s", tc.script, want, out)
				}
			}
		})
	}
}
