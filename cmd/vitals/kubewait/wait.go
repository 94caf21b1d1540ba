package kubewait

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// Wait waits until every target is ready at the same time, and returns what
// each one found then, in the order given. It follows each target through
// the API server's watch, all at once, and keeps following every one until
// the last is ready: a target that was ready and no longer is (the one pod
// of a selector with a Count of 1, joined by the new pod of a rollout) is
// waited for again, so each Result is what its watch last found when Wait
// returns, never an earlier state. An object that is not there yet, or is
// deleted meanwhile, is waited for. A request that fails (forbidden by RBAC,
// the API server unreachable) makes its target not ready until the request
// works again, and is tried again with client-go's backoff (0.8s doubling to
// 30s) until ctx ends, as the rights or the server may come a little after
// the program that needs them. Give ctx a deadline: Wait has none of its
// own.
//
// Wait returns an error when a target is invalid, before any request; and
// with what each target found last, when one can never be ready without a
// change to it, even one that was ready before (a rollout past its progress
// deadline, a failed Job, a pod that has finished, a resource that the API
// server does not serve: ErrUnknownResource), which ends the wait for the
// others too, or when ctx ends first: then the error is ctx's (errors.Is),
// and names each target not ready and why. With no target, Wait returns at
// once.
func Wait(ctx context.Context, config *rest.Config, targets ...Target) ([]Result, error) {
	prepared := make([]*prepared, len(targets))
	for i, t := range targets {
		p, err := prepare(config, t)
		if err != nil {
			return nil, err
		}
		prepared[i] = p
	}
	results, failed, err := follow(ctx, prepared, nil)
	switch {
	case err == nil:
		return results, nil
	case failed >= 0:
		return results, fmt.Errorf("%s: %w", targets[failed], err)
	}
	var notReady []string
	for i, r := range results {
		switch {
		case r.Ready:
		case r.Message == "":
			notReady = append(notReady, targets[i].String()+": no answer yet")
		default:
			notReady = append(notReady, targets[i].String()+": "+r.Message)
		}
	}
	return results, fmt.Errorf("%w; not ready: %s", err, strings.Join(notReady, "; "))
}

// Watch follows one target through the API server's watch until it is
// ready (Watch returns what it found, and nil), can never be without a
// change to it, or ctx ends (Watch returns ctx's error), as Wait does for
// each of its targets. report, when not nil, hears what Watch finds first
// and at every change, and each request to the API server that fails (a
// Result not Ready whose Message is the failure), until Watch returns; it
// is never called after. Watch returns as soon as ctx ends, whatever
// client-go is doing then (its informer stops in the background).
func Watch(ctx context.Context, config *rest.Config, t Target, report func(Result)) (Result, error) {
	p, err := prepare(config, t)
	if err != nil {
		return Result{}, err
	}
	var each func(int, Result)
	if report != nil {
		each = func(_ int, r Result) { report(r) }
	}
	results, _, err := follow(ctx, []*prepared{p}, each)
	return results[0], err
}

// follow follows the targets at once, each through a watch of its own
// that goes on until follow returns, and returns what each watch found
// last: once every target is ready at the same time (with -1 and nil),
// when one can never be ready without a change to it (with its index and
// why), or when ctx ends (with -1 and ctx's error). report, when not nil,
// hears what each watch finds, one report at a time, until follow returns.
func follow(ctx context.Context, targets []*prepared, report func(i int, r Result)) ([]Result, int, error) {
	// Ended once the wait is over, however it ends: the watches stop.
	watching, stop := context.WithCancel(ctx)
	defer stop()
	results := make([]Result, len(targets))
	for i, p := range targets {
		results[i] = p.result(p.mapping()) // what it names, before any answer
	}
	var (
		mu     sync.Mutex // what follows, which the watches change as they report
		over   bool       // all were ready at once, or one never can be: results are final
		failed = -1       // the target that can never be ready
		why    error
	)
	var wg sync.WaitGroup
	for i, p := range targets {
		wg.Go(func() {
			err := p.watch(watching, func(r Result) {
				mu.Lock()
				defer mu.Unlock()
				if over {
					return // a report on its way while the watches stop
				}
				results[i] = r
				if report != nil {
					report(i, r)
				}
				if !slices.ContainsFunc(results, func(r Result) bool { return !r.Ready }) {
					over = true
					stop()
				}
			})
			mu.Lock()
			defer mu.Unlock()
			if !over && watching.Err() == nil { // it ended on its own: never ready
				over, failed, why = true, i, err
				stop()
			}
		})
	}
	wg.Wait()
	switch {
	case failed >= 0:
		return results, failed, why
	case over || len(targets) == 0:
		return results, -1, nil
	}
	return results, -1, ctx.Err()
}

// Look looks at a target once, as kubectl rollout status --watch=false
// does: what it found, ready or not. The error is a request that failed
// (a named object that does not exist is one, in the API server's words:
// `deployments.apps "api" not found`), or why the target can never be
// ready.
func Look(ctx context.Context, config *rest.Config, t Target) (Result, error) {
	p, err := prepare(config, t)
	if err != nil {
		return Result{}, err
	}
	client, m, err := p.resource(ctx)
	if err != nil {
		return p.result(nil), apiError(p.server, err)
	}
	var objs []*unstructured.Unstructured
	if p.Name != "" {
		u, err := client.Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return p.result(&m), apiError(p.server, err)
		}
		objs = append(objs, u)
	} else {
		l, err := client.List(ctx, metav1.ListOptions{LabelSelector: p.Selector})
		if err != nil {
			return p.result(&m), apiError(p.server, err)
		}
		for i := range l.Items {
			objs = append(objs, &l.Items[i])
		}
	}
	return p.status(m, objs)
}

// prepared is a target checked and given its client: a REST client that
// serves as the dynamic client and reads discovery.
type prepared struct {
	Target
	compiled
	server string // the API server's URL, for messages
	rest   rest.Interface
	client dynamic.Interface

	mu    sync.Mutex
	found *mapping // where the resource is: nil until found through discovery
}

func prepare(config *rest.Config, t Target) (*prepared, error) {
	c, err := t.check()
	if err != nil {
		return nil, fmt.Errorf("target %s%w", t, err)
	}
	// The dynamic client's own configuration (JSON, its serializer), which
	// discovery's requests take too.
	cfg := dynamic.ConfigFor(config)
	cfg.GroupVersion = nil
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: a client for %s: %w", config.Host, err)
	}
	rc, err := rest.UnversionedRESTClientForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: a client for %s: %w", config.Host, err)
	}
	p := &prepared{Target: t, compiled: c, server: config.Host, rest: rc, client: dynamic.New(rc)}
	if c.kind != nil {
		m := c.kind.mapping()
		p.found = &m
	}
	return p, nil
}

// resource is the dynamic client of the target's objects, and where they
// are; a resource that the kinds table does not have is found through
// discovery the first time.
func (p *prepared) resource(ctx context.Context) (dynamic.ResourceInterface, mapping, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.found == nil {
		m, err := discover(ctx, p.rest, p.Resource)
		if err != nil {
			return nil, mapping{}, err
		}
		p.found = &m
	}
	m := *p.found
	if !m.namespaced {
		return p.client.Resource(m.gvr), m, nil
	}
	return p.client.Resource(m.gvr).Namespace(p.namespace()), m, nil
}

// result is the target's Result before a look: what it names, and where
// (m, once known).
func (p *prepared) result(m *mapping) Result {
	r := Result{Namespace: p.namespace(), Name: p.Name, Selector: p.Selector}
	if m != nil {
		r.APIVersion, r.Kind = m.gvr.GroupVersion().String(), m.kind
		if !m.namespaced {
			r.Namespace = ""
		}
	}
	return r
}

// status judges the objects found, which m says what they are: the one
// named (none: not there yet), or those the selector matches.
func (p *prepared) status(m mapping, objs []*unstructured.Unstructured) (Result, error) {
	r := p.result(&m)
	var s status
	switch {
	case p.Name != "" && len(objs) == 0:
		s = waiting("%s %q not found yet", m.singular(), p.Name)
	case p.Name != "" && p.condition != nil:
		s = p.condition.judge(fmt.Sprintf("%s %q", m.singular(), p.Name), objs[0])
	case p.Name != "":
		var err error
		if s, err = p.kind.judge(objs[0]); err != nil {
			return r, err
		}
	case p.condition != nil:
		s, r.Names = p.condition.selected(objs, p.Selector, p.Count, m.singular(), m.plural()), names(objs)
	default: // the pods of a selector
		pods := make([]*corev1.Pod, len(objs))
		for i, u := range objs {
			pods[i] = new(corev1.Pod)
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, pods[i]); err != nil {
				return r, fmt.Errorf("pod %q: %w", u.GetName(), err)
			}
		}
		s, r.Names = podsStatus(pods, p.Selector, p.Count)
	}
	r.Ready, r.Message = s.ready, s.message
	return r, nil
}
