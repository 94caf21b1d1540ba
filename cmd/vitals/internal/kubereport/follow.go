// Package kubereport tells Kubernetes what the agent's checks find, on the
// pod vitals runs in: an Event for each check that fails or passes and each
// restart of the workload, as the kubelet writes them for its probes, and
// for each notice the workload posts; and a
// pod condition that follows the ready level, for spec.readinessGates. A
// controller, a person with kubectl describe, or the endpoints controller
// then learns of a failing check without polling vitals.
//
// A Reporter follows the Monitor's event log with a health.Follower, as
// hooks do, on goroutines of its own: the engine appends an event and moves
// on, and an API server that is slow, down or refusing (RBAC) never delays a
// check or a probe answer. It only falls behind: the condition keeps just the
// latest state wanted, written once the API takes it; events wait in a
// bounded queue. Failed writes are retried with backoff, and said once when they
// start failing and once when they work again, never per retry.
//
// The agent builds a Reporter when the file has a kubernetes: block, with a
// client of package kube, starts it after the Monitor, and stops it once the
// workload has stopped, which makes a last, bounded attempt at writing the
// final state (False while vitals drains) and the events left.
//
// It uses client-go's dynamic client and the types of k8s.io/api/core/v1,
// never the typed clientset, whose scheme would register every API group at
// every start of vitals (see package kube).
package kubereport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/kube"
	"github.com/vitals-dev/vitals/health"
)

// Options say what a Reporter reports, and where. Zero durations take the
// defaults documented on them.
type Options struct {
	// Monitor is whose events and ready level are reported. Required.
	Monitor *health.Monitor
	// Client reaches the API server (kube.Dynamic). Required.
	Client dynamic.Interface
	// Pod and Namespace name the pod reported on (kube.Pod). Required.
	Pod, Namespace string

	// Events writes an Event on the pod for each check that fails (Warning
	// CheckFailed), passes from pending or fail (Normal CheckPassed), each
	// restart of the workload (Normal Restarted), and each notice (Normal,
	// its reason from its key: NoticeReason).
	Events bool
	// Condition is the type of the pod condition that follows the ready
	// level, such as vitals.dev/ready; "" writes none.
	Condition string
	// WithholdOutput leaves checks' outputs, and notices' data, out of
	// Event messages, as vitals.yaml's details: false withholds outputs
	// from the probe endpoints (the condition's message follows the
	// Monitor's own setting). Default false: Events say why.
	WithholdOutput bool

	// After is the ID of the last event not to report: a Reporter that
	// takes over from another (a reload's) reports from the one after
	// the old one's Hand. Default 0: from the oldest event the Monitor's
	// log holds, as vitals starts.
	After uint64

	// Logger is told when writes start failing and when they work again.
	// Default slog.Default().
	Logger *slog.Logger
	// BackoffInitial is the wait after a first failed write, doubled after
	// each failure up to BackoffMax, give or take 10% (so that the pods of a
	// deployment do not retry together). Defaults DefaultBackoffInitial and
	// DefaultBackoffMax.
	BackoffInitial, BackoffMax time.Duration
	// RequestTimeout bounds each request to the API server. Default
	// DefaultRequestTimeout.
	RequestTimeout time.Duration
}

// The defaults of Options.
const (
	// DefaultBackoffInitial retries a write that failed once (a connection
	// dropped by a rolling API server) before anyone notices.
	DefaultBackoffInitial = 200 * time.Millisecond
	// DefaultBackoffMax keeps an API server that is down from being called
	// more than twice a minute by each pod, and one that is back from waiting
	// long for the state.
	DefaultBackoffMax = 30 * time.Second
	// DefaultRequestTimeout is long for an API server's answer, and short
	// enough that one slow request does not hold the next state for long.
	DefaultRequestTimeout = 10 * time.Second
)

// Reporter writes a Monitor's events and ready level to its pod. Make one
// with New, Start it, and Stop it.
type Reporter struct {
	o      Options
	logger *slog.Logger

	cond   *conditionWriter // nil without Options.Condition
	events *eventWriter     // nil without Options.Events

	// ctx ends the requests and the waits between them: when Stop's context
	// ends.
	ctx   context.Context
	abort context.CancelFunc
	// follower is the Reporter's place in the Monitor's event log, from the
	// oldest event it holds; Stop closes it.
	follower *health.Follower

	started  atomic.Bool
	stopOnce sync.Once
	stopping chan struct{} // closed by Stop, once follower is closed
	followed chan struct{} // closed when the follower has returned
	podRead  bool          // by the follower, before followed is closed
	wg       sync.WaitGroup
}

// New returns a Reporter over o. Nothing runs until Start.
func New(o Options) *Reporter {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.BackoffInitial <= 0 {
		o.BackoffInitial = DefaultBackoffInitial
	}
	if o.BackoffMax <= 0 {
		o.BackoffMax = max(DefaultBackoffMax, o.BackoffInitial)
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	r := &Reporter{o: o, logger: o.Logger.With("pod", o.Namespace+"/"+o.Pod),
		stopping: make(chan struct{}), followed: make(chan struct{})}
	r.ctx, r.abort = context.WithCancel(context.Background())
	r.follower = o.Monitor.Follow(o.After)
	if o.Condition != "" {
		r.cond = newConditionWriter(r)
	}
	if o.Events {
		r.events = newEventWriter(r)
	}
	return r
}

// Start reads the pod (its UID for the Events, the condition as a previous
// run of vitals left it) and then follows the Monitor's events from the
// oldest the log still holds, on goroutines of its own; it returns at once.
// It has no context: a signal that stops vitals must not stop the reports
// of the stop. Call Stop.
func (r *Reporter) Start() {
	if r.started.Swap(true) {
		return
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(r.followed)
		r.follow()
	}()
	if r.cond != nil {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.cond.run()
		}()
	}
}

// Stop reports the events emitted before it was called and writes the
// state they leave the condition in, then stops. When ctx ends first, the
// requests under way are cancelled and the rest are not made; Stop then
// returns an error saying what was left unwritten. Call it once the workload
// has stopped, with a deadline of a few seconds: the kubelet does not wait.
// A Reporter that was not started has nothing to stop.
func (r *Reporter) Stop(ctx context.Context) error {
	if !r.started.Load() {
		return nil
	}
	r.stopOnce.Do(func() {
		r.follower.Close()
		close(r.stopping)
	})
	done := make(chan struct{})
	go func() {
		// The follower hands the last events and states over; then each
		// writer finishes what it was handed.
		<-r.followed
		if r.events != nil {
			r.events.flush(r.ctx)
		}
		r.wg.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		r.abort()
		<-done
		err = fmt.Errorf("kubernetes: vitals stopped before everything was written (%s): %w", r.unwritten(), ctx.Err())
	}
	r.abort()
	if r.events != nil {
		r.events.shutdown()
	}
	return err
}

// Hand stops following the Monitor's events and returns the ID of the last
// one this Reporter reports: the Reporter that takes over (with
// Options.After) reports from the next, and none twice. Stop it after, as
// ever, to finish what it was handed.
func (r *Reporter) Hand() uint64 { return r.follower.End() }

// unwritten says what Stop's deadline left unwritten, once the follower
// has returned.
func (r *Reporter) unwritten() string {
	if !r.podRead {
		return "the pod could not be read"
	}
	var left []string
	if r.cond != nil && r.cond.behind() {
		left = append(left, "the condition's last state")
	}
	if r.events != nil {
		if n := r.events.recorded.Load() - r.events.handled.Load(); n > 0 {
			left = append(left, fmt.Sprintf("%d Events", n))
		}
		if n := r.events.dropped.Load(); n > 0 {
			left = append(left, fmt.Sprintf("%d Events dropped (the queue was full)", n))
		}
	}
	if len(left) == 0 {
		return "the last writes were not answered"
	}
	return strings.Join(left, " and ") + " not written"
}

// follow reads the pod, then hands each event to the writers, in the order
// of their IDs, until Stop.
func (r *Reporter) follow() {
	pod, ok := r.readPod()
	if !ok {
		return
	}
	r.podRead = true
	if r.events != nil {
		r.events.start(pod)
	}
	if r.cond != nil {
		r.cond.start(pod)
	}
	var missed uint64 // not said yet
	var said time.Time
	for {
		evs, gap, err := r.follower.Next(r.ctx)
		if gap.Len() > 0 {
			// The condition is written from the state now, whatever was
			// missed; the Events of the dropped ones are not. Said at
			// most once a second: far behind a log with holes, a reader
			// meets a gap at each.
			missed += gap.Len()
			if time.Since(said) >= time.Second {
				r.logger.Warn("kubernetes: fell behind the event log, no Events for those it dropped",
					"missed", missed, "upTo", gap.Last)
				missed, said = 0, time.Now()
			}
		}
		if err != nil {
			return // io.EOF: every event emitted before Stop is handed over
		}
		for _, ev := range evs {
			if r.events != nil {
				r.events.record(ev)
			}
			if r.cond != nil {
				r.cond.observe(ev)
			}
		}
		if r.cond != nil {
			// The state now, after the events read: the latest one wanted
			// replaces any the writer has not written yet.
			r.cond.want()
		}
	}
}

// readPod reads the pod once, trying again with backoff until it can, or
// until Stop's context ends (false).
func (r *Reporter) readPod() (*corev1.Pod, bool) {
	t := r.newTrouble("read the pod", "trying again with backoff", "the pod is read")
	b := r.newBackoff()
	for {
		pod, err := r.getPod()
		if err == nil {
			t.ok()
			return pod, true
		}
		if r.ctx.Err() != nil {
			return nil, false
		}
		t.failed(err)
		if !b.wait() {
			return nil, false
		}
	}
}

func (r *Reporter) getPod() (*corev1.Pod, error) {
	ctx, cancel := context.WithTimeout(r.ctx, r.o.RequestTimeout)
	defer cancel()
	u, err := r.o.Client.Resource(kube.Pods).Namespace(r.o.Namespace).Get(ctx, r.o.Pod, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	var pod corev1.Pod
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), &pod); err != nil {
		return nil, fmt.Errorf("the pod as the API server returned it: %w", err)
	}
	return &pod, nil
}

// backoff is the wait between the attempts at one write: Options'
// BackoffInitial, doubled after each failure up to BackoffMax, give or
// take 10%. Once Stop is called, the next attempt comes at once, and later
// ones after the usual waits, until Stop's context ends.
type backoff struct {
	r        *Reporter
	next     time.Duration
	stopping <-chan struct{} // nil once it cut a wait short
}

func (r *Reporter) newBackoff() *backoff {
	return &backoff{r: r, next: r.o.BackoffInitial, stopping: r.stopping}
}

// wait waits before the next attempt, and reports false when there is to
// be none: Stop's context has ended.
func (b *backoff) wait() bool {
	d := time.Duration(float64(b.next) * (0.9 + 0.2*rand.Float64()))
	b.next = min(2*b.next, b.r.o.BackoffMax)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-b.stopping:
		b.stopping = nil
	case <-b.r.ctx.Done():
		return false
	}
	return b.r.ctx.Err() == nil
}

// reset makes the next wait the first one again, after a success.
func (b *backoff) reset() { b.next = b.r.o.BackoffInitial }

// trouble says once that a kind of request fails, with the API server's
// error, again only when the cause changes (a 403 that becomes a refused
// connection), and once that it works again: not once per retry, which would
// flood the log while an API server is down for minutes. Each is used by one
// goroutine only.
type trouble struct {
	logger                 *slog.Logger
	what, meanwhile, works string
	failing                bool
	cause                  string // errorCause of the failure last said
}

// newTrouble says "cannot WHAT; MEANWHILE" and then "WORKS again".
func (r *Reporter) newTrouble(what, meanwhile, works string) *trouble {
	return &trouble{logger: r.logger, what: what, meanwhile: meanwhile, works: works}
}

func (t *trouble) failed(err error) {
	cause := errorCause(err)
	if t.failing && cause == t.cause {
		return
	}
	t.failing, t.cause = true, cause
	t.logger.Warn("kubernetes: cannot "+t.what+"; "+t.meanwhile, "err", errorText(err))
}

func (t *trouble) ok() {
	if !t.failing {
		return
	}
	t.failing, t.cause = false, ""
	t.logger.Info("kubernetes: " + t.works + " again")
}

// errorCause is what kind of failure err is, to tell a new cause from the
// same one again: the API server's status code and reason for its answers
// (403 Forbidden, 404 NotFound, 500 InternalError), "no answer" for a
// request that got none (refused, timed out).
func errorCause(err error) string {
	var status interface{ Status() metav1.Status }
	if errors.As(err, &status) {
		st := status.Status()
		return fmt.Sprintf("%d %s", st.Code, st.Reason)
	}
	return "no answer"
}

// errorText is the API server's message for its errors (pods "x" is
// forbidden: User "…" cannot patch resource "pods/status" …), the error
// otherwise.
func errorText(err error) string {
	var status interface{ Status() metav1.Status }
	if errors.As(err, &status) && status.Status().Message != "" {
		return status.Status().Message
	}
	return err.Error()
}

// maxMessage caps the message of the condition and of Events: a readiness
// level of many failing checks, each with 1 KiB of output, would make a pod
// object that every watcher of pods receives on every change.
const maxMessage = 1024

// capped is s cut to maxMessage bytes, on a character's boundary, with an
// ellipsis when cut.
func capped(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	const ellipsis = "…"
	cut := maxMessage - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}
