package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

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

// freeAddr returns a loopback address that nothing listens on now.
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

// newManagerOnFreePort is NewManager with the health probes on a free
// loopback port, and that port's address. controller-runtime binds
// HealthProbeBindAddress itself, in manager.New, and neither takes a listener
// (its newHealthProbeListener option is unexported) nor tells which port
// ":0" bound (the listener is unexported too): so the port is one found free
// a moment before, and should something take it in between, manager.New
// fails with EADDRINUSE and NewManager is tried again on another.
func newManagerOnFreePort(t *testing.T, cfg *rest.Config, opts Options) (manager.Manager, string) {
	t.Helper()
	for try := 1; ; try++ {
		opts.HealthProbeAddr = freeAddr(t)
		mgr, _, err := NewManager(cfg, opts)
		if err == nil {
			return mgr, opts.HealthProbeAddr
		}
		if !errors.Is(err, syscall.EADDRINUSE) || try == 5 {
			t.Fatalf("NewManager with its health probes on %s (try %d): %v", opts.HealthProbeAddr, try, err)
		}
		t.Logf("%v; trying another port", err)
	}
}

// The retry of newManagerOnFreePort rests on NewManager failing with an
// error that is EADDRINUSE when the health probes' address is taken.
func TestNewManagerSaysAddressInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, _, err = NewManager(restConfig(t), Options{HealthProbeAddr: ln.Addr().String(), ReconcileLimit: time.Second, manyManagers: true})
	if !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("NewManager on an address taken: %v, want an error that is syscall.EADDRINUSE", err)
	}
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

// pollEvery is how often waitFor asks.
const pollEvery = 50 * time.Millisecond

// waitFor GETs url every pollEvery until it answers with code, for at most
// guard, and returns the body of that answer and when it came.
func waitFor(t *testing.T, url string, code int, guard time.Duration, why string) (string, time.Time) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for {
		got, body := get(url)
		now := time.Now()
		if got == code {
			return body, now
		}
		if now.After(deadline) {
			t.Fatalf("%s: GET %s did not answer %d within %v; the last answer: %d %q", why, url, code, guard, got, body)
		}
		time.Sleep(pollEvery)
	}
}

// A manager whose reconciler hangs fails its liveness probe: the story of
// koperator, whose /healthz was healthz.Ping and so said "ok" regardless.
// Against a real API server, a Reconcile that blocks makes the manager's
// /healthz answer 500 within the watchdog's limit plus one period of the
// Monitor from the moment it began to hang (and not before the limit),
// naming the watchdog, and 200 again as soon as it returns.
func TestHungReconcileFailsHealthz(t *testing.T) {
	cfg := restConfig(t)
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ns := createNamespace(t, c, "watchdog-test")

	limit, period := 2*time.Second, 500*time.Millisecond // the watchdog's limit, the Monitor's period
	// slack is what the bounds allow beyond limit + period: the polling's
	// 50ms, an HTTP round trip, and scheduling under -race on a loaded
	// machine. The watchdog fails the moment the limit passes (measured:
	// 10 to 30ms after it), so a limit not honoured still shows: 4.5s fails.
	const slack = 1500 * time.Millisecond
	// early is how much sooner than limit after hangBegan the watchdog may
	// fail: its unit of work begins at the top of Reconcile, a client.Get
	// from the cache before the hang.
	const early = 250 * time.Millisecond
	const guard = 30 * time.Second // for what has no bound of its own: the manager's start, the watch's delivery
	quick := make(chan struct{}, 1)
	hangBegan := make(chan time.Time, 1) // when the Reconcile of hang blocked
	release := make(chan struct{})       // closed to let the hung Reconcile return
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free) // a failed test must not leave a Reconcile hanging
	mgr, addr := newManagerOnFreePort(t, cfg, Options{
		ReconcileLimit: limit,
		CheckPeriod:    period,
		Namespace:      ns,
		Logger:         slog.New(slog.NewTextHandler(io.Discard, nil)),
		manyManagers:   true,
		Work: func(ctx context.Context, cm *corev1.ConfigMap) error {
			switch cm.Name {
			case "quick":
				select {
				case quick <- struct{}{}:
				default:
				}
			case "hang":
				select {
				case hangBegan <- time.Now():
				default:
				}
				select {
				case <-release:
				case <-ctx.Done():
				}
			}
			return nil
		},
	})
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
	waitFor(t, readyz, http.StatusOK, guard, "the manager with its Monitor started")
	createConfigMap(t, c, ns, "quick")
	select {
	case <-quick:
	case <-time.After(guard):
		t.Fatal("the ConfigMap quick was not reconciled")
	}
	if code, body := get(healthz); code != http.StatusOK {
		t.Fatalf("/healthz after a Reconcile that returned: %d %q, want 200", code, body)
	}

	// A Reconcile that hangs: /healthz fails once the limit has passed, and
	// no later than one period after.
	createConfigMap(t, c, ns, "hang")
	var began time.Time
	select {
	case began = <-hangBegan:
	case <-time.After(guard):
		t.Fatal("the ConfigMap hang was not reconciled")
	}
	body, failed := waitFor(t, healthz, http.StatusInternalServerError, limit+period+guard, "a Reconcile hung")
	took := failed.Sub(began)
	t.Logf("/healthz failed %v after the Reconcile began to hang (limit %v, period %v)", took.Round(time.Millisecond), limit, period)
	if bound := limit + period + slack; took > bound {
		t.Errorf("/healthz failed %v after the Reconcile began to hang, want within %v (the limit %v, a period %v, slack %v)",
			took.Round(time.Millisecond), bound, limit, period, slack)
	}
	if took < limit-early {
		t.Errorf("/healthz failed %v after the Reconcile began to hang, before the limit %v", took.Round(time.Millisecond), limit)
	}
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

	// The Reconcile returns: the manager is live and ready again, at once
	// (the watchdog wakes the Monitor when a unit of work that failed it ends).
	returned := time.Now()
	free()
	_, passed := waitFor(t, healthz, http.StatusOK, guard, "the hung Reconcile returned")
	t.Logf("/healthz passed %v after the Reconcile was let return", passed.Sub(returned).Round(time.Millisecond))
	if took, bound := passed.Sub(returned), period+slack; took > bound {
		t.Errorf("/healthz passed %v after the Reconcile was let return, want within %v", took.Round(time.Millisecond), bound)
	}
	waitFor(t, readyz, http.StatusOK, period+slack, "the hung Reconcile returned")
}

func createConfigMap(t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"k": "v"}}
	if err := c.Create(context.Background(), cm); err != nil {
		t.Fatalf("creating ConfigMap %s/%s: %v", ns, name, err)
	}
}
