// Command metrics is a controller-runtime manager as kubebuilder scaffolds
// one, with no vitals code at all: vitals judges it from outside, by the
// Prometheus metrics that controller-runtime serves of every controller.
// vitals.yaml beside this file is the recipe, a sidecar's checks of kind
// metric; deploy/examples/controller-metrics.yaml deploys the two.
//
// The manager's own /healthz is healthz.Ping, "ok" for as long as the
// process answers HTTP whatever its reconcilers do: the liveness that
// koperator's review found says nothing of a hung Reconcile. Its workqueue
// metrics do say: how long the longest-running Reconcile has been running,
// how many requests wait, how many Reconciles finished. vitals scrapes them
// and fails its /livez when a Reconcile has hung, or when work waits and
// none gets done; the manager's livenessProbe asks that /livez.
//
// It reconciles ConfigMaps. One whose data has wait: DURATION ("1h") makes
// its Reconcile wait that long, ending early when the ConfigMap is deleted:
// a Reconcile that waits on something outside (a cloud API, a lock, another
// system's state), which is how Reconciles hang in real life.
//
//	go run ./examples/controller-runtime/metrics --namespace default &
//	vitals run -c examples/controller-runtime/metrics/vitals.yaml &
//	kubectl create configmap slow --from-literal=wait=1h
//	curl -s 'localhost:8558/livez?verbose'   # 5m later: [-]reconcile failed: …
//	curl -s localhost:8081/healthz           # ok, all along
//
// Its test runs it against a real API server, with vitals run beside it.
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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func main() {
	var opts Options
	flag.StringVar(&opts.MetricsAddr, "metrics-bind-address", ":8080", `where the manager serves /metrics, plain HTTP; "0" serves them nowhere`)
	flag.StringVar(&opts.HealthProbeAddr, "health-probe-bind-address", ":8081", "where the manager serves /healthz and /readyz")
	flag.BoolVar(&opts.LeaderElection, "leader-elect", false, "elect a leader among the replicas: only the leader reconciles")
	flag.StringVar(&opts.Namespace, "namespace", "", "the namespace whose ConfigMaps are reconciled, and of the leader election's Lease (default: every namespace, and the pod's)")
	flag.Parse() // also --kubeconfig, registered by controller-runtime
	if err := run(opts); err != nil {
		fmt.Fprintln(os.Stderr, "metrics:", err)
		os.Exit(1)
	}
}

func run(opts Options) error {
	ctrl.SetLogger(logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, nil)))
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	mgr, err := NewManager(cfg, opts)
	if err != nil {
		return err
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}

// Options configure NewManager.
type Options struct {
	// MetricsAddr is where the manager serves /metrics, in plain HTTP:
	// controller-runtime's default, ":8080", when empty; "0" serves them
	// nowhere. (kubebuilder's scaffold serves them over HTTPS on :8443,
	// behind authentication: vitals.yaml says what a metric check needs
	// then.) The metrics server starts in Start, and an address taken is
	// its error.
	MetricsAddr string
	// HealthProbeAddr is where the manager serves /healthz and /readyz
	// (kubebuilder's default is :8081); "0" or empty serves them nowhere.
	// manager.New binds it, and an address taken is NewManager's error.
	HealthProbeAddr string
	// LeaderElection elects a leader among the replicas, by a Lease: only
	// the leader starts its controllers, so only the leader has their
	// metrics.
	LeaderElection bool
	// Namespace limits the ConfigMaps reconciled to one namespace, and
	// holds the leader election's Lease; empty means every namespace, and
	// the Lease in the pod's own (outside a cluster, leader election then
	// needs one).
	Namespace string

	// What follows is for tests.

	// controllerName names the controller (by default controller-runtime
	// names it "configmap", after its kind). Every manager of a process
	// adds to one metrics registry, so a test's controller needs a name of
	// its own for its series to be its own.
	controllerName string
	// manyManagers lets tests start a manager per test (and with -count)
	// in one process: controller-runtime refuses a second controller of a
	// name otherwise.
	manyManagers bool
	// watchSecrets makes the controller watch Secrets too, each Secret
	// reconciled as the ConfigMap of its name: a test's manager whose
	// identity may not list Secrets never syncs that cache, and so never
	// starts a worker, with ConfigMaps queued.
	watchSecrets bool
	// cacheSyncTimeout is how long the controller waits for its caches
	// before Start fails (0: controller-runtime's 2 minutes).
	cacheSyncTimeout time.Duration
	// trace, when set, is called as each Reconcile begins, with the
	// ConfigMap's name, and what it returns as that Reconcile returns: the
	// test times Reconciles by it.
	trace func(name string) (returned func())
}

// leaderElectionID names the Lease that the replicas elect their leader by.
const leaderElectionID = "metrics.example.vitals.dev"

// NewManager returns a manager with a ConfigMap reconciler and the health
// checks that kubebuilder scaffolds; the manager serves its metrics once
// started.
func NewManager(cfg *rest.Config, opts Options) (manager.Manager, error) {
	mopts := manager.Options{
		Metrics:                 metricsserver.Options{BindAddress: opts.MetricsAddr},
		HealthProbeBindAddress:  opts.HealthProbeAddr,
		LeaderElection:          opts.LeaderElection,
		LeaderElectionID:        leaderElectionID,
		LeaderElectionNamespace: opts.Namespace,
		Controller:              config.Controller{SkipNameValidation: &opts.manyManagers, CacheSyncTimeout: opts.cacheSyncTimeout},
	}
	if opts.Namespace != "" {
		mopts.Cache = cache.Options{DefaultNamespaces: map[string]cache.Config{opts.Namespace: {}}}
	}
	mgr, err := manager.New(cfg, mopts)
	if err != nil {
		return nil, fmt.Errorf("creating the manager, its health probes on %q: %w", opts.HealthProbeAddr, err)
	}
	r := &configMapReconciler{client: mgr.GetClient(), api: mgr.GetAPIReader(), trace: opts.trace}
	b := ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{})
	if opts.controllerName != "" {
		b = b.Named(opts.controllerName)
	}
	if opts.watchSecrets {
		b = b.Watches(&corev1.Secret{}, &handler.EnqueueRequestForObject{})
	}
	if err := b.Complete(r); err != nil {
		return nil, fmt.Errorf("the ConfigMap controller: %w", err)
	}
	// As kubebuilder scaffolds them: healthz.Ping is a constant nil, so
	// /healthz and /readyz answer "ok" whatever the reconcilers do, a hung
	// one included (the complaint in koperator's review of its probes).
	// Kept so, on purpose: here vitals judges the reconcilers.
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, err
	}
	return mgr, nil
}

// configMapReconciler logs each ConfigMap it reconciles, and waits as long
// as its data's wait: says.
type configMapReconciler struct {
	client client.Client // the manager's, which reads from its cache
	api    client.Reader // the API server's, uncached
	trace  func(name string) (returned func())
}

func (r *configMapReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if r.trace != nil {
		defer r.trace(req.Name)()
	}
	var cm corev1.ConfigMap
	if err := r.client.Get(ctx, req.NamespacedName, &cm); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	text, ok := cm.Data["wait"]
	if !ok {
		ctrl.LoggerFrom(ctx).Info("reconciled", "keys", len(cm.Data)+len(cm.BinaryData))
		return reconcile.Result{}, nil
	}
	d, err := time.ParseDuration(text)
	if err != nil {
		// The same value would fail again: not retried.
		return reconcile.Result{}, reconcile.TerminalError(fmt.Errorf("ConfigMap %s: wait %q: %w", req.NamespacedName, text, err))
	}
	return reconcile.Result{}, r.wait(ctx, req.NamespacedName, d)
}

// deletedPoll is how often a waiting Reconcile asks whether its ConfigMap
// is still there: deleting it ends the wait within this much.
const deletedPoll = 200 * time.Millisecond

// wait waits d, unless the ConfigMap key is deleted first or ctx ends. It
// asks the API server itself, not the cache, as a Reconcile that waits on
// something outside asks that: a request each time, which could hang too.
func (r *configMapReconciler) wait(ctx context.Context, key client.ObjectKey, d time.Duration) error {
	log := ctrl.LoggerFrom(ctx)
	log.Info("waiting", "for", d)
	done := time.NewTimer(d)
	defer done.Stop()
	poll := time.NewTicker(deletedPoll)
	defer poll.Stop()
	for {
		select {
		case <-done.C:
			log.Info("waited", "for", d)
			return nil
		case <-ctx.Done():
			return fmt.Errorf("ConfigMap %s: waiting %v: %w", key, d, context.Cause(ctx))
		case <-poll.C:
		}
		// Another error than NotFound (the API server out of reach) ends
		// nothing: the wait goes on, and the next poll asks again.
		if err := r.api.Get(ctx, key, &corev1.ConfigMap{}); apierrors.IsNotFound(err) {
			log.Info("deleted while waiting")
			return nil
		}
	}
}
