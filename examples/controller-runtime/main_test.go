package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/vitals-dev/vitals/examples/controller-runtime/internal/exampletest"
)

func TestMain(m *testing.M) { exampletest.Main(m) }

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
		opts.HealthProbeAddr = exampletest.FreeAddr(t)
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
	_, _, err = NewManager(exampletest.RestConfig(t), Options{HealthProbeAddr: ln.Addr().String(), ReconcileLimit: time.Second, manyManagers: true})
	if !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("NewManager on an address taken: %v, want an error that is syscall.EADDRINUSE", err)
	}
}

// A manager whose reconciler hangs fails its liveness probe: the story of
// koperator, whose /healthz was healthz.Ping and so said "ok" regardless.
// Against a real API server, a Reconcile that blocks makes the manager's
// /healthz answer 500 within the watchdog's limit plus one period of the
// Monitor from the moment it began to hang (and not before the limit),
// naming the watchdog, and 200 again as soon as it returns.
func TestHungReconcileFailsHealthz(t *testing.T) {
	cfg := exampletest.RestConfig(t)
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ns := exampletest.CreateNamespace(t, c, "watchdog-test")

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
	exampletest.WaitFor(t, readyz, http.StatusOK, guard, "the manager with its Monitor started")
	exampletest.CreateConfigMap(t, c, ns, "quick", map[string]string{"k": "v"})
	select {
	case <-quick:
	case <-time.After(guard):
		t.Fatal("the ConfigMap quick was not reconciled")
	}
	if code, body := exampletest.Get(healthz); code != http.StatusOK {
		t.Fatalf("/healthz after a Reconcile that returned: %d %q, want 200", code, body)
	}

	// A Reconcile that hangs: /healthz fails once the limit has passed, and
	// no later than one period after.
	exampletest.CreateConfigMap(t, c, ns, "hang", map[string]string{"k": "v"})
	var began time.Time
	select {
	case began = <-hangBegan:
	case <-time.After(guard):
		t.Fatal("the ConfigMap hang was not reconciled")
	}
	body, failed := exampletest.WaitFor(t, healthz, http.StatusInternalServerError, limit+period+guard, "a Reconcile hung")
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
	code, body := exampletest.Get(vitalsz)
	if code != http.StatusInternalServerError || !strings.Contains(body, `reconcile failed: 1 of 1 units of work have run longer than 2s`) {
		t.Errorf("/healthz/vitals while hung: %d %q, want 500 naming the watchdog reconcile and its limit", code, body)
	}
	if code, body := exampletest.Get(readyz); code != http.StatusInternalServerError {
		t.Errorf("/readyz while hung: %d %q, want 500 (a failed live check fails readiness)", code, body)
	}

	// The Reconcile returns: the manager is live and ready again, at once
	// (the watchdog wakes the Monitor when a unit of work that failed it ends).
	returned := time.Now()
	free()
	_, passed := exampletest.WaitFor(t, healthz, http.StatusOK, guard, "the hung Reconcile returned")
	t.Logf("/healthz passed %v after the Reconcile was let return", passed.Sub(returned).Round(time.Millisecond))
	if took, bound := passed.Sub(returned), period+slack; took > bound {
		t.Errorf("/healthz passed %v after the Reconcile was let return, want within %v", took.Round(time.Millisecond), bound)
	}
	exampletest.WaitFor(t, readyz, http.StatusOK, period+slack, "the hung Reconcile returned")
}
