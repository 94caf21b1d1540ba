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
// It reads through a REST client of its own, as protobuf decoded into
// k8s.io/api's types (coreClient): the binary never links the typed
// clientset. The command (cli/fleet.go) parses the
// flags and calls this; this imports nothing of the agent.
package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
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
	// Kube says where the API server is and who reads it (kube.Connect).
	Kube *rest.Config
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

	problems sync.Map // informer name → its last error (string), said once, until it lists again
	names    map[cache.SharedIndexInformer]string
}

// New makes the informers of c; Start starts them.
func New(c Config) (*Fleet, error) {
	if len(c.Namespaces) == 0 {
		return nil, errors.New("fleet: no namespace to watch")
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	client, err := coreClient(c.Kube)
	if err != nil {
		return nil, err
	}
	f := &Fleet{c: c, kick: make(chan struct{}, 1), changed: make(chan struct{}), names: map[cache.SharedIndexInformer]string{}}
	for _, ns := range c.Namespaces {
		in := ""
		if ns != "" {
			in = " in namespace " + ns
		}
		pods := informer(client, kube.Pods, ns, &corev1.Pod{}, &corev1.PodList{}, cache.Indexers{},
			func(o *metav1.ListOptions) { o.LabelSelector = c.Selector }, func() { f.reached("pods" + in) })
		events := informer(client, kube.Events, ns, &corev1.Event{}, &corev1.EventList{}, cache.Indexers{byUID: eventUID},
			func(o *metav1.ListOptions) { o.FieldSelector = eventSelector }, func() { f.reached("events" + in) })
		for _, x := range []struct {
			inf       cache.SharedIndexInformer
			what      string
			transform cache.TransformFunc
		}{{pods, "pods", f.cachePod}, {events, "events", f.cacheEvent}} {
			name := x.what + in
			f.names[x.inf] = name
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

// coreClient is a client of the core API group that reads pods and Events
// as protobuf, straight into k8s.io/api's types. The dynamic client's JSON,
// decoded into maps and then converted, cost 120µs of CPU per object: the
// first list of 5,000 pods and 50,000 Events took seconds. Protobuf is what
// the API server keeps them in, so it encodes them cheaply too.
func coreClient(config *rest.Config) (*rest.RESTClient, error) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("fleet: register core/v1: %w", err)
	}
	c := rest.CopyConfig(config)
	c.APIPath = "/api"
	c.GroupVersion = &corev1.SchemeGroupVersion
	c.ContentType = runtime.ContentTypeProtobuf
	c.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	c.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	client, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: a client for %s: %w", config.Host, err)
	}
	return client, nil
}

// informer is an informer of a resource in namespace, of objects like
// object, listed into lists like list. It is not client-go's typed
// informers', which would link the typed clientset that vitals never links.
// reached is called each time the API server answers a list or starts a
// watch: the informer reads again. With the API server's streaming list (a
// watch that sends the initial objects, client-go's default where the
// server has it), the informer never lists.
func informer(client rest.Interface, gvr schema.GroupVersionResource, namespace string, object runtime.Object, list runtime.Object,
	indexers cache.Indexers, narrow func(*metav1.ListOptions), reached func()) cache.SharedIndexInformer {
	request := func(o *metav1.ListOptions) *rest.Request {
		narrow(o)
		return client.Get().Namespace(namespace).Resource(gvr.Resource).VersionedParams(o, metav1.ParameterCodec)
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			into := list.DeepCopyObject()
			if err := request(&o).Do(ctx).Into(into); err != nil {
				return into, err
			}
			reached()
			return into, nil
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.Watch = true
			w, err := request(&o).Watch(ctx)
			if err == nil {
				reached()
			}
			return w, err
		},
	}
	return cache.NewSharedIndexInformerWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, client), object,
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
	for _, inf := range slices.Concat(f.pods, f.events) {
		if err, ok := f.problems.Load(f.names[inf]); ok && !inf.HasSynced() { // what listed since has no say
			said = append(said, fmt.Sprintf("%s: %s", f.names[inf], err))
		}
	}
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

// reached notes that the API server answered an informer again: a
// problem it had is gone, and said to be, so that the next one is said
// again.
func (f *Fleet) reached(name string) {
	if _, had := f.problems.LoadAndDelete(name); had {
		f.c.Logger.Info("kubernetes: "+name+" read again", "informer", name)
	}
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
	rows, _ := f.RowsAt()
	return rows
}

// RowsAt are Rows, and the version of the caches they were built at.
func (f *Fleet) RowsAt() ([]Row, uint64) {
	f.rowsMu.Lock()
	defer f.rowsMu.Unlock()
	// The version is read before the caches: a change after it makes the
	// next call build again, and is never missed.
	v := f.version.Load()
	if f.at == v && f.cached != nil {
		return f.cached, v
	}
	var pods []Row
	for _, inf := range f.pods {
		for _, o := range inf.GetStore().List() {
			if p, ok := o.(*cachedPod); ok {
				pods = append(pods, p.row)
			}
		}
	}
	f.cached, f.at = Rows(pods, f.eventsOf), v
	return f.cached, v
}

// eventsOf are the cached Events of the pod of uid, a slice of the
// caller's.
func (f *Fleet) eventsOf(uid string) []Event {
	var out []Event
	for _, inf := range f.events {
		objs, _ := inf.GetIndexer().ByIndex(byUID, uid) // the index exists: New adds it
		for _, o := range objs {
			if e, ok := o.(*cachedEvent); ok {
				out = append(out, e.event)
			}
		}
	}
	return out
}

func eventUID(obj any) ([]string, error) {
	e, ok := obj.(*cachedEvent)
	if !ok {
		return nil, nil
	}
	return []string{e.uid}, nil
}

// storeKey is what the informers' stores key a cached object by, and what
// their informer compares (an update of the same resourceVersion is a
// resync): an ObjectMeta is made of it when one is asked for
// (meta.Accessor), so that each of 50,000 Events does not keep a whole one.
// client-go asks a stored object for nothing else.
type storeKey struct{ namespace, name, resourceVersion string }

func (k *storeKey) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Namespace: k.namespace, Name: k.name, ResourceVersion: k.resourceVersion}
}

func keyOf(m *metav1.ObjectMeta) storeKey { return storeKey{m.Namespace, m.Name, m.ResourceVersion} }

// cachedPod is a pod as the cache keeps it: its row, made as it arrives
// (PodRow), so that a view only joins the Events to it. It is a
// runtime.Object of no kind, as client-go's checks of a streaming list's
// consistency (KUBE_WATCHLIST_INCONSISTENCY_DETECTOR) want cached objects
// to be.
type cachedPod struct {
	storeKey
	row Row
}

func (p *cachedPod) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

func (p *cachedPod) DeepCopyObject() runtime.Object {
	c := *p
	c.row.Labels = maps.Clone(p.row.Labels)
	if p.row.Condition != nil {
		cond := *p.row.Condition
		c.row.Condition = &cond
	}
	c.row.Events = slices.Clone(p.row.Events)
	return &c
}

// cachedEvent is an Event as the cache keeps it: as a row shows it
// (EventOf), and the UID of its pod, which the cache indexes it by.
type cachedEvent struct {
	storeKey
	uid   string
	event Event
}

func (e *cachedEvent) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

func (e *cachedEvent) DeepCopyObject() runtime.Object {
	c := *e // plain data: strings, numbers and times
	return &c
}

// cachePod is the transform of the pods' informer. An object it made
// already comes back to it as it is: client-go's streaming list transforms
// each object in the reflector's store, then again in the informer's queue.
func (f *Fleet) cachePod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	return &cachedPod{storeKey: keyOf(&p.ObjectMeta), row: PodRow(p, f.c.Rows)}, nil
}

// cacheEvent is the transform of the Events' informer; an object it made
// comes back as it is, as to cachePod.
func (f *Fleet) cacheEvent(obj any) (any, error) {
	e, ok := obj.(*corev1.Event)
	if !ok {
		return obj, nil
	}
	return &cachedEvent{storeKey: keyOf(&e.ObjectMeta), uid: string(e.InvolvedObject.UID), event: EventOf(e, f.c.Rows.Withhold)}, nil
}
