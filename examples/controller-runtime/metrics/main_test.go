package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/vitals-dev/vitals/examples/controller-runtime/internal/exampletest"
)

func TestMain(m *testing.M) { exampletest.Main(m) }

// The recipe's numbers are for production, minutes; the tests run its
// checks with these, for times a test can wait.
const (
	period           = 500 * time.Millisecond // each check's
	failureThreshold = 2                      // each check's
	limit            = 2 * time.Second        // the reconcile check's limit on a Reconcile, the recipe's 5m
	window           = 10 * time.Second       // the progress check's window, the recipe's 5m
)

// asTested are the changes the tests make to the recipe's conditions, as
// pairs of what the recipe says and what the test's say: the controller's
// name (the test's own), the reconcile check's limit, the progress check's
// window.
func asTested(controller string) []string {
	return []string{
		`controller="configmap"`, `controller="` + controller + `"`,
		`) < 5m`, `) < ` + limit.String(),
		`[5m]`, `[` + window.String() + `]`,
	}
}

// recipe is vitals.yaml beside this file with only the named checks, each
// scraping metricsURL, run every period and failing at failureThreshold,
// its conditions as asTested changes them for the controller named
// controller; and each check's condition, by name.
func recipe(t *testing.T, metricsURL, controller string, names ...string) (string, map[string]string) {
	t.Helper()
	data, err := os.ReadFile("vitals.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := k8syaml.Unmarshal(data, &c); err != nil {
		t.Fatalf("vitals.yaml: %v", err)
	}
	changes := asTested(controller)
	for i := 0; i < len(changes); i += 2 {
		// Each must be there, or the tests would run conditions other than the recipe's.
		if !bytes.Contains(data, []byte(changes[i])) {
			t.Fatalf("vitals.yaml no longer says %s, which the tests change to %s", changes[i], changes[i+1])
		}
	}
	change := strings.NewReplacer(changes...)
	all, _ := c["checks"].(map[string]any)
	checks, exprs := map[string]any{}, map[string]string{}
	for _, name := range names {
		check, _ := all[name].(map[string]any)
		metric, _ := check["metric"].(map[string]any)
		expr, _ := metric["expr"].(string)
		if expr == "" {
			t.Fatalf("vitals.yaml has no check %s with a metric: {expr: CONDITION}", name)
		}
		metric["url"], metric["expr"] = metricsURL, change.Replace(expr)
		check["period"], check["failure-threshold"] = period.String(), failureThreshold
		checks[name], exprs[name] = check, metric["expr"].(string)
	}
	c["checks"] = checks
	config, err := json.Marshal(c) // JSON is YAML
	if err != nil {
		t.Fatal(err)
	}
	return string(config), exprs
}

// guard bounds what has no bound of its own: the manager's start, a watch's
// delivery, an informer's retry.
const guard = 30 * time.Second

// startManager starts the manager of NewManager(cfg, opts) with its metrics
// and its health probes on free loopback ports, and returns their base URLs
// once the controller named controller has started (its series are in
// /metrics); the manager stops when the test ends. controller-runtime binds
// the health probes' port in manager.New and the metrics' in Start, takes a
// listener for neither, and says not which port ":0" bound: so each port is
// one found free a moment before, and should something take it in between,
// NewManager or Start fails with EADDRINUSE and the manager is made again.
func startManager(t *testing.T, cfg *rest.Config, opts Options, controller string) (metrics, health string) {
	t.Helper()
	for try := 1; ; try++ {
		opts.MetricsAddr, opts.HealthProbeAddr = exampletest.FreeAddr(t), exampletest.FreeAddr(t)
		metrics, health = "http://"+opts.MetricsAddr+"/metrics", "http://"+opts.HealthProbeAddr
		mgr, err := NewManager(cfg, opts)
		if err == nil {
			ctx, cancel := context.WithCancel(context.Background())
			var stopErr error // Start's, once stopped is closed
			stopped := make(chan struct{})
			go func() { stopErr = mgr.Start(ctx); close(stopped) }()
			if err = serving(metrics, controller, stopped); err == nil {
				t.Cleanup(func() {
					cancel()
					<-stopped
					if stopErr != nil {
						t.Errorf("the manager stopped with %v", stopErr)
					}
				})
				return metrics, health
			}
			cancel()
			<-stopped
			if stopErr != nil {
				err = stopErr
			}
		}
		if !errors.Is(err, syscall.EADDRINUSE) || try == 5 {
			t.Fatalf("the manager with its metrics on %s and health probes on %s (try %d): %v", opts.MetricsAddr, opts.HealthProbeAddr, try, err)
		}
		t.Logf("%v; trying other ports", err)
	}
}

// serving waits until GET metrics has series of the controller, for at
// most guard, unless the manager stops first (stopped is closed).
func serving(metrics, controller string, stopped <-chan struct{}) error {
	deadline := time.Now().Add(guard)
	for {
		if code, body := exampletest.Get(metrics); code == http.StatusOK && strings.Contains(body, `controller="`+controller+`"`) {
			return nil
		}
		select {
		case <-stopped:
			return errors.New("the manager stopped before its controller started")
		case <-time.After(exampletest.PollEvery):
		}
		if time.Now().After(deadline) {
			return errors.New("no series of controller " + controller + " in " + metrics + " within " + guard.String())
		}
	}
}

// The retry of startManager rests on NewManager failing with an error that
// is EADDRINUSE when the health probes' address is taken, and Start when
// the metrics' is.
func TestManagerSaysAddressInUse(t *testing.T) {
	cfg := exampletest.RestConfig(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	taken := ln.Addr().String()
	if _, err := NewManager(cfg, Options{MetricsAddr: "0", HealthProbeAddr: taken, controllerName: "address-in-use", manyManagers: true}); !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("NewManager with its health probes on an address taken: %v, want an error that is syscall.EADDRINUSE", err)
	}
	mgr, err := NewManager(cfg, Options{MetricsAddr: taken, HealthProbeAddr: "0", controllerName: "address-in-use", manyManagers: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	if err := mgr.Start(ctx); !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("Start of a manager with its metrics on an address taken: %v, want an error that is syscall.EADDRINUSE", err)
	}
}

// probe runs `vitals probe metrics+METRICS --expr EXPR ARGS...` and
// returns its exit code, stdout and stderr.
func probe(t *testing.T, vitals, metrics, expr string, args ...string) (int, string, string) {
	t.Helper()
	return oneShot(t, vitals, "probe", metrics, expr, args...)
}

// wait runs vitals wait of the metrics at metrics with the condition expr,
// for at most guard, saying what it saw (-v); as probe does.
func wait(t *testing.T, vitals, metrics, expr string) (int, string, string) {
	t.Helper()
	return oneShot(t, vitals, "wait", metrics, expr, "-v", "--timeout", guard.String(), "-o", "json")
}

// oneShot runs a one-shot command of vitals on the metrics at metrics with
// the condition expr and args, and returns its exit code, stdout and
// stderr.
func oneShot(t *testing.T, vitals, command, metrics, expr string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(vitals, append([]string{command, "metrics+" + metrics, "--expr", expr}, args...)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("vitals %s: %v", command, err)
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

// The recipe as shipped finds the example's controller: controller-runtime
// names a controller of For(&corev1.ConfigMap{}) "configmap", and so do the
// recipe's selectors. A vitals probe of its reconcile condition passes,
// finding the series (not holding by absent()). Its progress condition,
// whose increase needs two scrapes, is no probe's (one scrape), and vitals
// wait passes it: nothing is queued.
func TestTheRecipeFindsTheController(t *testing.T) {
	cfg := exampletest.RestConfig(t)
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ns := exampletest.CreateNamespace(t, c, "metrics-recipe")
	metrics, _ := startManager(t, cfg, Options{Namespace: ns, manyManagers: true}, "configmap")
	vitals := exampletest.BuildVitals(t)
	data, err := os.ReadFile("vitals.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Checks map[string]struct {
			Metric struct{ Expr string }
		}
	}
	if err := k8syaml.Unmarshal(data, &r); err != nil {
		t.Fatalf("vitals.yaml: %v", err)
	}
	reconcile, progress := r.Checks["reconcile"].Metric.Expr, r.Checks["progress"].Metric.Expr
	code, stdout, stderr := probe(t, vitals, metrics, reconcile, "-v")
	// An or that holds says the side that holds: max(…), not absent(…).
	if code != 0 || !strings.HasSuffix(stdout, `: max(workqueue_longest_running_processor_seconds{controller="configmap"}) = 0 (want < 5m)`+"\n") {
		t.Errorf("vitals probe --expr %q: exit %d, %q %q; want 0, the series of controller configmap found", reconcile, code, stdout, stderr)
	}
	// The progress condition decides over two scrapes: vitals probe, which
	// scrapes once, refuses it whatever the manager's state, as a usage
	// error; vitals wait runs it until it decides.
	if code, stdout, stderr := probe(t, vitals, metrics, progress, "-v"); code != 2 || !strings.Contains(stderr, "increase and rate need two scrapes") {
		t.Errorf("vitals probe --expr %q: exit %d, %q %q; want 2, saying increase needs two scrapes", progress, code, stdout, stderr)
	}
	idle := `sum(workqueue_depth{controller="configmap"}) = 0 (want == 0; no series matches workqueue_depth{controller="configmap"})`
	if code, stdout, stderr := wait(t, vitals, metrics, progress); code != 0 || !strings.Contains(stdout+stderr, idle) {
		t.Errorf("vitals wait --expr %q: exit %d, %q %q; want 0, nothing queued", progress, code, stdout, stderr)
	}
}

// A manager whose Reconcile hangs fails vitals's liveness, judged from its
// /metrics alone, while its own /healthz (healthz.Ping) says ok: the story
// of koperator. vitals run beside it, with the recipe's reconcile check,
// fails /livez once the Reconcile has run the limit (and not before), plus
// the queue's update of its metric and the check's failed runs; its verbose
// answer and vitals probe of the same condition say how long it has run.
// Deleting the ConfigMap ends the Reconcile, and /livez passes again.
func TestHungReconcileFailsLivenessFromMetrics(t *testing.T) {
	// queueUpdate is how often controller-runtime's priority queue updates
	// workqueue_longest_running_processor_seconds (its
	// updateUnfinishedWorkLoop): the metric lags the Reconcile by as much.
	const queueUpdate = 500 * time.Millisecond
	// slack is what the bounds allow beyond what the parts add up to: the
	// polling's 50ms, HTTP round trips, the checks' phase (at most a tenth
	// of the period), and scheduling under -race on a loaded 2-core machine.
	const slack = 1500 * time.Millisecond
	// early is how much sooner than limit + a period after the Reconcile
	// began /livez may fail: the queue times a Reconcile from when
	// a worker took the request, a moment before the trace (a run never
	// comes sooner than a period after the one before).
	const early = 250 * time.Millisecond

	cfg := exampletest.RestConfig(t)
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ns := exampletest.CreateNamespace(t, c, "metrics-hang")
	controller := "hang-" + ns
	quick := make(chan struct{}, 1)
	hangBegan := make(chan time.Time, 1) // when the Reconcile of hang began
	trace := func(name string) func() {
		if name == "hang" {
			select {
			case hangBegan <- time.Now():
			default:
			}
		}
		return func() {
			if name == "quick" {
				select {
				case quick <- struct{}{}:
				default:
				}
			}
		}
	}
	metrics, health := startManager(t, cfg, Options{Namespace: ns, controllerName: controller, manyManagers: true, trace: trace}, controller)
	vitals := exampletest.BuildVitals(t)
	config, exprs := recipe(t, metrics, controller, "reconcile")
	cond := exprs["reconcile"]
	base := exampletest.RunVitals(t, vitals, config)
	livez := base + "/livez"

	// Before any hang: a Reconcile that returns leaves the manager live.
	exampletest.WaitFor(t, livez, http.StatusOK, guard, "vitals started beside the manager")
	exampletest.CreateConfigMap(t, c, ns, "quick", nil)
	select {
	case <-quick:
	case <-time.After(guard):
		t.Fatal("the ConfigMap quick was not reconciled")
	}
	if code, stdout, stderr := probe(t, vitals, metrics, cond); code != 0 {
		t.Fatalf("vitals probe --expr %q after a Reconcile that returned: exit %d, %q %q; want 0", cond, code, stdout, stderr)
	}

	// A Reconcile that waits an hour: /livez fails once it has run the
	// limit, the queue has said so, and the check has failed its runs.
	exampletest.CreateConfigMap(t, c, ns, "hang", map[string]string{"wait": "1h"})
	var began time.Time
	select {
	case began = <-hangBegan:
	case <-time.After(guard):
		t.Fatal("the ConfigMap hang was not reconciled")
	}
	_, failed := exampletest.WaitFor(t, livez, http.StatusServiceUnavailable, limit+guard, "a Reconcile hung")
	took := failed.Sub(began)
	t.Logf("/livez failed %v after the Reconcile of hang began (limit %v, period %v, failure threshold %d)", took.Round(time.Millisecond), limit, period, failureThreshold)
	if bound := limit + queueUpdate + period*failureThreshold + slack; took > bound {
		t.Errorf("/livez failed %v after the Reconcile of hang began, want within %v (the limit %v, the queue's update %v, %d periods of %v, slack %v)",
			took.Round(time.Millisecond), bound, limit, queueUpdate, failureThreshold, period, slack)
	}
	if first := limit + period*(failureThreshold-1) - early; took < first {
		t.Errorf("/livez failed %v after the Reconcile of hang began, before the limit %v and %d more periods of %v", took.Round(time.Millisecond), limit, failureThreshold-1, period)
	}
	// The answer and the probe say how long the Reconcile has run.
	ran := regexp.MustCompile(`max\(workqueue_longest_running_processor_seconds\{controller="` + regexp.QuoteMeta(controller) + `"\}\) = ([0-9.]+) \(want < 2s\)`)
	seconds := func(text string) float64 {
		m := ran.FindStringSubmatch(text)
		if m == nil {
			return 0
		}
		f, _ := strconv.ParseFloat(m[1], 64)
		return f
	}
	if code, body := exampletest.Get(livez + "?verbose"); code != http.StatusServiceUnavailable || !strings.Contains(body, "[-]reconcile failed: ") || seconds(body) < limit.Seconds() {
		t.Errorf("/livez?verbose while hung: %d %q; want 503, the check reconcile failed with the Reconcile's time, at least %v (want < 2s)", code, body, limit)
	}
	if code, body := exampletest.Get(health + "/healthz"); code != http.StatusOK {
		t.Errorf("the manager's own /healthz while hung: %d %q; want 200, as healthz.Ping answers whatever happens", code, body)
	}
	if code, stdout, stderr := probe(t, vitals, metrics, cond); code != 1 || seconds(stderr) < limit.Seconds() {
		t.Errorf("vitals probe --expr %q while hung: exit %d, %q %q; want 1, saying the Reconcile's time, at least %v", cond, code, stdout, stderr, limit)
	}
	code, stdout, stderr := probe(t, vitals, metrics, cond, "-o", "json")
	var result struct {
		OK            bool    `json:"ok"`
		ObservedValue float64 `json:"observedValue"`
		ObservedUnit  string  `json:"observedUnit"`
	}
	if err := json.Unmarshal([]byte(stdout), &result); err != nil || code != 1 || result.OK || result.ObservedValue < limit.Seconds() || result.ObservedUnit != "s" {
		t.Errorf("vitals probe --expr %q -o json while hung: exit %d, %q %q (%v); want 1, not ok, observedValue at least %v in observedUnit s", cond, code, stdout, stderr, err, limit.Seconds())
	}

	// Deleted, the ConfigMap's Reconcile stops waiting: /livez passes once
	// the waiting Reconcile has seen it, the queue said so, and a run passed.
	if err := c.Delete(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hang"}}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	_, passed := exampletest.WaitFor(t, livez, http.StatusOK, guard, "the hung Reconcile's ConfigMap deleted")
	took = passed.Sub(deleted)
	t.Logf("/livez passed %v after the ConfigMap was deleted", took.Round(time.Millisecond))
	if bound := deletedPoll + queueUpdate + period + slack; took > bound {
		t.Errorf("/livez passed %v after the ConfigMap was deleted, want within %v (its poll %v, the queue's update %v, a period %v, slack %v)",
			took.Round(time.Millisecond), bound, deletedPoll, queueUpdate, period, slack)
	}
	if code, stdout, stderr := probe(t, vitals, metrics, cond); code != 0 {
		t.Errorf("vitals probe --expr %q once the Reconcile returned: exit %d, %q %q; want 0", cond, code, stdout, stderr)
	}
}

// A manager whose workers never start, because its identity may list
// ConfigMaps but not the Secrets it also watches, so that its caches never
// sync, fails the recipe's progress check: requests wait, and no Reconcile
// finishes. The reconcile check passes all along, and so does a probe of
// its condition: no Reconcile runs to be timed, which is what a watchdog
// of Reconcile (the example beside this one) cannot see either. Once the
// identity may list Secrets, the workers start, reconcile, and /livez
// passes again.
func TestWorkersStalledBeforeReconcileFailTheProgressCondition(t *testing.T) {
	cfg := exampletest.RestConfig(t)
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ns := exampletest.CreateNamespace(t, c, "metrics-stall")
	controller := "stall-" + ns
	user := "manager-" + ns
	allow(t, c, ns, user, "configmaps")
	for _, name := range []string{"a", "b"} {
		exampletest.CreateConfigMap(t, c, ns, name, nil)
	}
	reconciled := make(chan string, 10)
	trace := func(name string) func() {
		return func() {
			select {
			case reconciled <- name:
			default:
			}
		}
	}
	as := rest.CopyConfig(cfg)
	as.Impersonate = rest.ImpersonationConfig{UserName: user}
	metrics, _ := startManager(t, as, Options{
		Namespace: ns, controllerName: controller, manyManagers: true, trace: trace,
		watchSecrets:     true,
		cacheSyncTimeout: 10 * time.Minute, // not to give up on the Secrets' cache before the test grants them
	}, controller)
	vitals := exampletest.BuildVitals(t)
	config, exprs := recipe(t, metrics, controller, "reconcile", "progress")
	base := exampletest.RunVitals(t, vitals, config)
	started := time.Now()
	livez := base + "/livez"

	// The ConfigMaps wait in the queue, no worker runs: no progress.
	_, failed := exampletest.WaitFor(t, livez, http.StatusServiceUnavailable, guard, "the workers never started")
	t.Logf("/livez failed %v after vitals started (period %v, failure threshold %d)", failed.Sub(started).Round(time.Millisecond), period, failureThreshold)
	stalled := regexp.MustCompile(`\[-\]progress failed: sum\(increase\(controller_runtime_reconcile_total\{controller="` + regexp.QuoteMeta(controller) +
		`"\}\[` + window.String() + `\]\)\) = 0 \(want > 0\) or sum\(workqueue_depth\{controller="` + regexp.QuoteMeta(controller) + `"\}\) = [1-9][0-9]* \(want == 0\)`)
	if code, body := exampletest.Get(livez + "?verbose"); code != http.StatusServiceUnavailable || !stalled.MatchString(body) || !strings.Contains(body, "[+]reconcile ok") {
		t.Errorf("/livez?verbose with the workers stalled: %d %q; want 503, the check progress failed with no Reconcile and requests waiting, the check reconcile ok", code, body)
	}
	if code, body := exampletest.Get(livez + "/reconcile"); code != http.StatusOK {
		t.Errorf("/livez/reconcile with the workers stalled: %d %q; want 200: no Reconcile runs, none has run long", code, body)
	}
	if code, stdout, stderr := probe(t, vitals, metrics, exprs["reconcile"]); code != 0 {
		t.Errorf("vitals probe --expr %q with the workers stalled: exit %d, %q %q; want 0: no Reconcile runs, none has run long", exprs["reconcile"], code, stdout, stderr)
	}
	select {
	case name := <-reconciled:
		t.Fatalf("the ConfigMap %s was reconciled, by a manager that may not list Secrets", name)
	default:
	}

	// Allowed Secrets, the cache syncs at its informer's next try, the
	// workers start and reconcile: progress.
	allow(t, c, ns, user, "secrets")
	granted := time.Now()
	body, passed := exampletest.WaitFor(t, livez+"?verbose", http.StatusOK, guard, "the manager allowed to list Secrets")
	t.Logf("/livez passed %v after the manager was allowed Secrets", passed.Sub(granted).Round(time.Millisecond))
	if !strings.Contains(body, "[+]progress ok") {
		t.Errorf("/livez?verbose once the manager may list Secrets: %q, want the check progress ok", body)
	}
	for range 2 {
		select {
		case <-reconciled:
		case <-time.After(guard):
			t.Fatal("the ConfigMaps a and b were not both reconciled once the manager may list Secrets")
		}
	}
}

// allow lets user get, list and watch resource (of the core group) in ns,
// by a Role and a RoleBinding.
func allow(t *testing.T, c client.Client, ns, user, resource string) {
	t.Helper()
	name := "read-" + resource
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{resource}, Verbs: []string{"get", "list", "watch"}}},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	for _, obj := range []client.Object{role, binding} {
		if err := c.Create(context.Background(), obj); err != nil {
			t.Fatalf("letting %s read %s in %s: %v", user, resource, ns, err)
		}
	}
}
