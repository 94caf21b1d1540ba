package grpchealth_test

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/vitals-dev/vitals/health"
)

// runHealthProbe runs grpc-health-probe against the server at addr for
// service, and returns its exit code and what it printed.
func runHealthProbe(t *testing.T, addr, service string) (int, string) {
	t.Helper()
	// Generous timeouts: a loaded machine must not turn a slow answer
	// into exit 2 or 3.
	cmd := exec.Command(healthProbe, "-addr="+addr, "-service="+service, "-connect-timeout=10s", "-rpc-timeout=10s")
	out, err := cmd.CombinedOutput()
	if exitErr, ok := errors.AsType[*exec.ExitError](err); ok {
		return exitErr.ExitCode(), string(out)
	} else if err != nil {
		t.Fatalf("running %s: %v", healthProbe, err)
	}
	return 0, string(out)
}

func TestGRPCHealthProbeExitsZeroWhenServingAndFourWhenNot(t *testing.T) {
	m := newMonitor(t)
	loop := add(t, m, "loop", health.Live)
	db := add(t, m, "db", health.Ready)
	start(t, m)
	_, addr := serve(t, m)

	type probe struct {
		service string
		code    int
		output  string
	}
	assert := func(t *testing.T, probes ...probe) {
		t.Helper()
		for _, p := range probes {
			code, out := runHealthProbe(t, addr, p.service)
			if code != p.code || !strings.Contains(out, p.output) {
				t.Errorf("grpc-health-probe -service=%q: exit %d, output %q; want exit %d and %q", p.service, code, out, p.code, p.output)
			}
		}
	}
	const healthy, unhealthy = "status: SERVING", `service unhealthy (responded with "NOT_SERVING")`
	t.Run("every check passing", func(t *testing.T) {
		assert(t, probe{"", 0, healthy}, probe{"readiness", 0, healthy}, probe{"liveness", 0, healthy}, probe{"db", 0, healthy})
	})
	t.Run("a ready check failing", func(t *testing.T) {
		set(t, m, "db", db, false)
		assert(t, probe{"", 4, unhealthy}, probe{"readiness", 4, unhealthy}, probe{"db", 4, unhealthy},
			probe{"liveness", 0, healthy}, probe{"loop", 0, healthy})
	})
	t.Run("a live check failing too", func(t *testing.T) {
		set(t, m, "loop", loop, false)
		assert(t, probe{"liveness", 4, unhealthy}, probe{"loop", 4, unhealthy})
	})
	t.Run("an unknown service", func(t *testing.T) {
		// NOT_FOUND is an RPC that failed: exit 3.
		assert(t, probe{"nope", 3, `unknown service "nope"`})
	})
}
