package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/supervise/workloadtest"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
	"github.com/vitals-dev/vitals/health"
)

// importAndRun writes what vitals import made (stdout) with listen: and
// api: of the test's, and runs it; the workload's environment makes this
// test binary a workload.
func importAndRun(t *testing.T, file string, args ...string) (*agent, *exec.Cmd) {
	t.Helper()
	a := &agent{addr: freeAddr(t), dir: t.TempDir(), logs: &vitalstest.Buffer{}, stdout: &vitalstest.Buffer{}}
	a.sock, a.ready = filepath.Join(a.dir, "vitals.sock"), filepath.Join(a.dir, "ready")
	path := writeConfig(t, file+fmt.Sprintf("listen: %s\napi: %s\n", a.addr, a.sock))
	if r := vitalsRun(t, "validate", "-c", path); r.code != 0 {
		t.Fatalf("the imported file does not validate: %s\n%s", r.stderr, file)
	}
	cmd := exec.Command(vitals, append([]string{"run", "-c", path}, args...)...)
	cmd.Env = append(os.Environ(), workloadtest.Env+"=1")
	cmd.Stderr, cmd.Stdout = a.logs, a.stdout
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	a.cmd = cmd
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return a, cmd
}

// A Pebble layer with two services in an order, a check that restarts
// one of them and a check that starts disabled: the file vitals import
// pebble writes validates, runs both services in the layer's order, and
// keeps the disabled check out of readiness until vitals start starts it.
func TestAnImportedPebbleLayerWithSeveralServicesRuns(t *testing.T) {
	_, port, _ := net.SplitHostPort(tcpServer(t, func(net.Conn) {}))
	ready := filepath.Join(t.TempDir(), "ready")
	layer := writeConfig(t, fmt.Sprintf(`summary: a broker client and its worker
services:
  worker:
    override: replace
    command: %[1]s sleep %[2]s.worker
    after: [client]
    on-success: ignore
  client:
    override: replace
    command: %[1]s sleep %[2]s.client
    on-check-failure: {broker: restart}
checks:
  broker:
    override: replace
    level: alive
    period: 200ms
    timeout: 100ms
    tcp: {host: 127.0.0.1, port: %[3]s}
  later:
    override: replace
    level: ready
    period: 200ms
    timeout: 100ms
    startup: disabled
    exec: {command: "false"}
`, os.Args[0], ready, port))
	r := vitalsRun(t, "import", "pebble", layer)
	if r.code != 0 {
		t.Fatalf("import: %d\n%s", r.code, r.stderr)
	}
	a, _ := importAndRun(t, r.stdout)
	workloadtest.WaitPID(t, ready+".worker")
	evs := a.waitEvent(t, "both services started", func(e health.Event) bool {
		return e.Type == health.EventServiceStarted && e.Service == "worker"
	})
	var order []string
	for _, e := range evs {
		if e.Type == health.EventServiceStarted {
			order = append(order, e.Service)
		}
	}
	if strings.Join(order, " ") != "client worker" {
		t.Fatalf("services started %v, want client, then worker (after: [client])", order)
	}
	waitReadyzIs(t, a.addr, 200, a.logs)
	// The disabled check fails once started: readiness with it.
	vitalsRun(t, "start", "--api", a.sock, "later").expect(t, 0, "", "")
	waitReadyzIs(t, a.addr, 503, a.logs)
}

// A container's restartPolicyRules and a liveness probe's own grace,
// imported from a manifest, run: exit 42 restarts the workload under
// restart: never, and exit 3 ends vitals with 3.
func TestImportedRestartRulesAndAProbesGraceRun(t *testing.T) {
	probe := filepath.Join(t.TempDir(), "alive")
	if err := os.WriteFile(probe, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	manifest := writeConfig(t, fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: app}
spec:
  containers:
    - name: app
      restartPolicy: Never
      restartPolicyRules:
        - action: Restart
          exitCodes: {operator: In, values: [42]}
      livenessProbe:
        exec: {command: [test, -e, %s]}
        periodSeconds: 1
        terminationGracePeriodSeconds: 2
`, probe))
	r := vitalsRun(t, "import", "k8s", manifest)
	if r.code != 0 {
		t.Fatalf("import: %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"restart: never", "action: restart", "values: [42]", "stop-timeout: 2s"} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("the imported file has no %q:\n%s", want, r.stdout)
		}
	}
	a, cmd := importAndRun(t, r.stdout, "--", os.Args[0], "exits", filepath.Join(t.TempDir(), "ready"), "42", "42", "3")
	if code := exited(t, cmd); code != 3 {
		t.Fatalf("exit %d, want 3: 42 twice restarts, 3 under restart: never ends vitals; logs:\n%s", code, a.logs)
	}
	if n := strings.Count(a.logs.String(), "workload started"); n != 3 {
		t.Fatalf("%d runs, want 3 (two restarts on 42); logs:\n%s", n, a.logs)
	}
}

// A liveness probe's own terminationGracePeriodSeconds, imported, bounds
// the stop when it fails: a workload that ignores SIGTERM, whose service
// would wait its stop-timeout, is killed after the probe's 1s, and vitals
// exits 1 for the kubelet to restart the container, as the kubelet kills it
// within the probe's grace.
func TestAnImportedProbesGraceBoundsTheStop(t *testing.T) {
	alive := filepath.Join(t.TempDir(), "alive")
	if err := os.WriteFile(alive, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	manifest := writeConfig(t, fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: app}
spec:
  terminationGracePeriodSeconds: 60
  containers:
    - name: app
      livenessProbe:
        exec: {command: [test, -e, %s]}
        periodSeconds: 1
        failureThreshold: 1
        terminationGracePeriodSeconds: 1
`, alive))
	r := vitalsRun(t, "import", "k8s", manifest)
	if r.code != 0 {
		t.Fatalf("import: %d\n%s", r.code, r.stderr)
	}
	file := r.stdout + "service: {stop-timeout: 30s}\n"
	ready := filepath.Join(t.TempDir(), "ready")
	a, cmd := importAndRun(t, file, "--", os.Args[0], "ignore-term", ready)
	workloadtest.WaitPID(t, ready)
	os.Remove(alive)
	began := time.Now()
	if code := exited(t, cmd); code != 1 {
		t.Fatalf("exit %d, want 1 (on-failure: exit); logs:\n%s", code, a.logs)
	}
	if took := time.Since(began); took > 20*time.Second {
		t.Errorf("vitals took %v to stop a workload that ignores SIGTERM: the probe's grace is 1s, the service's 30s", took)
	}
	if !strings.Contains(a.logs.String(), "stop-timeout=1s") {
		t.Errorf("no SIGKILL after the probe's 1s; logs:\n%s", a.logs)
	}
}
