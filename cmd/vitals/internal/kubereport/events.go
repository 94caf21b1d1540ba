package kubereport

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/kube"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/internal/escape"
)

// The reasons of the Events, as the kubelet's are words in UpperCamelCase.
const (
	ReasonCheckFailed = "CheckFailed" // Warning: a check became fail
	ReasonCheckPassed = "CheckPassed" // Normal: a check became pass from pending or fail
	ReasonRestarted   = "Restarted"   // Normal: vitals started its workload again
)

// ownReasons are the reasons of vitals's own Events; every other reason is
// a notice's.
var ownReasons = []string{ReasonCheckFailed, ReasonCheckPassed, ReasonRestarted}

// Component is the source component of the Events.
const Component = "vitals"

// maxAttempts is how many writes an Event gets while the API server cannot
// be reached: the kubelet's 12, which with the default backoff keep one
// Event for some two and a half minutes, while those behind it wait.
const maxAttempts = 12

// queuedEvents is how many Events wait to be written, as in the kubelet's
// recorder: past them, Events are dropped.
const queuedEvents = 1000

// eventWriter writes Events with the kubelet's aggregation and spam filter
// (correlator): the same Event again raises the count of the one written (a
// patch) instead of making a new one; from the 10th similar one within 10
// minutes, one combined Event stands for them; and past a burst of 25 per type (Warning,
// Normal) the pod gets one Event per 5 minutes. So a flapping check cannot
// flood the API server. The Events wait in a bounded queue (queuedEvents)
// for the writer's goroutine: past it, they are dropped.
//
// Notices have a correlator of their own, so a budget of their own: a
// workload that posts notices often uses up its own burst of 25 Normal
// Events, never that of vitals's CheckPassed and Restarted Events, which
// would otherwise share it (the spam filter's key is the type, not the
// reason).
//
// Each Event is written with the Reporter's backoff; that writes fail is
// said once, and Stop flushes what is queued.
type eventWriter struct {
	r          *Reporter
	trouble    *trouble
	sink       eventSink
	correlator *correlator // vitals's own Events: CheckFailed, CheckPassed, Restarted
	notices    *correlator // the notices' Events
	clock      clock.PassiveClock

	// The follower's own, set by start.
	queue      chan *corev1.Event
	closeQueue sync.Once     // by shutdown, which Stop may call again
	done       chan struct{} // closed when the writer's goroutine has ended
	pod        *corev1.Pod
	exited     map[string]health.Event // each service's last exit, which a restart's Event tells

	recorded, handled atomic.Uint64 // Events queued, and done with (written or not)
	dropped           atomic.Uint64 // Events not queued: the queue was full
	progress          chan struct{} // a send after each one handled
}

func newEventWriter(r *Reporter) *eventWriter {
	real := clock.RealClock{}
	return &eventWriter{r: r, sink: eventSink{r},
		trouble: r.newTrouble("write Events on the pod",
			"each is tried again while the API server cannot be reached, and dropped if it refuses it", "Events are written"),
		correlator: newCorrelator(real), notices: newCorrelator(real), clock: real,
		exited: map[string]health.Event{}, progress: make(chan struct{}, 1)}
}

// start starts writing Events on pod, whose UID they carry in their
// involvedObject, from the node it runs on.
func (w *eventWriter) start(pod *corev1.Pod) {
	w.pod = pod
	w.queue, w.done = make(chan *corev1.Event, queuedEvents), make(chan struct{})
	go func() {
		defer close(w.done)
		for e := range w.queue {
			w.handle(e)
		}
	}()
}

// record turns a Monitor's event into an Event on the pod, when it is one
// that the pod's readers want: a check that failed, one that passed from
// pending or fail (not from warn, where it only recovered from failed runs
// below its threshold), a restart of the workload, a notice.
func (w *eventWriter) record(ev health.Event) {
	switch ev.Type {
	case health.EventCheckFailed:
		w.emit(corev1.EventTypeWarning, ReasonCheckFailed, checkMessage(ev, "failed", w.r.o.WithholdOutput))
	case health.EventCheckPassed:
		if ev.From != health.Warn {
			// Without the output, which for a pass is mostly a duration
			// ("HTTP 200 in 2.9ms"): the same message again raises the count
			// of one Event instead of making another.
			ev.Output = ""
			w.emit(corev1.EventTypeNormal, ReasonCheckPassed, checkMessage(ev, "passed", w.r.o.WithholdOutput))
		}
	case health.EventServiceExited:
		w.exited[ev.Service] = ev
	case health.EventServiceStarted:
		if ev.Restarts > 0 {
			w.emit(corev1.EventTypeNormal, ReasonRestarted, restartMessage(ev, w.exited[ev.Service]))
		}
	case health.EventNotice:
		w.emit(corev1.EventTypeNormal, NoticeReason(ev.Key), noticeMessage(ev, w.r.o.WithholdOutput))
	}
}

// emit queues an Event on the pod, as the kubelet's recorder makes it; one
// past a full queue is dropped.
func (w *eventWriter) emit(eventType, reason, message string) {
	now := metav1.NewTime(w.clock.Now())
	e := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: eventName(w.pod.Name, now.UnixNano()), Namespace: w.pod.Namespace},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Name: w.pod.Name, Namespace: w.pod.Namespace,
			UID: w.pod.UID, ResourceVersion: w.pod.ResourceVersion},
		Reason: reason, Message: capped(message), Type: eventType,
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
		Source:              corev1.EventSource{Component: Component, Host: w.pod.Spec.NodeName},
		ReportingController: Component, ReportingInstance: w.pod.Spec.NodeName,
	}
	w.recorded.Add(1) // before the send: handled never counts past it
	select {
	case w.queue <- e:
	default:
		w.recorded.Add(^uint64(0))
		if w.dropped.Add(1) == 1 {
			w.r.logger.Warn(fmt.Sprintf("kubernetes: %d Events wait to be written on the pod; later ones are dropped until there is room", queuedEvents))
		}
	}
}

// eventName is the name of an Event on the object named name, at nanos:
// the kubelet's NAME.HEX, or, past the 253 characters of a name, a shorter
// one of the same form.
func eventName(name string, nanos int64) string {
	const maxName = 253 // a DNS subdomain
	suffix := fmt.Sprintf(".%x", nanos)
	if len(name)+len(suffix) > maxName {
		name = strings.TrimRight(name[:maxName-len(suffix)], ".-")
	}
	return name + suffix
}

// levelWords are the levels as the kubelet's Events name its probes.
var levelWords = map[health.Level]string{health.Startup: "Startup", health.Live: "Liveness", health.Ready: "Readiness"}

// checkMessage is the kubelet's wording for a check's change, with the
// output that made it: Readiness check "db" failed: HTTP probe failed with
// statuscode: 503.
func checkMessage(ev health.Event, what string, withhold bool) string {
	msg := fmt.Sprintf("%s check %q %s", levelWords[ev.Level], ev.Check, what)
	if ev.Output != "" && !withhold {
		msg += ": " + ev.Output
	}
	return msg
}

// restartMessage says which workload started again and how it had exited,
// without its pid or restart count, so that the same restart again raises
// the count of one Event.
func restartMessage(started, exited health.Event) string {
	msg := "Restarted " + started.Service
	switch {
	case exited.Type == "": // the log dropped it
	case exited.Signal != "":
		msg += " after it was killed by " + exited.Signal
	case exited.ExitCode != nil:
		msg += fmt.Sprintf(" after it exited with code %d", *exited.ExitCode)
	}
	if exited.Reason != "" {
		msg += " (" + exited.Reason + ")"
	}
	return msg
}

// maxReason is the longest reason the API server takes of an Event
// (events.k8s.io/v1's validation).
const maxReason = 128

// NoticeReason is the reason of a notice's Event: the words of its key
// after the domain, in UpperCamelCase as the kubelet's reasons are
// (example.com/config-reloaded: ConfigReloaded; db/leader-elected:
// DbLeaderElected), at most 128 characters. A reason of vitals's own
// (CheckFailed, CheckPassed, Restarted) gets Notice in front, so that a
// notice is never taken for one of them.
func NoticeReason(key string) string {
	if domain, path, ok := strings.Cut(key, "/"); ok && strings.Contains(domain, ".") {
		key = path
	}
	var b strings.Builder
	for word := range strings.FieldsFuncSeq(key, func(r rune) bool { return r == '/' || r == '-' }) {
		b.WriteString(strings.ToUpper(word[:1]) + word[1:]) // a key is ASCII: health.ValidateNotice
	}
	reason := b.String()
	if slices.Contains(ownReasons, reason) {
		reason = "Notice" + reason
	}
	return reason[:min(len(reason), maxReason)]
}

// noticeMessage says a notice's key and data, the data sorted and written
// as name=value pairs; withhold leaves the data out, as it does checks'
// outputs: Notice "example.com/config-reloaded": generation=4 path=/etc/app.conf.
func noticeMessage(ev health.Event, withhold bool) string {
	msg := fmt.Sprintf("Notice %q", ev.Key)
	if len(ev.Data) > 0 && !withhold {
		msg += ": " + escape.Pairs(ev.Data)
	}
	return msg
}

// handle correlates one Event from the queue and writes it, on the
// writer's goroutine.
func (w *eventWriter) handle(queued *corev1.Event) {
	defer func() {
		w.handled.Add(1)
		select {
		case w.progress <- struct{}{}:
		default:
		}
	}()
	if w.r.ctx.Err() != nil {
		return // Stop's deadline passed: what is left is dropped
	}
	correlator := w.notices
	if slices.Contains(ownReasons, queued.Reason) {
		correlator = w.correlator
	}
	result := correlator.correlate(queued)
	if result.Skip {
		return
	}
	b := w.r.newBackoff()
	for attempt := 1; ; attempt++ {
		written, err := w.write(result.Event, result.Patch)
		switch {
		case err == nil:
			correlator.remember(result.Key, written)
			w.trouble.ok()
			return
		case apierrors.IsAlreadyExists(err):
			return // written before: nothing is wrong
		case w.r.ctx.Err() != nil:
			return // cancelled by Stop's deadline, which says so
		}
		w.trouble.failed(err)
		if !retryable(err) || attempt == maxAttempts || !b.wait() {
			return
		}
	}
}

// write creates the Event, or patches the one written before with its new
// count and time, as the kubelet does; one deleted since is created again.
func (w *eventWriter) write(e *corev1.Event, patch []byte) (*corev1.Event, error) {
	if e.Count > 1 {
		written, err := w.sink.Patch(e, patch)
		if !apierrors.IsNotFound(err) {
			return written, err
		}
	}
	e.ResourceVersion = ""
	return w.sink.Create(e)
}

// retryable reports whether a write that failed so may work later: an API
// server that could not be reached, was overloaded or broke. Any other
// answer (forbidden by RBAC, a bad Event) would be the same again, and the
// Event is dropped, as the kubelet drops it.
func retryable(err error) bool {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		code := status.Status().Code
		return code == http.StatusTooManyRequests || code >= 500
	}
	var bad *rest.RequestConstructionError
	return !errors.As(err, &bad) && !errors.Is(err, context.Canceled)
}

// flush waits until every Event recorded has been handled, or ctx ends.
func (w *eventWriter) flush(ctx context.Context) {
	for w.handled.Load() < w.recorded.Load() {
		select {
		case <-w.progress:
		case <-ctx.Done():
			return
		}
	}
}

// shutdown stops the writer's goroutine once it has handled what is queued,
// which the Reporter's context ended first drops.
func (w *eventWriter) shutdown() {
	if w.queue != nil {
		w.closeQueue.Do(func() { close(w.queue) })
		<-w.done
	}
}

// eventSink writes Events through the dynamic client: as core/v1 types,
// converted to and from unstructured objects.
type eventSink struct{ r *Reporter }

// Create creates e in its namespace.
func (s eventSink) Create(e *corev1.Event) (*corev1.Event, error) {
	u, err := unstructuredEvent(e)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(s.r.ctx, s.r.o.RequestTimeout)
	defer cancel()
	return typedEvent(s.r.o.Client.Resource(kube.Events).Namespace(e.Namespace).Create(ctx, u, metav1.CreateOptions{}))
}

// Patch applies data, a JSON merge patch, to the Event old.
func (s eventSink) Patch(old *corev1.Event, data []byte) (*corev1.Event, error) {
	ctx, cancel := context.WithTimeout(s.r.ctx, s.r.o.RequestTimeout)
	defer cancel()
	return typedEvent(s.r.o.Client.Resource(kube.Events).Namespace(old.Namespace).Patch(ctx, old.Name,
		types.MergePatchType, data, metav1.PatchOptions{}))
}

func unstructuredEvent(e *corev1.Event) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(e)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion("v1")
	u.SetKind("Event")
	return u, nil
}

func typedEvent(u *unstructured.Unstructured, err error) (*corev1.Event, error) {
	if err != nil {
		return nil, err
	}
	var e corev1.Event
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), &e); err != nil {
		return nil, fmt.Errorf("the Event as the API server returned it: %w", err)
	}
	return &e, nil
}
