// Package fleet is vitals fleet: the pods of one or more namespaces as the
// vitals in each of them describe them to the API server, read back through
// client-go informers (a list, then a watch; no polling). A Fleet keeps the
// informers' caches and nothing else, so a restart loses nothing: the pods,
// with their vitals condition (kubernetes.condition in vitals.yaml), and
// the Events vitals wrote on them (source vitals: CheckFailed, CheckPassed,
// Restarted, the notices'). Rows and Select, pure functions of the cached
// objects, make the view that the page (Handler), its JSON and vitals fleet
// --once show.
//
// It reads through client-go's dynamic client, as package kube hands it
// out, and converts to k8s.io/api's types as objects arrive: the binary
// never links the typed clientset. The command (cli/fleet.go) parses the
// flags and calls this; this imports nothing of the agent.
package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/kube"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kubereport"
)

// Coalesce is how long a Fleet gathers changes before it tells its
// followers: a rollout changes hundreds of pods within a second, and each
// page reads the view once for all of them, well within the second in which
// the page promises a change.
const Coalesce = 100 * time.Millisecond

// eventSelector asks the API server for vitals's Events on pods only: the
// field source is an Event's source.component, or its reportingController
// when that is empty, so the Events of every other writer (the kubelet's,
// the scheduler's) never reach the cache.
var eventSelector = "involvedObject.kind=Pod,source=" + kubereport.Component

// byUID is the index of Events by the UID of the pod they are on.
const byUID = "uid"

// Config says what a Fleet watches.
type Config struct {
	// Client reads the API server (kube.Dynamic).
	Client dynamic.Interface
	// Namespaces are watched each on its own; [""] (metav1.NamespaceAll)
	// watches every namespace, which needs a ClusterRole.
	Namespaces []string
	// Selector narrows the pods, a label selector as kubectl -l spells it.
	// Default "": every pod.
	Selector string
	// Rows say how rows are built.
	Rows Options
	// Logger says when the API server refuses a list or a watch, or cannot
	// be reached. Default slog.Default().
	Logger *slog.Logger
}

// Fleet watches the pods and their vitals Events. Make one with New.
type Fleet struct {
	c      Config
	pods   []cache.SharedIndexInformer
	events []cache.SharedIndexInformer

	version atomic.Uint64 // counts the changes the informers have seen
	kick    chan struct{}

	mu      sync.Mutex
	changed chan struct{} // closed at the next change told, then made anew

	rowsMu sync.Mutex // one view is built at a time; the others wait for it
	cached []Row
	at     uint64 // the version cached was built at

	problems sync.Map // informer name → its last error (string), said once
}

// New makes the informers of c; Start starts them.
func New(c Config) (*Fleet, error) {
	if len(c.Namespaces) == 0 {
		return nil, errors.New("fleet: no namespace to watch")
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	f := &Fleet{c: c, kick: make(chan struct{}, 1), changed: make(chan struct{})}
	for _, ns := range c.Namespaces {
		pods := informer(c.Client, kube.Pods, ns, cache.Indexers{}, func(o *metav1.ListOptions) { o.LabelSelector = c.Selector })
		events := informer(c.Client, kube.Events, ns, cache.Indexers{byUID: eventUID}, func(o *metav1.ListOptions) { o.FieldSelector = eventSelector })
		for _, x := range []struct {
			inf       cache.SharedIndexInformer
			what      string
			transform cache.TransformFunc
		}{{pods, "pods", podOf}, {events, "events", eventOf}} {
			name := x.what
			if ns != "" {
				name += " in namespace " + ns
			}
			// Errors are said once each, here, rather than through klog
			// on every attempt of the reflector.
			if err := x.inf.SetWatchErrorHandler(func(_ *cache.Reflector, err error) { f.problem(name, err) }); err != nil {
				return nil, fmt.Errorf("fleet: %s: %w", name, err)
			}
			if err := x.inf.SetTransform(x.transform); err != nil {
				return nil, fmt.Errorf("fleet: %s: %w", name, err)
			}
			if _, err := x.inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
				AddFunc: func(any) { f.touch() }, UpdateFunc: func(any, any) { f.touch() }, DeleteFunc: func(any) { f.touch() },
			}); err != nil {
				return nil, fmt.Errorf("fleet: %s: %w", name, err)
			}
		}
		f.pods, f.events = append(f.pods, pods), append(f.events, events)
	}
	return f, nil
}

// informer is an informer of a resource in namespace, as client-go's
// dynamicinformer makes one; not through that package, which imports
// client-go's informers and so the typed clientset that vitals never links.
func informer(client dynamic.Interface, gvr schema.GroupVersionResource, namespace string, indexers cache.Indexers,
	narrow func(*metav1.ListOptions)) cache.SharedIndexInformer {
	r := client.Resource(gvr).Namespace(namespace)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			narrow(&o)
			return r.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			narrow(&o)
			return r.Watch(ctx, o)
		},
	}
	return cache.NewSharedIndexInformerWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, client), &unstructured.Unstructured{},
		cache.SharedIndexInformerOptions{Indexers: indexers, ObjectDescription: gvr.String()})
}

// Start runs the informers, and tells the followers of changes, until ctx
// ends.
func (f *Fleet) Start(ctx context.Context) {
	for _, inf := range slices.Concat(f.pods, f.events) {
		go inf.RunWithContext(ctx)
	}
	go f.tell(ctx)
}

// Synced says whether every informer has listed what it watches once.
func (f *Fleet) Synced() bool {
	for _, inf := range slices.Concat(f.pods, f.events) {
		if !inf.HasSynced() {
			return false
		}
	}
	return true
}

// WaitForSync waits until every informer has listed what it watches: an
// error when ctx ends first, with what the API server said.
func (f *Fleet) WaitForSync(ctx context.Context) error {
	var synced []cache.InformerSynced
	for _, inf := range slices.Concat(f.pods, f.events) {
		synced = append(synced, inf.HasSynced)
	}
	if cache.WaitForCacheSync(ctx.Done(), synced...) {
		return nil
	}
	var said []string
	f.problems.Range(func(name, err any) bool {
		said = append(said, fmt.Sprintf("%s: %s", name, err))
		return true
	})
	slices.Sort(said)
	if len(said) == 0 {
		return fmt.Errorf("kubernetes: the pods and their Events are not listed yet: %w", context.Cause(ctx))
	}
	return fmt.Errorf("kubernetes: cannot list %s", strings.Join(said, "; "))
}

// problem says an informer's error once, until it changes.
func (f *Fleet) problem(name string, err error) {
	if old, ok := f.problems.Swap(name, err.Error()); ok && old == err.Error() {
		return
	}
	f.c.Logger.Warn("kubernetes: cannot list or watch "+name+"; trying again with backoff", "err", err)
}

// touch notes a change seen by an informer.
func (f *Fleet) touch() {
	f.version.Add(1)
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

// tell closes the channel that Changed hands out at most once per
// Coalesce, after a change.
func (f *Fleet) tell(ctx context.Context) {
	for {
		select {
		case <-f.kick:
		case <-ctx.Done():
			return
		}
		select {
		case <-time.After(Coalesce):
		case <-ctx.Done():
			return
		}
		f.mu.Lock()
		close(f.changed)
		f.changed = make(chan struct{})
		f.mu.Unlock()
	}
}

// Changed is a channel closed at the next change, and the version of now.
func (f *Fleet) Changed() (<-chan struct{}, uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.changed, f.version.Load()
}

// Rows are the rows of every pod cached now, sorted by namespace and name:
// built once for each version of the caches, whoever asks.
func (f *Fleet) Rows() []Row {
	f.rowsMu.Lock()
	defer f.rowsMu.Unlock()
	// The version is read before the caches: a change after it makes the
	// next call build again, and is never missed.
	v := f.version.Load()
	if f.at == v && f.cached != nil {
		return f.cached
	}
	var pods []*corev1.Pod
	for _, inf := range f.pods {
		for _, o := range inf.GetStore().List() {
			if p, ok := o.(*corev1.Pod); ok {
				pods = append(pods, p)
			}
		}
	}
	f.cached, f.at = Rows(pods, f.eventsOf, f.c.Rows), v
	return f.cached
}

// eventsOf are the cached Events of the pod of uid.
func (f *Fleet) eventsOf(uid string) []*corev1.Event {
	var out []*corev1.Event
	for _, inf := range f.events {
		objs, _ := inf.GetIndexer().ByIndex(byUID, uid) // the index exists: New adds it
		for _, o := range objs {
			if e, ok := o.(*corev1.Event); ok {
				out = append(out, e)
			}
		}
	}
	return out
}

func eventUID(obj any) ([]string, error) {
	e, ok := obj.(*corev1.Event)
	if !ok {
		return nil, nil
	}
	return []string{string(e.InvolvedObject.UID)}, nil
}

// podOf is the pod of an object from the API server, with only what a row
// shows: the caches of 5,000 pods stay small. Its vitals condition keeps no
// message (the fleet shows none), nor does any other.
func podOf(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil // already converted
	}
	var p corev1.Pod
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), &p); err != nil {
		return nil, fmt.Errorf("the pod %s/%s: %w", u.GetNamespace(), u.GetName(), err)
	}
	kept := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID,
		ResourceVersion: p.ResourceVersion, Labels: p.Labels, CreationTimestamp: p.CreationTimestamp,
		DeletionTimestamp: p.DeletionTimestamp}}
	kept.Spec.NodeName = p.Spec.NodeName
	kept.Status.Phase = p.Status.Phase
	for _, c := range p.Status.Conditions {
		c.Message = ""
		kept.Status.Conditions = append(kept.Status.Conditions, c)
	}
	for _, cs := range slices.Concat(p.Status.InitContainerStatuses, p.Status.ContainerStatuses) {
		kept.Status.ContainerStatuses = append(kept.Status.ContainerStatuses, corev1.ContainerStatus{Name: cs.Name, RestartCount: cs.RestartCount})
	}
	return kept, nil
}

// eventOf is the Event of an object from the API server, without its
// managed fields.
func eventOf(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	var e corev1.Event
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), &e); err != nil {
		return nil, fmt.Errorf("the Event %s/%s: %w", u.GetNamespace(), u.GetName(), err)
	}
	e.ManagedFields = nil
	return &e, nil
}
