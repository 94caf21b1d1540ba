package kubewait

import (
	"context"
	"errors"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/kube/kubetest"
	"github.com/vitals-dev/vitals/internal/kubeenv"
)

func TestMain(m *testing.M) {
	// client-go's reflector logs each list that fails, which the tests
	// provoke; vitals sends its logs nowhere too (package target).
	klog.SetLogger(logr.Discard())
	code := m.Run()
	kubeenv.StopShared()
	os.Exit(code)
}

// fixture is a namespace of a test's own on a real API server, with an
// admin's client to play the controllers.
type fixture struct {
	env       *kubeenv.Env
	cs        *kubernetes.Clientset
	namespace string
}

func newFixture(t *testing.T, env *kubeenv.Env) *fixture {
	t.Helper()
	cs := kubetest.Client(t, env.Kubeconfig)
	return &fixture{env: env, cs: cs, namespace: kubetest.Namespace(t, cs, "kubewait")}
}

// config is the admin's client configuration.
func (f *fixture) config(t *testing.T) *rest.Config {
	t.Helper()
	return kubetest.Config(t, f.env.Kubeconfig)
}

// target is a prepared target in the fixture's namespace, as its admin.
func (f *fixture) target(t *testing.T, target string) *prepared {
	t.Helper()
	tg, err := Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	tg.Namespace = f.namespace
	p, err := prepare(f.config(t), tg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (f *fixture) createDeployment(t *testing.T, name string, replicas int32) {
	t.Helper()
	labels := map[string]string{"app": name}
	_, err := f.cs.AppsV1().Deployments(f.namespace).Create(context.Background(), &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// rollout sets a deployment's status as its controller would: updated and
// available replicas of replicas, for the generation it has.
func (f *fixture) rollout(t *testing.T, name string, replicas, updated, available int32) {
	t.Helper()
	ctx := context.Background()
	d, err := f.cs.AppsV1().Deployments(f.namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: replicas, UpdatedReplicas: updated,
		ReadyReplicas: available, AvailableReplicas: available}
	if _, err := f.cs.AppsV1().Deployments(f.namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// watching is a wait running in the background, as Watch (one target) or
// Wait (several) make it, its reports in a channel.
type watching struct {
	reports  chan Result
	returned chan error
	results  []Result    // what it returned, once it has
	result   Result      // the first target's
	ended    atomic.Bool // the wait has returned: a report now is a bug
}

func startWatch(t *testing.T, targets ...*prepared) *watching {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	w := &watching{reports: make(chan Result, 100), returned: make(chan error, 1)}
	go func() {
		rs, _, err := follow(ctx, targets, func(_ int, r Result) {
			if w.ended.Load() {
				t.Errorf("a report after the wait returned: %+v", r)
			}
			w.reports <- r
		})
		w.results, w.result = rs, rs[0]
		w.ended.Store(true)
		w.returned <- err
	}()
	t.Cleanup(func() {
		cancel()
		<-w.returned
	})
	return w
}

// next waits (a guard only) for a report whose message has text.
func (w *watching) next(t *testing.T, text string) Result {
	t.Helper()
	guard := time.After(60 * time.Second)
	var seen []string
	for {
		select {
		case r := <-w.reports:
			if strings.Contains(r.Message, text) {
				return r
			}
			seen = append(seen, r.Message)
		case <-guard:
			t.Fatalf("no report with %q within 60s; reports:\n%s", text, strings.Join(seen, "\n"))
		}
	}
}

func (w *watching) end(t *testing.T) error {
	t.Helper()
	select {
	case err := <-w.returned:
		w.returned <- err // for the cleanup
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("Watch did not return within 20s")
		return nil
	}
}

func TestWatchFollowsAnObjectThroughItsDeletionAndReturnsOnceReady(t *testing.T) {
	f := newFixture(t, kubeenv.SharedFor(t))
	f.createDeployment(t, "api", 2)
	f.rollout(t, "api", 2, 2, 1)
	w := startWatch(t, f.target(t, "k8s://deployment/api"))
	want := Result{APIVersion: "apps/v1", Kind: "Deployment", Namespace: f.namespace, Name: "api",
		Message: `Waiting for deployment "api" rollout to finish: 1 of 2 updated replicas are available...`}
	if r := w.next(t, "1 of 2 updated replicas are available"); !reflect.DeepEqual(r, want) {
		t.Fatalf("report %+v, want %+v", r, want)
	}
	if err := f.cs.AppsV1().Deployments(f.namespace).Delete(context.Background(), "api", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	w.next(t, `deployment "api" not found yet`)
	f.createDeployment(t, "api", 2)
	w.next(t, "Waiting for deployment spec update to be observed...")
	f.rollout(t, "api", 2, 2, 2)
	if r := w.next(t, `deployment "api" successfully rolled out`); !r.Ready {
		t.Fatalf("report %+v, want a pass", r)
	}
	if err := w.end(t); err != nil || !w.result.Ready || w.result.Name != "api" {
		t.Fatalf("the watch returned %+v, %v; want the deployment ready, and nil", w.result, err)
	}
}

func TestWatchOfAnObjectReadyAlreadyReturnsAtOnce(t *testing.T) {
	f := newFixture(t, kubeenv.SharedFor(t))
	f.createDeployment(t, "api", 1)
	f.rollout(t, "api", 1, 1, 1)
	w := startWatch(t, f.target(t, "k8s://deploy/api"))
	if err := w.end(t); err != nil {
		t.Fatalf("Watch returned %v, want nil", err)
	}
	if r := <-w.reports; !r.Ready || r.Message != `deployment "api" successfully rolled out` {
		t.Fatalf("report %+v", r)
	}
}

func TestWatchReturnsWhyAnObjectCanNeverBeReady(t *testing.T) {
	f := newFixture(t, kubeenv.SharedFor(t))
	_, err := f.cs.CoreV1().Pods(f.namespace).Create(context.Background(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "once"},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w := startWatch(t, f.target(t, "k8s://pod/once"))
	w.next(t, `Waiting for pod "once" to be ready: Pending`)
	p, err := f.cs.CoreV1().Pods(f.namespace).Get(context.Background(), "once", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = corev1.PodSucceeded
	if _, err := f.cs.CoreV1().Pods(f.namespace).UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := w.end(t); err == nil || err.Error() != `pod "once" has completed (phase Succeeded) and will not become ready` {
		t.Fatalf("Watch returned %v", err)
	}
}

// The API server goes away while a rollout is under way: the watch says it
// cannot reach it, and once it is back, says the rollout's status again
// (nothing changed, so no event would) and follows it to the end.
func TestWatchSaysTheAPIServerIsGoneAndGoesOnWhenItIsBack(t *testing.T) {
	env, err := kubeenv.Start() // its own: this test stops it
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Stop() })
	f := newFixture(t, env)
	f.createDeployment(t, "api", 3)
	f.rollout(t, "api", 3, 3, 2)
	w := startWatch(t, f.target(t, "k8s://deployment/api"))
	const status = `Waiting for deployment "api" rollout to finish: 2 of 3 updated replicas are available...`
	w.next(t, status)
	if err := env.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	if r := w.next(t, "cannot reach the API server at "+env.Server+": "); !strings.Contains(r.Message, "connection refused") || r.Name != "api" {
		t.Errorf("report %+v, want connection refused, for deployment api", r)
	}
	if err := env.StartAPIServer(); err != nil {
		t.Fatal(err)
	}
	w.next(t, status)
	f.rollout(t, "api", 3, 3, 3)
	w.next(t, `deployment "api" successfully rolled out`)
	if err := w.end(t); err != nil {
		t.Fatalf("Watch returned %v, want nil", err)
	}
}

// A follower's bookkeeping, without a server: a failed request is reported,
// the first request that succeeds after it reports the status again (a
// watch that resumes where it was has no event to say it), and nothing is
// reported for a request the watch's own end cut short, or after the end.
func TestAFollowerSaysTheStatusAgainOnceTheAPIServerAnswersAgain(t *testing.T) {
	p := fakeTarget(t, &resource{})
	var reports []string
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &follower{p: p, ctx: ctx, report: func(r Result) { reports = append(reports, r.Message) }}
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	replicas := int32(2)
	d, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "shop", Generation: 1},
		Spec:       appsv1.DeploymentSpec{Replicas: &replicas},
		Status:     appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	store.Add(&unstructured.Unstructured{Object: d})
	const status = `Waiting for deployment "api" rollout to finish: 1 of 2 updated replicas are available...`

	f.answered(ctx, nil) // the first list: nothing to say yet
	if done, err := f.look(store); done || err != nil {
		t.Fatalf("look: %v, %v", done, err)
	}
	f.answered(ctx, nil) // a watch: all is well, nothing to say
	refused := &url.Error{Op: "Get", URL: "https://k8s.example:6443/apis/apps/v1/…", Err: errors.New("dial tcp 10.0.0.1:6443: connect: connection refused")}
	f.answered(ctx, refused)
	f.answered(ctx, refused)
	f.answered(ctx, nil) // back
	ended, stop := context.WithCancel(ctx)
	stop()
	f.answered(ended, errors.New("context canceled")) // cut short by the watch's end
	want := []string{
		status,
		"cannot reach the API server at https://k8s.example:6443: dial tcp 10.0.0.1:6443: connect: connection refused",
		"cannot reach the API server at https://k8s.example:6443: dial tcp 10.0.0.1:6443: connect: connection refused",
		status,
	}
	if !slices.Equal(reports, want) {
		t.Fatalf("reports\n%s\nwant\n%s", strings.Join(reports, "\n"), strings.Join(want, "\n"))
	}
	f.end()
	f.answered(ctx, refused)
	if len(reports) != len(want) {
		t.Fatalf("a report after the end: %q", reports[len(want):])
	}
}

// resource is a dynamic client for one resource without a server: List and
// Watch do what a test says, and the rest is never called by Watch.
type resource struct {
	dynamic.ResourceInterface
	list     func(context.Context) (*unstructured.UnstructuredList, error)
	watch    func(context.Context) (watch.Interface, error) // nil: refused
	streamed atomic.Bool                                    // a streaming list (watch-list) was asked for
}

func (r *resource) List(ctx context.Context, _ metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return r.list(ctx)
}

func (r *resource) Watch(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	if o.SendInitialEvents != nil && *o.SendInitialEvents {
		r.streamed.Store(true)
	}
	if r.watch == nil {
		return nil, refused
	}
	return r.watch(ctx)
}

var refused = &url.Error{Op: "Get", URL: "https://k8s.example:6443/apis/apps/v1/…", Err: errors.New("dial tcp 10.0.0.1:6443: connect: connection refused")}

// fakeTarget is k8s://deployment/api in namespace shop, read through r.
func fakeTarget(t *testing.T, r *resource) *prepared {
	t.Helper()
	c, err := Target{Resource: "deployment", Name: "api", Namespace: "shop"}.check()
	if err != nil {
		t.Fatal(err)
	}
	m := c.kind.mapping()
	return &prepared{Target: Target{Resource: "deployment", Name: "api", Namespace: "shop"}, compiled: c,
		server: "https://k8s.example:6443", client: fakeDynamic{r}, found: &m}
}

// fakeDynamic is a dynamic client whose every resource, in every namespace,
// is r.
type fakeDynamic struct{ r *resource }

func (d fakeDynamic) Resource(schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return namespaced{d.r}
}

type namespaced struct{ *resource }

func (n namespaced) Namespace(string) dynamic.ResourceInterface { return n.resource }

// An API server that cannot be reached from the start is reported: Watch
// lists, and does not stream, as a streaming list that fails is retried in
// silence, with a backoff that ignores the end of the wait.
func TestWatchListsRatherThanStreamsAndSaysTheAPIServerCannotBeReached(t *testing.T) {
	r := &resource{list: func(context.Context) (*unstructured.UnstructuredList, error) { return nil, refused }}
	w := startWatch(t, fakeTarget(t, r))
	w.next(t, "cannot reach the API server at https://k8s.example:6443: dial tcp 10.0.0.1:6443: connect: connection refused")
	if r.streamed.Load() {
		t.Error("Watch asked for a streaming list")
	}
}

// Watch returns when its context ends, even while client-go is still busy
// with a request that does not heed it (and UntilWithSync waits for it).
func TestWatchReturnsWhenItsContextEndsWithoutWaitingForClientGo(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	r := &resource{
		list: func(context.Context) (*unstructured.UnstructuredList, error) {
			l := &unstructured.UnstructuredList{}
			l.SetResourceVersion("1")
			return l, nil
		},
		watch: func(context.Context) (watch.Interface, error) {
			<-release // deaf to its context
			return nil, refused
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	reports := make(chan Result, 10)
	returned := make(chan error, 1)
	go func() {
		err := fakeTarget(t, r).watch(ctx, func(r Result) { reports <- r })
		returned <- err
	}()
	select {
	case r := <-reports:
		if r.Message != `deployment "api" not found yet` {
			t.Fatalf("report %+v", r)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no report within 20s")
	}
	cancel()
	select {
	case err := <-returned:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Watch returned %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Watch did not return within 10s of its context's end")
	}
}
