package kubereport_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/kube"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kube/kubetest"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kubereport"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/internal/kubeenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	kubeenv.StopShared()
	os.Exit(code)
}

// condition is the pod condition type of these tests.
const condition = "vitals.dev/ready"

// wait is how long a test waits for what it expects: a guard, no
// measurement.
const wait = 30 * time.Second

// cluster is a namespace of a real API server with one pod in it, as the
// admin sees them.
type cluster struct {
	env   *kubeenv.Env
	admin kubernetes.Interface
	ns    string
	pod   *corev1.Pod
}

var namespaces atomic.Int64

// newCluster makes a namespace of its own for the test, with a pod that
// has a readiness gate on the condition. No kubelet runs: the pod stays
// Pending, which the condition does not care about.
func newCluster(t *testing.T, env *kubeenv.Env) *cluster {
	t.Helper()
	c := &cluster{env: env, admin: typedClient(t, env.Kubeconfig), ns: fmt.Sprintf("kubereport-%d-%d", os.Getpid(), namespaces.Add(1))}
	ctx := context.Background()
	if _, err := c.admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod, err := c.admin.CoreV1().Pods(c.ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "app"},
		Spec: corev1.PodSpec{
			Containers:     []corev1.Container{{Name: "app", Image: "example.invalid/app:1"}},
			ReadinessGates: []corev1.PodReadinessGate{{ConditionType: condition}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.pod = pod
	return c
}

func typedClient(t *testing.T, kubeconfig string) kubernetes.Interface {
	t.Helper()
	return kubetest.Client(t, kubeconfig)
}

// dynamicClient is what vitals uses, for kubeconfig; wrap, if not nil,
// wraps its transport.
func dynamicClient(t *testing.T, kubeconfig string, wrap func(http.RoundTripper) http.RoundTripper) dynamic.Interface {
	t.Helper()
	cfg, _, err := kube.Connect(kube.Options{Kubeconfig: kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	cfg.WarningHandler = rest.NoWarnings{}
	if wrap != nil {
		cfg.Wrap(wrap)
	}
	client, err := kube.Dynamic(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// grant gives the restricted user these rules in the namespace.
func (c *cluster) grant(t *testing.T, rules ...rbacv1.PolicyRule) {
	t.Helper()
	ctx := context.Background()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "vitals"}, Rules: rules}
	if _, err := c.admin.RbacV1().Roles(c.ns).Get(ctx, "vitals", metav1.GetOptions{}); err == nil {
		if _, err := c.admin.RbacV1().Roles(c.ns).Update(ctx, role, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		return
	}
	if _, err := c.admin.RbacV1().Roles(c.ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.admin.RbacV1().RoleBindings(c.ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "vitals"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "vitals"},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: c.env.RestrictedUser}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// The rules of the Role in docs/kubernetes.md.
var (
	getPods         = rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}
	patchPodStatus  = rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods/status"}, Verbs: []string{"patch"}}
	writeEvents     = rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}}
	errNoCondition  = errors.New("no condition")
	discardedLogger = slog.New(slog.DiscardHandler)
)

// podCondition returns the pod's condition of the tests' type.
func (c *cluster) podCondition(t *testing.T) (corev1.PodCondition, error) {
	t.Helper()
	pod, err := c.admin.CoreV1().Pods(c.ns).Get(context.Background(), c.pod.Name, metav1.GetOptions{})
	if err != nil {
		return corev1.PodCondition{}, err
	}
	for _, pc := range pod.Status.Conditions {
		if pc.Type == condition {
			return pc, nil
		}
	}
	return corev1.PodCondition{}, errNoCondition
}

// waitCondition waits until the condition has status and reason, and
// returns it.
func (c *cluster) waitCondition(t *testing.T, status corev1.ConditionStatus, reason string) corev1.PodCondition {
	t.Helper()
	var last corev1.PodCondition
	var err error
	for deadline := time.Now().Add(wait); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		last, err = c.podCondition(t)
		if err == nil && last.Status == status && last.Reason == reason {
			return last
		}
	}
	t.Fatalf("the pod's condition %s is not %s (%s) within %v: %+v %v", condition, status, reason, wait, last, err)
	return last
}

// events returns the Events on the pod with the reason.
func (c *cluster) events(t *testing.T, reason string) []corev1.Event {
	t.Helper()
	list, err := c.admin.CoreV1().Events(c.ns).List(context.Background(), metav1.ListOptions{
		FieldSelector: "involvedObject.name=" + c.pod.Name + ",reason=" + reason})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// waitEvent waits for an Event with the reason whose message has want in
// it, and returns it.
func (c *cluster) waitEvent(t *testing.T, reason, want string) corev1.Event {
	t.Helper()
	var seen []string
	for deadline := time.Now().Add(wait); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		seen = seen[:0]
		for _, e := range c.events(t, reason) {
			if strings.Contains(e.Message, want) {
				return e
			}
			seen = append(seen, e.Message)
		}
	}
	t.Fatalf("no Event %s with %q within %v; those with the reason: %q", reason, want, wait, seen)
	return corev1.Event{}
}

// switchCheck fails while failing is set, with the kubelet's words for a
// 503.
type switchCheck struct{ failing atomic.Bool }

func (s *switchCheck) Check(context.Context) error {
	if s.failing.Load() {
		return errors.New("HTTP probe failed with statuscode: 503")
	}
	return nil
}

// monitor runs one ready check, db, of sw, judged at every run: a flip of
// sw is a flip of the check within a period.
func monitor(t *testing.T, sw *switchCheck) *health.Monitor {
	t.Helper()
	m := health.New(health.WithLogger(discardedLogger))
	if err := m.Add(health.Check{Name: "db", Level: health.Ready, Checker: sw, Period: 20 * time.Millisecond,
		Timeout: 20 * time.Millisecond, SuccessThreshold: 1, FailureThreshold: 1}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); <-m.Done() })
	m.Start(ctx)
	return m
}

// start starts a Reporter of o for the cluster's pod, stopped (within 10s)
// at the end of the test.
func (c *cluster) start(t *testing.T, o kubereport.Options) *kubereport.Reporter {
	t.Helper()
	o.Pod, o.Namespace = c.pod.Name, c.ns
	r := kubereport.New(o)
	r.Start()
	t.Cleanup(func() { stop(t, r) })
	return r
}

func stop(t *testing.T, r *kubereport.Reporter) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Stop(ctx); err != nil {
		t.Errorf("Stop: %v", err)
	}
}

// waitFor waits until ok, or fails saying what.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(wait); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("%s: not within %v", what, wait)
}

func TestEventsAndTheConditionFollowACheck(t *testing.T) {
	c := newCluster(t, kubeenv.SharedFor(t))
	// A previous run of vitals in this pod left the condition True, an hour
	// ago: found True again, it keeps that time.
	before := metav1.NewTime(time.Now().Add(-time.Hour).UTC().Truncate(time.Second))
	c.pod.Status.Conditions = append(c.pod.Status.Conditions, corev1.PodCondition{Type: condition, Status: corev1.ConditionTrue,
		Reason: kubereport.ReasonChecksPassed, Message: "from before", LastTransitionTime: before})
	if _, err := c.admin.CoreV1().Pods(c.ns).UpdateStatus(context.Background(), c.pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	sw := &switchCheck{}
	m := monitor(t, sw)
	waitFor(t, "the ready level passes", func() bool { return m.Passing(health.Ready) })
	logs := &vitalstest.Buffer{}
	r := c.start(t, kubereport.Options{Monitor: m, Client: dynamicClient(t, c.env.Kubeconfig, nil),
		Events: true, Condition: condition, Logger: logs.Logger()})

	waitFor(t, "the condition is written", func() bool {
		pc, err := c.podCondition(t)
		return err == nil && pc.Message == "every check of the ready level passes"
	})
	if pc, _ := c.podCondition(t); pc.Status != corev1.ConditionTrue || !pc.LastTransitionTime.Equal(&before) {
		t.Fatalf("condition %+v: want True since %v, as the pod had it", pc, before)
	}
	passed := c.waitEvent(t, kubereport.ReasonCheckPassed, `Readiness check "db" passed`)
	if passed.Type != corev1.EventTypeNormal || passed.Source.Component != "vitals" || passed.ReportingController != "vitals" ||
		passed.InvolvedObject.Kind != "Pod" || passed.InvolvedObject.Name != "app" || passed.InvolvedObject.UID != c.pod.UID {
		t.Fatalf("Event %+v", passed)
	}

	sw.failing.Store(true)
	failed := c.waitCondition(t, corev1.ConditionFalse, kubereport.ReasonChecksFailed)
	if failed.Message != "db failed: HTTP probe failed with statuscode: 503" || !failed.LastTransitionTime.After(before.Time) {
		t.Fatalf("condition %+v: want the failing check and why, and a new transition time", failed)
	}
	e := c.waitEvent(t, kubereport.ReasonCheckFailed, `Readiness check "db" failed: HTTP probe failed with statuscode: 503`)
	if e.Type != corev1.EventTypeWarning || e.InvolvedObject.UID != c.pod.UID {
		t.Fatalf("Event %+v", e)
	}

	sw.failing.Store(false)
	c.waitCondition(t, corev1.ConditionTrue, kubereport.ReasonChecksPassed)
	if got := c.events(t, kubereport.ReasonCheckPassed); len(got) != 1 || got[0].Count != 2 {
		t.Errorf("CheckPassed Events %+v: want one, counted twice (pending -> pass, fail -> pass)", got)
	}

	// The agent says how its workload exited, then that it started it again.
	code := 1
	m.Emit(health.Event{Type: health.EventServiceExited, Service: "app", PID: 10, ExitCode: &code, Reason: "crash"})
	m.Emit(health.Event{Type: health.EventServiceStarted, Service: "app", PID: 11, Restarts: 1})
	restarted := c.waitEvent(t, kubereport.ReasonRestarted, "Restarted app after it exited with code 1 (crash)")
	if restarted.Type != corev1.EventTypeNormal {
		t.Fatalf("Event %+v", restarted)
	}

	m.Emit(health.Event{Type: health.EventStopping, Output: "signal"})
	m.Drain()
	draining := c.waitCondition(t, corev1.ConditionFalse, kubereport.ReasonDraining)
	if draining.Message != "vitals is stopping (signal): readiness fails from now on" {
		t.Fatalf("condition %+v", draining)
	}
	stop(t, r)
	if strings.Contains(logs.String(), "level=WARN") {
		t.Fatalf("warnings with an API server that takes every write:\n%s", logs)
	}
}

// A notice is a Normal Event on the pod, its reason from its key and its
// message its key and data; the same notice again raises the count of the
// one written, as Pebble counts a notice's occurrences.
func TestANoticeIsANormalEventOnThePod(t *testing.T) {
	c := newCluster(t, kubeenv.SharedFor(t))
	m := monitor(t, &switchCheck{})
	logs := &vitalstest.Buffer{}
	c.start(t, kubereport.Options{Monitor: m, Client: dynamicClient(t, c.env.Kubeconfig, nil), Events: true, Logger: logs.Logger()})
	data := map[string]string{"generation": "4", "path": "/etc/app.conf"}
	if _, err := m.Notify("example.com/config-reloaded", data); err != nil {
		t.Fatal(err)
	}
	e := c.waitEvent(t, "ConfigReloaded", `Notice "example.com/config-reloaded": generation=4 path=/etc/app.conf`)
	if e.Type != corev1.EventTypeNormal || e.Source.Component != "vitals" || e.InvolvedObject.UID != c.pod.UID {
		t.Fatalf("Event %+v", e)
	}
	if _, err := m.Notify("example.com/config-reloaded", data); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the same notice counted twice", func() bool {
		got := c.events(t, "ConfigReloaded")
		return len(got) == 1 && got[0].Count == 2
	})
	if strings.Contains(logs.String(), "level=WARN") {
		t.Fatalf("warnings with an API server that takes every write:\n%s", logs)
	}
}

// Notices have a spam-filter budget of their own: a workload that posts
// more notices than the burst of 25 uses up its own, and the CheckPassed
// Event after them is still written.
func TestManyNoticesDoNotPushOutTheChecksEvents(t *testing.T) {
	c := newCluster(t, kubeenv.SharedFor(t))
	sw := &switchCheck{}
	sw.failing.Store(true) // not passing until after the notices
	m := monitor(t, sw)
	r := c.start(t, kubereport.Options{Monitor: m, Client: dynamicClient(t, c.env.Kubeconfig, nil), Events: true, Logger: discardedLogger})
	const notices = 40 // past the burst of 25
	for range notices {
		if _, err := m.Notify("example.com/config-reloaded", nil); err != nil {
			t.Fatal(err)
		}
	}
	sw.failing.Store(false) // after the notices in the event log
	c.waitEvent(t, kubereport.ReasonCheckPassed, `Readiness check "db" passed`)
	stop(t, r) // writes what is left
	got := c.events(t, "ConfigReloaded")
	if len(got) != 1 || got[0].Count < 2 || got[0].Count >= notices {
		t.Fatalf("ConfigReloaded Events %+v: want one, its count above 1 and below the %d notices (the spam filter held them)", got, notices)
	}
}

func TestWhatTheAPIServerRefusesIsSaidOnceAndHoldsNothingUp(t *testing.T) {
	c := newCluster(t, kubeenv.SharedFor(t))
	// The Role without pods/status: the condition is refused, the Events
	// are not.
	c.grant(t, getPods, writeEvents)
	var statusPatches atomic.Int64
	countStatusPatches := func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodPatch && strings.HasSuffix(req.URL.Path, "/pods/app/status") {
				statusPatches.Add(1)
			}
			return rt.RoundTrip(req)
		})
	}
	sw := &switchCheck{}
	sw.failing.Store(true)
	m := monitor(t, sw)
	probes := httptest.NewServer(m.Handler())
	defer probes.Close()
	logs := &vitalstest.Buffer{}
	c.start(t, kubereport.Options{Monitor: m, Client: dynamicClient(t, c.env.RestrictedKubeconfig, countStatusPatches),
		Events: true, Condition: condition, Logger: logs.Logger(),
		BackoffInitial: 20 * time.Millisecond, BackoffMax: 100 * time.Millisecond})

	c.waitEvent(t, kubereport.ReasonCheckFailed, `Readiness check "db" failed`)
	runs := func() int { s, _ := m.CheckState("db"); return s.Runs }
	before := runs()
	waitFor(t, "several refused patches of the pod's status", func() bool { return statusPatches.Load() >= 6 })
	// Meanwhile the checks run and the probe endpoints answer.
	if runs() <= before {
		t.Errorf("the check ran %d times, then %d", before, runs())
	}
	res, err := http.Get(probes.URL + "/readyz?verbose")
	if err != nil || res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("/readyz: %v %v", res, err)
	}
	res.Body.Close()
	sw.failing.Store(false)
	c.waitEvent(t, kubereport.ReasonCheckPassed, `Readiness check "db" passed`)

	const refused = `cannot patch resource \"pods/status\"`
	if n := strings.Count(logs.String(), refused); n != 1 {
		t.Fatalf("the refusal is logged %d times over %d attempts, want once:\n%s", n, statusPatches.Load(), logs)
	}
	if !strings.Contains(logs.String(), `level=WARN msg="kubernetes: cannot write the pod condition vitals.dev/ready; trying again with backoff, the latest state only"`) ||
		!strings.Contains(logs.String(), `pods \"app\" is forbidden: User \"`+c.env.RestrictedUser+`\"`) {
		t.Fatalf("the warning does not say what and why:\n%s", logs)
	}
	if strings.Contains(logs.String(), "cannot write Events") || strings.Contains(logs.String(), "cannot read the pod") {
		t.Fatalf("what works is said to fail:\n%s", logs)
	}

	// Given the right, the condition catches up, and that is said once.
	c.grant(t, getPods, writeEvents, patchPodStatus)
	c.waitCondition(t, corev1.ConditionTrue, kubereport.ReasonChecksPassed)
	waitFor(t, "the recovery is logged", func() bool {
		return strings.Contains(logs.String(), `level=INFO msg="kubernetes: the pod condition vitals.dev/ready is written again"`)
	})
	if n := strings.Count(logs.String(), refused); n != 1 {
		t.Fatalf("the refusal is logged %d times, want once:\n%s", n, logs)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func TestTheConditionCatchesUpOnceTheAPIServerIsBack(t *testing.T) {
	env, err := kubeenv.Start() // its own: this test stops its API server
	if err != nil {
		t.Fatal(err)
	}
	defer env.Stop()
	c := newCluster(t, env)
	sw := &switchCheck{}
	m := monitor(t, sw)
	logs := &vitalstest.Buffer{}
	c.start(t, kubereport.Options{Monitor: m, Client: dynamicClient(t, env.Kubeconfig, nil),
		Condition: condition, Logger: logs.Logger(), BackoffMax: 2 * time.Second})
	c.waitCondition(t, corev1.ConditionTrue, kubereport.ReasonChecksPassed)

	if err := env.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	// The check flips while the API server is away, and ends failing.
	for i := range 6 {
		sw.failing.Store(i%2 == 0)
		want := i%2 == 1
		waitFor(t, "the check flips", func() bool { return m.Passing(health.Ready) == want })
		time.Sleep(100 * time.Millisecond)
	}
	sw.failing.Store(true)
	waitFor(t, "the check fails", func() bool { return !m.Passing(health.Ready) })
	waitFor(t, "the failed writes are said", func() bool {
		return strings.Contains(logs.String(), "kubernetes: cannot write the pod condition")
	})
	if err := env.StartAPIServer(); err != nil {
		t.Fatal(err)
	}
	pc := c.waitCondition(t, corev1.ConditionFalse, kubereport.ReasonChecksFailed)
	if pc.Message != "db failed: HTTP probe failed with statuscode: 503" {
		t.Fatalf("condition %+v", pc)
	}
	waitFor(t, "the recovery is said", func() bool {
		return strings.Contains(logs.String(), "kubernetes: the pod condition vitals.dev/ready is written again")
	})
	if n := strings.Count(logs.String(), "cannot write the pod condition"); n != 1 {
		t.Fatalf("the failure is logged %d times, want once:\n%s", n, logs)
	}
}

func TestAFlappingCheckDoesNotFloodTheAPIServer(t *testing.T) {
	c := newCluster(t, kubeenv.SharedFor(t))
	sw := &switchCheck{}
	m := monitor(t, sw)
	r := c.start(t, kubereport.Options{Monitor: m, Client: dynamicClient(t, c.env.Kubeconfig, nil),
		Events: true, Condition: condition, Logger: discardedLogger})
	waitFor(t, "the check passes", func() bool { return m.Passing(health.Ready) })
	const flips = 40
	for i := range flips {
		sw.failing.Store(true)
		waitFor(t, "the check fails", func() bool { return !m.Passing(health.Ready) })
		sw.failing.Store(i == flips-1) // it ends failing
		if i < flips-1 {
			waitFor(t, "the check passes", func() bool { return m.Passing(health.Ready) })
		}
	}
	failedEvents := 0
	for _, ev := range m.Events(0) {
		if ev.Type == health.EventCheckFailed {
			failedEvents++
		}
	}
	if failedEvents < flips {
		t.Fatalf("%d check-failed events, want %d", failedEvents, flips)
	}
	stop(t, r) // writes what is left

	pc, err := c.podCondition(t)
	if err != nil || pc.Status != corev1.ConditionFalse || pc.Reason != kubereport.ReasonChecksFailed {
		t.Fatalf("condition %+v %v: want the final state, False", pc, err)
	}
	objects, count := 0, int32(0)
	for _, e := range c.events(t, kubereport.ReasonCheckFailed) {
		objects++
		count += e.Count
	}
	// The same Event again raises the count of one object, and the spam
	// filter passes a burst of 25 of a type, then one per 5 minutes.
	if objects != 1 || count < 2 || count >= int32(failedEvents) {
		t.Fatalf("%d CheckFailed Events counting %d for %d failures: want one object, its count above 1 and below the failures", objects, count, failedEvents)
	}
	all, err := c.admin.CoreV1().Events(c.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Items) > 4 {
		t.Fatalf("%d Events for %d flips", len(all.Items), flips)
	}
}

func TestStopSaysWhatItLeftUnwritten(t *testing.T) {
	c := newCluster(t, kubeenv.SharedFor(t))
	// No rights at all: not even the pod can be read.
	m := monitor(t, &switchCheck{})
	logs := &vitalstest.Buffer{}
	r := kubereport.New(kubereport.Options{Monitor: m, Client: dynamicClient(t, c.env.RestrictedKubeconfig, nil),
		Pod: c.pod.Name, Namespace: c.ns, Events: true, Condition: condition, Logger: logs.Logger(),
		BackoffInitial: 20 * time.Millisecond})
	r.Start()
	waitFor(t, "the refusal is said", func() bool { return strings.Contains(logs.String(), "kubernetes: cannot read the pod") })
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := r.Stop(ctx)
	if err == nil || err.Error() != "kubernetes: vitals stopped before everything was written (the pod could not be read): context deadline exceeded" {
		t.Fatalf("Stop: %v", err)
	}
	if n := strings.Count(logs.String(), `pods \"app\" is forbidden`); n != 1 {
		t.Fatalf("the refusal is logged %d times, want once:\n%s", n, logs)
	}
	// Once stopped, stopped.
	if err := r.Stop(context.Background()); err != nil {
		t.Fatalf("Stop again: %v", err)
	}
	// A Reporter that never started has nothing to stop.
	if err := kubereport.New(kubereport.Options{Monitor: m}).Stop(context.Background()); err != nil {
		t.Fatalf("Stop without Start: %v", err)
	}
}
