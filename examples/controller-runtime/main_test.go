package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/vitals-dev/vitals/internal/kubeenv"
)

func TestMain(m *testing.M) {
	// controller-runtime logs through a global logger, and complains on
	// stderr when none was set; a failing test says what it saw itself.
	ctrl.SetLogger(logr.FromSlogHandler(slog.NewTextHandler(io.Discard, nil)))
	code := m.Run()
	kubeenv.StopShared()
	os.Exit(code)
}

// restConfig is the admin's config for the shared real API server.
func restConfig(t *testing.T) *rest.Config {
	t.Helper()
	env := kubeenv.SharedFor(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", env.Kubeconfig)
	if err != nil {
		t.Fatalf("the test API server's kubeconfig: %v", err)
	}
	return cfg
}

// freeAddr returns a loopback address that nothing listens on now; the
// manager binds it a moment later (it takes an address, not a listener).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// createNamespace creates a namespace named prefix-RANDOM and returns its
// name. The test API server runs no namespace controller, so a deleted
// namespace stays Terminating: each test (and each run, with -count) needs a
// new one.
func createNamespace(t *testing.T, c client.Client, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := c.Create(context.Background(), ns); err != nil {
		t.Fatalf("creating a namespace %s-…: %v", prefix, err)
	}
	t.Cleanup(func() { c.Delete(context.Background(), ns) })
	return ns.Name
}

// get answers a GET of url: its status code and body, or 0 and the error.
func get(url string) (int, string) {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitFor polls url until it answers with code, for at most bound, and
// returns the body of that answer.
func waitFor(t *testing.T, url string, code int, bound time.Duration, why string) string {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		got, body := get(url)
		if got == code {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: GET %s did not answer %d within %v; the last answer: %d %q", why, url, code, bound, got, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A manager whose reconciler hangs fails its liveness probe: the story of
// koperator, whose /healthz was healthz.Ping and so said "ok" regardless.
// Against a real API server, a Reconcile that blocks makes the manager's
// /healthz answer 500 once the watchdog's limit passes, naming the watchdog,
// and 200 again once it returns.
func TestHungReconcileFailsHealthz(t *testing.T) {
	cfg := restConfig(t)
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ns := createNamespace(t, c, "watchdog-test")

	limit, period := 2*time.Second, 500*time.Millisecond // the watchdog's limit, the Monitor's period
	bound := limit + period + 30*time.Second             // generous: a loaded machine under -race
	reconciled := map[string]chan struct{}{"quick": make(chan struct{}, 1), "hang": make(chan struct{}, 1)}
	release := make(chan struct{}) // closed to let the hung Reconcile return
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free) // a failed test must not leave a Reconcile hanging
	addr := freeAddr(t)
	mgr, _, err := NewManager(cfg, Options{
		HealthProbeAddr: addr,
		ReconcileLimit:  limit,
		CheckPeriod:     period,
		Namespace:       ns,
		Logger:          slog.New(slog.NewTextHandler(io.Discard, nil)),
		manyManagers:    true,
		Work: func(ctx context.Context, cm *corev1.ConfigMap) error {
			select {
			case reconciled[cm.Name] <- struct{}{}:
			default:
			}
			if cm.Name == "hang" {
				select {
				case <-release:
				case <-ctx.Done():
				}
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		free()
		if err := <-stopped; err != nil {
			t.Errorf("the manager stopped with %v", err)
		}
	})
	healthz, vitalsz, readyz := "http://"+addr+"/healthz", "http://"+addr+"/healthz/vitals", "http://"+addr+"/readyz"

	// Before any hang: a Reconcile that returns leaves the manager live and ready.
	waitFor(t, readyz, http.StatusOK, bound, "the manager with its Monitor started")
	createConfigMap(t, c, ns, "quick")
	select {
	case <-reconciled["quick"]:
	case <-time.After(bound):
		t.Fatal("the ConfigMap quick was not reconciled")
	}
	if code, body := get(healthz); code != http.StatusOK {
		t.Fatalf("/healthz after a Reconcile that returned: %d %q, want 200", code, body)
	}

	// A Reconcile that hangs: /healthz fails once the limit has passed.
	createConfigMap(t, c, ns, "hang")
	select {
	case <-reconciled["hang"]:
	case <-time.After(bound):
		t.Fatal("the ConfigMap hang was not reconciled")
	}
	began := time.Now()
	body := waitFor(t, healthz, http.StatusInternalServerError, bound, "a Reconcile hung")
	t.Logf("/healthz failed %v after the Reconcile began to hang (limit %v)", time.Since(began).Round(time.Millisecond), limit)
	if !strings.Contains(body, "[-]vitals failed") {
		t.Errorf("/healthz while hung: %q, want the vitals check failed", body)
	}
	code, body := get(vitalsz)
	if code != http.StatusInternalServerError || !strings.Contains(body, `reconcile failed: 1 of 1 units of work have run longer than 2s`) {
		t.Errorf("/healthz/vitals while hung: %d %q, want 500 naming the watchdog reconcile and its limit", code, body)
	}
	if code, body := get(readyz); code != http.StatusInternalServerError {
		t.Errorf("/readyz while hung: %d %q, want 500 (a failed live check fails readiness)", code, body)
	}

	// The Reconcile returns: the manager is live again.
	free()
	waitFor(t, healthz, http.StatusOK, bound, "the hung Reconcile returned")
	waitFor(t, readyz, http.StatusOK, bound, "the hung Reconcile returned")
}

func createConfigMap(t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"k": "v"}}
	if err := c.Create(context.Background(), cm); err != nil {
		t.Fatalf("creating ConfigMap %s/%s: %v", ns, name, err)
	}
}
