// Package grpchealthtest has what tests of gRPC health need beside the
// server and the check kind: the real grpc-health-probe, the client that
// Kubernetes users run as an exec probe, built at a pinned version.
package grpchealthtest

import (
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/vitals-dev/vitals/internal/testenv"
)

// HealthProbeVersion is the grpc-health-probe HealthProbe builds: pinned, so
// that a new release changes nothing until it is chosen.
const HealthProbeVersion = "v0.4.62"

// HealthProbe builds grpc-health-probe into the user's cache directory
// (testenv.Tool), unless it is there already, and returns its path. It
// builds it from a throw-away module in a temporary directory that requires
// the pinned version, as a user would install it, with the go command that
// runs the tests.
func HealthProbe() (string, error) {
	return testenv.Tool("grpc-health-probe", HealthProbeVersion, func(path string) error {
		dir, err := os.MkdirTemp("", "grpc-health-probe-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		const pkg = "github.com/grpc-ecosystem/grpc-health-probe"
		for _, args := range [][]string{
			{"mod", "init", "tools"},
			{"get", pkg + "@" + HealthProbeVersion},
			{"build", "-o", path, pkg},
		} {
			cmd := exec.Command("go", args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GOWORK=off")
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("build grpc-health-probe %s: go %s: %v\n%s", HealthProbeVersion, strings.Join(args, " "), err, out)
			}
		}
		return nil
	})
}
