package main

import (
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	grpchealthserver "google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
)

// vitals import k8s, given no --container, writes the checks of every
// container of the workload, a grpc probe among them as a grpc check; the
// file it writes runs, and its grpc check asks what the kubelet asks: the
// server as a whole, on the port the probe names.
func TestImportK8sCarriesGRPCProbesAndEveryContainerToAFileThatRuns(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	hs := grpchealthserver.NewServer() // "" is SERVING
	healthpb.RegisterHealthServer(srv, hs)
	go srv.Serve(l)
	t.Cleanup(srv.Stop)
	_, httpPort, _ := net.SplitHostPort(strings.TrimPrefix(server(t, 200), "http://"))

	manifest := writeConfig(t, fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: shop}
spec:
  containers:
    - name: api
      readinessProbe:
        grpc: {port: %d}
        periodSeconds: 1
        failureThreshold: 1
    - name: proxy
      readinessProbe:
        httpGet: {port: %s, path: /ready}
        periodSeconds: 1
`, l.Addr().(*net.TCPAddr).Port, httpPort))
	r := vitalsRun(t, "import", "k8s", manifest)
	r.expect(t, 0, "# Made by vitals import k8s from vitals.yaml: pod/shop, containers api, proxy.\n",
		"vitals import: warning: pod/shop has 2 containers (api, proxy), and vitals runs in one of them (each has an image of its own): the file has the checks of all of them and no service:")
	if !strings.Contains(r.stdout, fmt.Sprintf("  api-ready:\n    level: ready\n    grpc:\n      url: grpc://localhost:%d\n", l.Addr().(*net.TCPAddr).Port)) ||
		!strings.Contains(r.stdout, "  proxy-ready:\n") {
		t.Fatalf("the file has not both checks:\n%s", r.stdout)
	}

	addr := freeAddr(t)
	path := writeConfig(t, r.stdout+fmt.Sprintf("listen: %s\napi: %s\n", addr, filepath.Join(t.TempDir(), "vitals.sock")))
	cmd := exec.Command(vitals, "run", "-c", path)
	logs := &vitalstest.Buffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitReadyzIs(t, addr, 200, logs)
	hs.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	waitReadyzIs(t, addr, 503, logs)
}
