// Package exampletest is what the tests of the controller-runtime examples
// share: the real API server's admin config, namespaces and ConfigMaps in
// it, free loopback ports, GETs of probe endpoints until they answer, and
// the vitals of this workspace, built and run. The examples are programs
// (package main, one per directory), so their tests cannot import each
// other; they import this.
package exampletest

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/vitals-dev/vitals/internal/kubeenv"
)

// Main runs a test package's tests, as its TestMain: with
// controller-runtime's global logger set to discard (it complains on stderr
// when none was set, and a failing test says what it saw itself), and the
// shared API server stopped at the end.
func Main(m *testing.M) {
	ctrl.SetLogger(logr.FromSlogHandler(slog.NewTextHandler(io.Discard, nil)))
	code := m.Run()
	kubeenv.StopShared()
	os.Exit(code)
}

// RestConfig is the admin's config for the test package's shared real API
// server (kubeenv.SharedFor), which it starts on first use.
func RestConfig(t testing.TB) *rest.Config {
	t.Helper()
	env := kubeenv.SharedFor(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", env.Kubeconfig)
	if err != nil {
		t.Fatalf("the test API server's kubeconfig %s: %v", env.Kubeconfig, err)
	}
	return cfg
}

// FreeAddr returns a loopback address that nothing listens on now.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// CreateNamespace creates a namespace named prefix-RANDOM and returns its
// name. The test API server runs no namespace controller, so a deleted
// namespace stays Terminating: each test (and each run, with -count) needs a
// new one.
func CreateNamespace(t testing.TB, c client.Client, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := c.Create(context.Background(), ns); err != nil {
		t.Fatalf("creating a namespace %s-…: %v", prefix, err)
	}
	t.Cleanup(func() { c.Delete(context.Background(), ns) })
	return ns.Name
}

// CreateConfigMap creates the ConfigMap ns/name holding data.
func CreateConfigMap(t testing.TB, c client.Client, ns, name string, data map[string]string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
	if err := c.Create(context.Background(), cm); err != nil {
		t.Fatalf("creating ConfigMap %s/%s: %v", ns, name, err)
	}
}

// Get answers a GET of url: its status code and body, or 0 and the error.
func Get(url string) (int, string) {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// PollEvery is how often WaitFor asks: the granularity of every duration
// the tests measure with it.
const PollEvery = 50 * time.Millisecond

// WaitFor GETs url every PollEvery until it answers with code, for at most
// guard, and returns the body of that answer and when it came.
func WaitFor(t testing.TB, url string, code int, guard time.Duration, why string) (string, time.Time) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for {
		got, body := Get(url)
		now := time.Now()
		if got == code {
			return body, now
		}
		if now.After(deadline) {
			t.Fatalf("%s: GET %s did not answer %d within %v; the last answer: %d %q", why, url, code, guard, got, body)
		}
		time.Sleep(PollEvery)
	}
}

// BuildVitals builds the vitals of this workspace into a temporary
// directory. Outside a workspace that holds cmd/vitals (GOWORK=off) this
// module cannot build it, and the test is skipped.
func BuildVitals(t testing.TB) string {
	t.Helper()
	const pkg = "github.com/vitals-dev/vitals/cmd/vitals"
	if out, err := exec.Command("go", "list", "-m", pkg).CombinedOutput(); err != nil {
		t.Skipf("cannot build %s from here (run the test in the repository's go.work): %s", pkg, out)
	}
	bin := filepath.Join(t.TempDir(), "vitals")
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// RunVitals runs `vitals run` with the vitals.yaml config, its listen
// address made a free loopback port and its API a socket of its own (so that
// runs do not collide), and without its kubernetes: section (there is no pod
// to write to). It returns the base URL of its endpoints; vitals is stopped
// when the test ends, and its log shown if the test failed.
func RunVitals(t testing.TB, vitals, config string) string {
	t.Helper()
	var c map[string]any
	if err := k8syaml.Unmarshal([]byte(config), &c); err != nil {
		t.Fatalf("the vitals.yaml to run: %v", err)
	}
	dir, err := os.MkdirTemp("", "vitals") // short: a socket's path has at most 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	c["listen"], c["api"] = "127.0.0.1:0", filepath.Join(dir, "api.sock")
	delete(c, "kubernetes")
	data, err := json.Marshal(c) // JSON is YAML
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "vitals.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(vitals, "run", "-c", path)
	out, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = cmd.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	logged := make(chan struct{})
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-logged
		cmd.Wait()
		if t.Failed() {
			t.Logf("vitals's log:\n%s", log.String())
		}
	})
	addr := make(chan string, 1)
	go func() {
		defer close(logged)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			log.WriteString(line + "\n") // read by the cleanup only once logged is closed
			if strings.Contains(line, `msg="vitals running"`) {
				for f := range strings.FieldsSeq(line) {
					if a, ok := strings.CutPrefix(f, "listen="); ok {
						addr <- a
					}
				}
			}
		}
	}()
	select {
	case a := <-addr:
		return "http://" + a
	case <-logged:
		cmd.Wait()
		t.Fatalf("vitals run exited: %v\n%s", cmd.ProcessState, log.String())
	case <-time.After(30 * time.Second):
		t.Fatal("vitals run did not say where it listens within 30s")
	}
	return ""
}
