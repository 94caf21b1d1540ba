package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
	"github.com/vitals-dev/vitals/grpchealth/grpchealthtest"
)

// vitals run with grpc-listen answers grpc-health-probe, the exec probe of
// gRPC users, and vitals probe grpc://, as its probe endpoints answer.
func TestRunServesGRPCHealthThatGRPCHealthProbeAndVitalsProbeRead(t *testing.T) {
	healthProbe, err := grpchealthtest.HealthProbe()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	marker := filepath.Join(dir, "db-up")
	grpcAddr := freeAddr(t)
	sock := filepath.Join(dir, "vitals.sock")
	path := writeConfig(t, fmt.Sprintf(`listen: %s
grpc-listen: %s
api: %s
checks:
  db:
    file: {path: %q}
    period: 100ms
    failure-threshold: 1
  mirror:
    level: live
    grpc: {url: "grpc://%s/db"}
    period: 100ms
    failure-threshold: 1
`, freeAddr(t), grpcAddr, sock, marker, grpcAddr))
	cmd := exec.Command(vitals, "run", "-c", path)
	logs := &vitalstest.Buffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	// probeCode runs grpc-health-probe for service and returns its exit code.
	probeCode := func(service string) int {
		err := exec.Command(healthProbe, "-addr="+grpcAddr, "-service="+service, "-connect-timeout=2s", "-rpc-timeout=2s").Run()
		var exit *exec.ExitError
		switch {
		case err == nil:
			return 0
		case errors.As(err, &exit):
			return exit.ExitCode()
		}
		t.Fatal(err)
		return -1
	}
	expect := func(when string, want map[string]int) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			got := map[string]int{}
			same := true
			for service, code := range want {
				got[service] = probeCode(service)
				same = same && got[service] == code
			}
			if same {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: grpc-health-probe exits %v, want %v; logs:\n%s", when, got, want, logs)
			}
		}
	}
	// 4 is grpc-health-probe's "not serving". The mirror check reads db over
	// gRPC: it fails with it, and liveness with it.
	expect("db down", map[string]int{"": 4, "readiness": 4, "db": 4, "mirror": 4, "liveness": 4, "startup": 0})
	for _, binary := range []string{vitals, vitalsProbe} { // both builds read it alike
		binaryRun(t, binary, "probe", "grpc://"+grpcAddr+"/readiness").expect(t, 1, "", `service unhealthy (responded with "NOT_SERVING")`)
		binaryRun(t, binary, "probe", "grpc://"+grpcAddr+"/no-such-check").expect(t, 1, "", `code = NotFound desc = unknown service "no-such-check"`)
		binaryRun(t, binary, "health", "--api", sock).expect(t, 1, "", "readyz check failed: db failed: stat ")
	}

	if err := os.WriteFile(marker, []byte("up"), 0o600); err != nil {
		t.Fatal(err)
	}
	expect("db up", map[string]int{"": 0, "readiness": 0, "liveness": 0, "db": 0, "mirror": 0, "startup": 0})
	for _, binary := range []string{vitals, vitalsProbe} {
		binaryRun(t, binary, "probe", "grpc://"+grpcAddr+"/readiness").expect(t, 0, "", "")
		binaryRun(t, binary, "health", "--api", sock).expect(t, 0, "readyz check passed", "")
	}

	os.Remove(marker)
	expect("db down again", map[string]int{"db": 4, "mirror": 4, "liveness": 4})
}
