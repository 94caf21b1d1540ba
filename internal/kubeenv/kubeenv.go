// Package kubeenv gives tests a real etcd and kube-apiserver on loopback,
// started through hack/kube-env.sh, which builds them from the Go module
// proxy once and caches them (see the script). It is for this repository's
// tests only, in any of its modules; it needs nothing but the standard
// library, bash, curl and openssl.
//
// A test package shares one API server among its tests, started by the first
// test that asks for it, and stops it when they are done:
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		kubeenv.StopShared()
//		os.Exit(code)
//	}
//
//	func TestSomething(t *testing.T) {
//		env := kubeenv.SharedFor(t) // fails the test if it cannot start
//		…
//	}
//
// A test that stops the API server (StopAPIServer) starts its own with Start.
package kubeenv

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var shared struct {
	sync.Mutex
	env *Env
	err error
}

// Shared returns the package's shared Env, starting it on the first call.
// A failure to start is remembered: later calls return it at once.
func Shared() (*Env, error) {
	shared.Lock()
	defer shared.Unlock()
	if shared.env == nil && shared.err == nil {
		shared.env, shared.err = Start()
	}
	return shared.env, shared.err
}

// SharedFor is Shared for a test, which it fails if the API server cannot
// start.
func SharedFor(tb testing.TB) *Env {
	tb.Helper()
	env, err := Shared()
	if err != nil {
		tb.Fatalf("a real API server for this test: %v", err)
	}
	return env
}

// StopShared stops the shared Env, if one was started.
func StopShared() {
	shared.Lock()
	defer shared.Unlock()
	if shared.env != nil {
		shared.env.Stop()
		shared.env = nil
	}
}

// Env is a running etcd and kube-apiserver.
type Env struct {
	Dir string // their state, logs and credentials

	// Server is the API server's URL, https://127.0.0.1:PORT, with a
	// self-signed certificate (the kubeconfigs skip verifying it).
	Server string

	// Kubeconfig is the admin's kubeconfig (a user in system:masters);
	// RestrictedKubeconfig a user with no rights until a test grants them
	// to RestrictedUser with RBAC.
	Kubeconfig, RestrictedKubeconfig string
	RestrictedUser                   string

	script string
}

// Script returns the path of hack/kube-env.sh, found from the working
// directory upwards (a test runs in its package's directory).
func Script() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, "hack", "kube-env.sh")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("kubeenv: no hack/kube-env.sh in the working directory or above it")
		}
		dir = parent
	}
}

// Start builds the binaries unless they are cached (the first build takes
// minutes), then starts etcd and kube-apiserver in a new temporary
// directory and waits until the API server is ready. They are tied to this
// process: if it ends without Stop (a panic, go test's -timeout), the
// script's watcher stops them and removes the directory.
func Start() (*Env, error) {
	script, err := Script()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "vitals-kube-env-")
	if err != nil {
		return nil, err
	}
	out, err := run(script, "up", dir, strconv.Itoa(os.Getpid()))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	vars := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			vars[k] = v
		}
	}
	e := &Env{Dir: vars["KUBE_ENV_DIR"], Server: vars["KUBE_SERVER"], Kubeconfig: vars["KUBECONFIG"],
		RestrictedKubeconfig: vars["KUBECONFIG_RESTRICTED"], RestrictedUser: vars["KUBE_RESTRICTED_USER"], script: script}
	if e.Dir == "" || e.Server == "" || e.Kubeconfig == "" {
		run(script, "down", dir)
		return nil, fmt.Errorf("kubeenv: %s up %s printed no environment:\n%s", script, dir, out)
	}
	return e, nil
}

// Stop stops both servers and removes their directory.
func (e *Env) Stop() error {
	_, err := run(e.script, "down", e.Dir)
	return err
}

// StopAPIServer stops the API server alone, leaving etcd and the data: a
// test of what happens while it is away.
func (e *Env) StopAPIServer() error {
	_, err := run(e.script, "stop-apiserver", e.Dir)
	return err
}

// StartAPIServer starts it again, on the same port with the same data, and
// waits until it is ready.
func (e *Env) StartAPIServer() error {
	_, err := run(e.script, "start-apiserver", e.Dir)
	return err
}

// run runs the script and returns its standard output; an error carries
// what it wrote to standard error.
func run(script string, args ...string) ([]byte, error) {
	cmd := exec.Command("bash", append([]string{script}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("kubeenv: %s %s: %w\n%s", script, strings.Join(args, " "), err, stderr.Bytes())
	}
	return out, nil
}
