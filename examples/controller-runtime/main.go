// Command controller-runtime is an operator built on controller-runtime whose
// liveness means something: its manager's /healthz fails when a Reconcile has
// hung, instead of answering a constant "ok" (healthz.Ping) while nothing
// reconciles any more.
//
// It reconciles ConfigMaps. Each Reconcile is a unit of work of a vitals
// watchdog, which fails once one has run longer than -reconcile-limit; the
// watchdog is a live check of a vitals Monitor, and the Monitor's verdicts are
// the manager's healthz and readyz checks, so the kubelet restarts a manager
// whose reconciler hangs.
//
//	KUBECONFIG=~/.kube/config go run ./examples/controller-runtime
//	curl -s 'localhost:8081/healthz?verbose'; curl -s localhost:8081/healthz/vitals
//
// It lives in a module of its own, since the root module uses the standard
// library only; its test runs it against a real API server.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/vitals-dev/vitals/health"
)

func main() {
	var opts Options
	flag.StringVar(&opts.HealthProbeAddr, "health-probe-bind-address", ":8081", "where the manager serves /healthz and /readyz")
	flag.DurationVar(&opts.ReconcileLimit, "reconcile-limit", 30*time.Second, "how long one Reconcile may run before the manager is taken to be hung")
	flag.StringVar(&opts.Namespace, "namespace", "", "the namespace whose ConfigMaps are reconciled (default: every namespace)")
	flag.Parse() // also --kubeconfig, registered by controller-runtime
	if err := run(opts); err != nil {
		fmt.Fprintln(os.Stderr, "controller-runtime:", err)
		os.Exit(1)
	}
}

func run(opts Options) error {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctrl.SetLogger(logr.FromSlogHandler(logger.Handler()))
	opts.Logger = logger
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	mgr, _, err := NewManager(cfg, opts)
	if err != nil {
		return err
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}

// Options configure NewManager.
type Options struct {
	// HealthProbeAddr is where the manager serves /healthz and /readyz
	// (kubebuilder's default is :8081); "0" serves them nowhere.
	HealthProbeAddr string
	// ReconcileLimit is how long one Reconcile may run before the manager is
	// taken to be hung (a live check fails). Make it longer than the slowest
	// healthy Reconcile.
	ReconcileLimit time.Duration
	// CheckPeriod is how often the Monitor judges its checks again (default
	// 10s). The watchdog fails the moment a Reconcile reaches its limit
	// whatever the period; the period refreshes its output while it fails.
	CheckPeriod time.Duration
	// Namespace limits the ConfigMaps reconciled to one namespace; empty
	// means every namespace.
	Namespace string
	// Work is what a Reconcile does with the ConfigMap it fetched; the
	// default logs it. Tests put a Reconcile that hangs here.
	Work func(context.Context, *corev1.ConfigMap) error
	// Logger is the Monitor's (default slog.Default()).
	Logger *slog.Logger

	// manyManagers lets tests start a manager per test (and with -count)
	// in one process: controller-runtime refuses a second controller of a
	// name otherwise.
	manyManagers bool
}

// NewManager returns a manager with a ConfigMap reconciler whose Reconciles
// are timed by a watchdog, and the Monitor that judges it: the Monitor's live
// level is the manager's healthz check "vitals", and its ready level the readyz
// check. The Monitor runs as long as the manager does.
func NewManager(cfg *rest.Config, opts Options) (manager.Manager, *health.Monitor, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Work == nil {
		opts.Work = func(ctx context.Context, cm *corev1.ConfigMap) error {
			ctrl.LoggerFrom(ctx).Info("reconciled", "keys", len(cm.Data)+len(cm.BinaryData))
			return nil
		}
	}
	mopts := manager.Options{
		HealthProbeBindAddress: opts.HealthProbeAddr,
		Metrics:                metricsserver.Options{BindAddress: "0"}, // not what this example is about
		Controller:             config.Controller{SkipNameValidation: &opts.manyManagers},
	}
	if opts.Namespace != "" {
		mopts.Cache = cache.Options{DefaultNamespaces: map[string]cache.Config{opts.Namespace: {}}}
	}
	mgr, err := manager.New(cfg, mopts)
	if err != nil {
		return nil, nil, err
	}

	m := health.New(health.WithLogger(opts.Logger), health.WithDefaults(health.Defaults{Period: opts.CheckPeriod}))
	wd, err := m.Watchdog("reconcile", opts.ReconcileLimit, health.Live)
	if err != nil {
		return nil, nil, err
	}
	r := &configMapReconciler{client: mgr.GetClient(), watchdog: wd, work: opts.Work}
	if err := ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Complete(r); err != nil {
		return nil, nil, err
	}
	if err := mgr.AddHealthzCheck("vitals", m.Checker(health.Live)); err != nil {
		return nil, nil, err
	}
	if err := mgr.AddReadyzCheck("vitals", m.Checker(health.Ready)); err != nil {
		return nil, nil, err
	}
	if err := mgr.Add(monitorRunnable{m}); err != nil {
		return nil, nil, err
	}
	return mgr, m, nil
}

// configMapReconciler fetches the ConfigMap and hands it to work, each
// Reconcile timed by the watchdog from its first line to its return.
type configMapReconciler struct {
	client   client.Client
	watchdog *health.Watchdog
	work     func(context.Context, *corev1.ConfigMap) error
}

func (r *configMapReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	defer r.watchdog.Begin()()
	var cm corev1.ConfigMap
	if err := r.client.Get(ctx, req.NamespacedName, &cm); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	return reconcile.Result{}, r.work(ctx, &cm)
}

// monitorRunnable runs the Monitor while the manager runs, on every replica,
// leader or not: each replica's probes need verdicts of their own.
type monitorRunnable struct{ m *health.Monitor }

func (r monitorRunnable) Start(ctx context.Context) error {
	r.m.Start(ctx)
	<-r.m.Done()
	return nil
}

func (monitorRunnable) NeedLeaderElection() bool { return false }
