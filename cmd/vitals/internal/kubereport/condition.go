package kubereport

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/kube"
	"github.com/vitals-dev/vitals/health"
)

// The reasons of the pod condition.
const (
	ReasonChecksPassed = "ChecksPassed" // True: the ready level passes, as /readyz does
	ReasonChecksFailed = "ChecksFailed" // False: a check fails or is pending; the message says which
	ReasonDraining     = "Draining"     // False: vitals is stopping, and readiness fails from then on
)

// fieldManager names vitals as the writer of the condition in the pod's
// managed fields.
const fieldManager = "vitals"

// conditionWriter keeps the pod condition of type Options.Condition in step
// with the ready level. The follower says what it wants (want); the writer's
// goroutine (run) writes the latest wanted state, so that a state the API
// server has not taken yet is replaced by a newer one rather than queued
// behind it.
type conditionWriter struct {
	r       *Reporter
	typ     corev1.PodConditionType
	trouble *trouble

	mu      sync.Mutex
	started bool      // the pod was read: written is what it has
	wanted  condState // the latest state the follower wants
	written condState // the state the pod has, as far as vitals knows
	kick    chan struct{}

	// The follower's own: why vitals stops, once it does.
	stopping   bool
	stoppedFor string
}

// condState is a state of the condition.
type condState struct {
	status          corev1.ConditionStatus
	reason, message string
	// since is when status last changed: the lastTransitionTime.
	since time.Time
}

func (s condState) same(o condState) bool {
	return s.status == o.status && s.reason == o.reason && s.message == o.message
}

func newConditionWriter(r *Reporter) *conditionWriter {
	return &conditionWriter{r: r, typ: corev1.PodConditionType(r.o.Condition), kick: make(chan struct{}, 1),
		trouble: r.newTrouble("write the pod condition "+r.o.Condition, "trying again with backoff, the latest state only",
			"the pod condition "+r.o.Condition+" is written")}
}

// start takes the condition as the pod has it, so that a restart of vitals
// that finds the same status keeps its lastTransitionTime, and wants the
// state of now.
func (c *conditionWriter) start(pod *corev1.Pod) {
	c.mu.Lock()
	for _, pc := range pod.Status.Conditions {
		if pc.Type == c.typ {
			c.written = condState{status: pc.Status, reason: pc.Reason, message: pc.Message, since: pc.LastTransitionTime.Time}
		}
	}
	c.started = true
	c.mu.Unlock()
	c.want()
}

// observe notes what an event says beyond the Monitor's state: that vitals
// is stopping.
func (c *conditionWriter) observe(ev health.Event) {
	if ev.Type == health.EventStopping {
		c.stopping, c.stoppedFor = true, ev.Output
	}
}

// want makes the state of now the one to write.
func (c *conditionWriter) want() {
	s := c.now()
	c.mu.Lock()
	prev := c.wanted
	if prev.status == "" {
		prev = c.written // the first: compared with what the pod has
	}
	if s.status == prev.status && !prev.since.IsZero() {
		s.since = prev.since
	} else {
		s.since = time.Now()
	}
	c.wanted = s
	c.mu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// now is the state the condition should have: the ready level's verdict,
// read as /readyz reads it, without a lock.
func (c *conditionWriter) now() condState {
	if c.stopping {
		msg := "vitals is stopping: readiness fails from now on"
		if c.stoppedFor != "" {
			msg = fmt.Sprintf("vitals is stopping (%s): readiness fails from now on", c.stoppedFor)
		}
		return condState{status: corev1.ConditionFalse, reason: ReasonDraining, message: capped(msg)}
	}
	err := c.r.o.Monitor.Checker(health.Ready)(nil)
	if err == nil {
		return condState{status: corev1.ConditionTrue, reason: ReasonChecksPassed, message: "every check of the ready level passes"}
	}
	return condState{status: corev1.ConditionFalse, reason: ReasonChecksFailed,
		message: capped(strings.TrimPrefix(err.Error(), "readyz check failed: "))}
}

// run writes each state wanted that the pod does not have, the latest
// first, until the follower has returned and the last one is written, or
// Stop's context ends.
func (c *conditionWriter) run() {
	b := c.r.newBackoff()
	for {
		s, ok := c.next()
		if !ok {
			return
		}
		written, err := c.write(s)
		if err != nil {
			if c.r.ctx.Err() != nil {
				return // cancelled by Stop's deadline, which says so
			}
			c.trouble.failed(err)
			if !b.wait() {
				return
			}
			continue
		}
		c.trouble.ok()
		b.reset()
		c.mu.Lock()
		c.written = written
		c.mu.Unlock()
	}
}

// next waits for a state to write; false when there will be none.
func (c *conditionWriter) next() (condState, bool) {
	pending := func() (condState, bool) {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.wanted, c.started && !c.wanted.same(c.written)
	}
	for {
		if s, ok := pending(); ok {
			return s, true
		}
		select {
		case <-c.kick:
		case <-c.r.followed:
			// The follower wanted its last state before it returned.
			return pending()
		case <-c.r.ctx.Done():
			return condState{}, false
		}
	}
}

// behind reports whether the pod lacks the latest state wanted.
func (c *conditionWriter) behind() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.wanted.same(c.written)
}

// write patches the pod's status with s, and returns the state written.
// The patch is a strategic merge on status.conditions, whose items merge by
// type: the kubelet's conditions, and those of others, are left alone.
func (c *conditionWriter) write(s condState) (condState, error) {
	c.mu.Lock()
	w := c.written
	c.mu.Unlock()
	if s.status == w.status && !w.since.IsZero() {
		s.since = w.since // no transition, as far as the pod has seen
	}
	s.since = s.since.UTC().Truncate(time.Second) // what the API keeps
	body, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.PodCondition{{
		Type: c.typ, Status: s.status, Reason: s.reason, Message: s.message,
		LastTransitionTime: metav1.NewTime(s.since),
	}}}})
	if err != nil {
		return condState{}, err
	}
	ctx, cancel := context.WithTimeout(c.r.ctx, c.r.o.RequestTimeout)
	defer cancel()
	_, err = c.r.o.Client.Resource(kube.Pods).Namespace(c.r.o.Namespace).Patch(ctx, c.r.o.Pod,
		types.StrategicMergePatchType, body, metav1.PatchOptions{FieldManager: fieldManager}, "status")
	return s, err
}
