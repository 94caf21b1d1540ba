package kubewait

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// watch follows a prepared target, reporting what it finds first and at
// every change, and each request that fails, until ctx ends (it returns
// ctx's error) or the target can never be ready without a change to it (it
// returns why). It goes on past ready, as a target ready now may not be
// later: follow decides when the wait is over. The first list finds the
// resource through discovery, if it must: a failure to reach the API server
// is tried again as any failed list is, and a resource that the API server
// does not serve ends the watch.
func (p *prepared) watch(ctx context.Context, report func(Result)) error {
	// Ended early, with its cause, by a resource the API server does not
	// serve; ctx is still the caller's.
	following, unknown := context.WithCancelCause(ctx)
	defer unknown(context.Canceled)
	f := &follower{p: p, ctx: following, report: report, shown: p.result(p.mapping())}
	lw := &listWatch{&cache.ListWatch{
		ListWithContextFunc: func(call context.Context, o metav1.ListOptions) (runtime.Object, error) {
			client, _, err := p.resource(call)
			if errors.Is(err, ErrUnknownResource) {
				unknown(err)
				return nil, err
			}
			var l *unstructured.UnstructuredList
			if err == nil {
				p.filter(&o)
				l, err = client.List(call, o)
			}
			f.answered(call, err)
			if err != nil {
				return nil, err
			}
			return l, nil
		},
		WatchFuncWithContext: func(call context.Context, o metav1.ListOptions) (watch.Interface, error) {
			client, _, err := p.resource(call) // found by the list before it
			if err != nil {
				return nil, err
			}
			p.filter(&o)
			w, err := client.Watch(call, o)
			f.answered(call, err)
			return w, err
		},
	}}
	verdict := make(chan error, 1)
	go func() {
		// UntilWithSync returns only once its informer has stopped, which
		// may be a while after ctx ends: watch does not wait for it.
		_, err := watchtools.UntilWithSync(following, lw, &unstructured.Unstructured{},
			func(store cache.Store) (bool, error) { return f.look(store) },
			func(watch.Event) (bool, error) { return f.look(nil) })
		verdict <- err
	}()
	var err error
	select {
	case err = <-verdict:
	case <-following.Done():
	}
	f.end()
	switch cause := context.Cause(following); {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(cause, ErrUnknownResource):
		return cause
	}
	return err
}

// mapping is where the target's resource is, nil while it has not been
// found through discovery.
func (p *prepared) mapping() *mapping {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.found
}

// listWatch is the ListerWatcher of a watch. It opts out of streaming lists
// (client-go's WatchList, on by default since client-go 0.35): a reflector
// in that mode retries a streaming list that cannot reach the server, rather
// than fall back to a plain list, in a backoff that does not heed ctx: a
// server that cannot be reached from the start went unreported, and held
// the wait past its end. A wait lists one object, or the objects of one
// selector: a plain list costs the API server nothing that streaming would
// save.
type listWatch struct{ *cache.ListWatch }

// IsWatchListSemanticsUnSupported is what client-go's reflector asks of its
// ListerWatcher (watchlist.DoesClientNotSupportWatchListSemantics).
func (*listWatch) IsWatchListSemanticsUnSupported() bool { return true }

// filter narrows a list or watch to the target: its name, or its selector.
func (p *prepared) filter(o *metav1.ListOptions) {
	if p.Name != "" {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", p.Name).String()
	} else {
		o.LabelSelector = p.Selector
	}
}

// follower is one watch's state. UntilWithSync calls look from a goroutine
// that may outlive the watch, and client-go's reflector calls answered from
// its own goroutines (a list may even outlive the watch): one mutex guards
// it all, and report is called under it, so that reports never cross.
type follower struct {
	p   *prepared
	ctx context.Context // the watch's

	mu       sync.Mutex
	report   func(Result) // nil once the target can never be ready, or the watch has returned
	store    cache.Store  // the informer's, from its first sync on
	last     Result       // the last status, once looked
	looked   bool
	shown    Result // the last report: the last status, or a failed request
	troubled bool   // the last report is a failed request's, not the status
}

// look judges what the informer holds now and reports it: UntilWithSync's
// precondition, once the first list is in (with its store), and its
// condition on every watch event after. The store may already be ahead of
// the event; the last event leaves it as the API server has it. Only an
// error ends the watch, never ready.
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
	r, err := f.p.status(*f.p.mapping(), objs) // the list found it
	if err != nil {
		f.report = nil // the verdict is the watch's error
		return false, err
	}
	f.last, f.looked, f.troubled = r, true, false
	f.send(r)
	return false, nil
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
		r := f.shown // what it names, and the names of the last look
		r.Ready, r.Message = false, apiError(f.p.server, err).Error()
		f.send(r)
	case f.troubled && f.looked:
		f.troubled = false
		f.send(f.last)
	}
}

func (f *follower) send(r Result) {
	f.shown = r
	if f.report != nil {
		f.report(r)
	}
}

// end stops the reports.
func (f *follower) end() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.report = nil
}

// apiError says what went wrong with a request: the API server's own
// message (`deployments.apps is forbidden: User "ci" cannot list resource
// "deployments" in API group "apps" in the namespace "shop"`), or why the
// server could not be reached, without the request's long URL. A resource
// that the API server does not serve says so as it is.
func apiError(server string, err error) error {
	var status apierrors.APIStatus
	if errors.As(err, &status) || errors.Is(err, ErrUnknownResource) {
		return err
	}
	var u *url.Error
	if errors.As(err, &u) {
		err = u.Err
	}
	return fmt.Errorf("cannot reach the API server at %s: %w", server, err)
}
