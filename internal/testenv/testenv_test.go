package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// A test that lacks something skips on a developer's machine and fails
// under CI, saying what it lacks either way.
func TestMissingSkipsOrFailsUnderCI(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") != "" {
		Missing(t, "no frobnicator here")
		return
	}
	for _, tc := range []struct {
		ci      string
		failed  bool
		outcome string
	}{
		{"", false, "--- SKIP"},
		{"true", true, "--- FAIL"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMissingSkipsOrFailsUnderCI$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTENV_CHILD=1", "CI="+tc.ci)
		out, err := cmd.CombinedOutput()
		if (err != nil) != tc.failed || !strings.Contains(string(out), tc.outcome) || !strings.Contains(string(out), "no frobnicator here") {
			t.Errorf("CI=%q: %v\n%s\nwant %s saying what is missing", tc.ci, err, out, tc.outcome)
		}
	}
}
