package kubewait

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/klog/v2"

	"github.com/vitals-dev/vitals/health"
)

// Measure looks at the target once, as vitals probe does: nil when it is
// ready, else what is missing or wrong.
func (t *Target) Measure(ctx context.Context) (health.Observation, error) {
	var objs []*unstructured.Unstructured
	if t.name != "" {
		u, err := t.client.Get(ctx, t.name, metav1.GetOptions{})
		if err != nil { // not found too: the API server's message says it
			return health.Observation{}, apiError(t.server, err)
		}
		objs = append(objs, u)
	} else {
		l, err := t.client.List(ctx, metav1.ListOptions{LabelSelector: t.selector})
		if err != nil {
			return health.Observation{}, apiError(t.server, err)
		}
		for i := range l.Items {
			objs = append(objs, &l.Items[i])
		}
	}
	s, err := t.status(objs)
	switch {
	case err != nil:
		return health.Observation{}, err
	case !s.Ready:
		return health.Observation{}, errors.New(s.Message)
	}
	return health.Observation{Message: s.Message}, nil
}

// Watch follows the target through the API server's watch and reports what
// it finds at every change, until the target is ready (Watch returns nil),
// can never be without a change to it (Watch returns why: a rollout past its
// progress deadline, a failed job, a pod that has finished), or ctx ends
// (Watch returns ctx's error). An object that is not there yet, or is
// deleted, is waited for.
//
// A request to the API server that fails (forbidden, unreachable) is
// reported in the server's own words, and client-go tries it again with its
// backoff (0.8s doubling to 30s) until ctx ends: the rights or the server may
// come a little after the pod that waits for them, as in a chart installed at
// once. Watch returns as soon as ctx ends, whatever client-go is doing then
// (its informer stops in the background), and report is never called after
// Watch returns.
func (t *Target) Watch(ctx context.Context, report func(health.Result)) error {
	f := &follower{t: t, ctx: ctx, report: report}
	lw := &listWatch{&cache.ListWatch{
		ListWithContextFunc: func(call context.Context, o metav1.ListOptions) (runtime.Object, error) {
			t.filter(&o)
			l, err := t.client.List(call, o)
			f.answered(call, err)
			if err != nil {
				return nil, err
			}
			return l, nil
		},
		WatchFuncWithContext: func(call context.Context, o metav1.ListOptions) (watch.Interface, error) {
			t.filter(&o)
			w, err := t.client.Watch(call, o)
			f.answered(call, err)
			return w, err
		},
	}}
	verdict := make(chan error, 1)
	go func() {
		// UntilWithSync returns only once its informer has stopped, which
		// may be a while after ctx ends: Watch does not wait for it.
		_, err := watchtools.UntilWithSync(ctx, lw, &unstructured.Unstructured{},
			func(store cache.Store) (bool, error) { return f.look(store) },
			func(watch.Event) (bool, error) { return f.look(nil) })
		verdict <- err
	}()
	var err error
	select {
	case err = <-verdict:
	case <-ctx.Done():
	}
	f.end()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// listWatch is the ListerWatcher of a Watch. It opts out of streaming lists
// (client-go's WatchList, on by default since client-go 0.35): a reflector
// in that mode retries a streaming list that cannot reach the server, rather
// than fall back to a plain list, in a backoff that does not heed ctx: a
// server that cannot be reached from the start went unreported, and held
// the wait past its end. A wait lists one object, or the pods of one
// selector: a plain list costs the API server nothing that streaming would
// save.
type listWatch struct{ *cache.ListWatch }

// IsWatchListSemanticsUnSupported is what client-go's reflector asks of its
// ListerWatcher (watchlist.DoesClientNotSupportWatchListSemantics).
func (*listWatch) IsWatchListSemanticsUnSupported() bool { return true }

// filter narrows a list or watch to the target: its name, or its selector.
func (t *Target) filter(o *metav1.ListOptions) {
	if t.name != "" {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", t.name).String()
	} else {
		o.LabelSelector = t.selector
	}
}

// follower is one Watch's state. UntilWithSync calls look from a goroutine
// that may outlive Watch, and client-go's reflector calls answered from its
// own goroutines (a list may even outlive the watch): one mutex guards it
// all, and report is called under it, so that reports never cross.
type follower struct {
	t   *Target
	ctx context.Context // the Watch's

	mu       sync.Mutex
	report   func(health.Result) // nil once there is a verdict, or Watch has returned
	store    cache.Store         // the informer's, from its first sync on
	last     health.Result       // the last status reported
	troubled bool                // the last report is a failed request's, not the status
}

// look judges what the informer holds now and reports it: UntilWithSync's
// precondition, once the first list is in (with its store), and its
// condition on every watch event after. The store may already be ahead of
// the event; the last event leaves it as the API server has it.
func (f *follower) look(store cache.Store) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if store != nil {
		f.store = store
	}
	var objs []*unstructured.Unstructured
	for _, o := range f.store.List() {
		objs = append(objs, o.(*unstructured.Unstructured))
	}
	s, err := f.t.status(objs)
	if err != nil {
		f.report = nil // the verdict is Watch's error
		return false, err
	}
	f.last, f.troubled = health.Result{Time: time.Now(), OK: s.Ready, Output: s.Message}, false
	f.send(f.last)
	if s.Ready {
		f.report = nil
	}
	return s.Ready, nil
}

// answered hears how a request to the API server went. A failure is
// reported; the first success after one reports the status again, which the
// failure's report hid (a watch that resumes after the server came back has
// no event to say it).
func (f *follower) answered(call context.Context, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.ctx.Err() != nil || call.Err() != nil:
		// The watch is ending: what it cut short says nothing of the server.
	case err != nil:
		f.troubled = true
		f.send(health.Result{Time: time.Now(), Output: apiError(f.t.server, err).Error()})
	case f.troubled && !f.last.Time.IsZero():
		f.troubled = false
		f.last.Time = time.Now()
		f.send(f.last)
	}
}

func (f *follower) send(r health.Result) {
	if f.report != nil {
		f.report(r)
	}
}

func (f *follower) end() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.report = nil
}

// apiError says what went wrong with a request: the API server's own
// message (`deployments.apps is forbidden: User "ci" cannot list resource
// "deployments" in API group "apps" in the namespace "shop"`), or why the
// server could not be reached, without the request's long URL.
func apiError(server string, err error) error {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return err
	}
	var u *url.Error
	if errors.As(err, &u) {
		err = u.Err
	}
	return fmt.Errorf("cannot reach the API server at %s: %w", server, err)
}

var quiet sync.Once

// quietClientGo sends client-go's logs nowhere: its reflector logs every
// failed list and watch to standard error as it retries, which Watch reports
// in its own words instead, and a warning from the API server (a deprecated
// field) does not concern a wait.
func quietClientGo() {
	quiet.Do(func() { klog.SetLogger(logr.Discard()) })
}
