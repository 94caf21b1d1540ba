package kubereport

import (
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/clock"
	"k8s.io/utils/lru"
)

// The correlator's rules are the kubelet's, with client-go's defaults
// (tools/record's EventCorrelator).
const (
	// maxRemembered is how many Events, and groups of similar ones, a
	// correlator remembers, the least recently seen forgotten first.
	maxRemembered = 4096
	// From the maxSimilar-th similar Event (the same type and reason,
	// another message) within similarWindow of the one before, one Event
	// stands for them, saying the latest, "(combined from similar events):
	// …", its count raised each time.
	maxSimilar    = 10
	similarWindow = 10 * time.Minute
	// spamBurst Events of a type are written at once; past them, one each
	// spamEvery (a token bucket per type): a flapping check cannot flood
	// the API server.
	spamBurst = 25
	spamEvery = 5 * time.Minute
)

// combinedPrefix begins the message of an Event that stands for similar
// ones.
const combinedPrefix = "(combined from similar events): "

// correlator decides how each Event of one pod is written, as the kubelet's
// recorder decides it: the same Event again (type, reason, message) raises
// the count and the time of the one written, by a patch, rather than making
// another; from the maxSimilar-th similar one, one combined Event stands
// for them; and past a burst of spamBurst of a type, Events are dropped but one
// each spamEvery. Its memory is bounded (maxRemembered).
//
// client-go's EventCorrelator decides the same; its patch is a strategic
// merge, whose package links kube-openapi and gnostic's OpenAPI models
// (0.8 MiB of the release binary, and 17 package inits, among them some of
// the slowest, at every start of vitals) to set three fields that a JSON
// merge patch sets the same (mergePatch). A correlator is used from one
// goroutine.
type correlator struct {
	clock   clock.PassiveClock
	spam    map[string]flowcontrol.PassiveRateLimiter // by type: two at most
	similar *lru.Cache                                // type, reason → *similarGroup
	written *lru.Cache                                // correlationKey → writtenEvent
}

// similarGroup is the messages of similar Events seen since first.
type similarGroup struct {
	messages map[string]bool
	last     time.Time
}

// writtenEvent is what a correlator remembers of an Event written.
type writtenEvent struct {
	name            string
	count           int32
	firstTimestamp  metav1.Time
	resourceVersion string
}

// correlated is how an Event is to be written: created (Count 1), or
// patched with Patch; or not at all (Skip).
type correlated struct {
	Event *corev1.Event
	Patch []byte // a JSON merge patch of count, lastTimestamp and message; nil to create
	Key   string // what remember is told once it is written
	Skip  bool
}

func newCorrelator(c clock.PassiveClock) *correlator {
	return &correlator{clock: c, spam: map[string]flowcontrol.PassiveRateLimiter{},
		similar: lru.New(maxRemembered), written: lru.New(maxRemembered)}
}

// correlate decides how e, a new Event of the pod (Count 1), is written.
func (c *correlator) correlate(e *corev1.Event) correlated {
	now := c.clock.Now()
	ev := *e
	key := correlationKey(ev.Type, ev.Reason, ev.Message)
	// Similar Events: from the maxSimilar-th message within the window,
	// the combined Event stands for them all.
	groupKey := ev.Type + "\x00" + ev.Reason
	g, _ := c.similar.Get(groupKey)
	group, _ := g.(*similarGroup)
	if group == nil || now.Sub(group.last) > similarWindow {
		group = &similarGroup{messages: map[string]bool{}}
	}
	group.messages[ev.Message], group.last = true, now
	c.similar.Add(groupKey, group)
	if len(group.messages) >= maxSimilar {
		for m := range group.messages { // kept below maxSimilar, as client-go keeps it
			delete(group.messages, m)
			break
		}
		ev.Message = combinedPrefix + e.Message
		key = groupKey // one combined Event per type and reason
	}
	// The same Event again: its count and time on the one written.
	var patch []byte
	if w, ok := c.written.Get(key); ok {
		last := w.(writtenEvent)
		ev.Name, ev.ResourceVersion, ev.FirstTimestamp, ev.Count = last.name, last.resourceVersion, last.firstTimestamp, last.count+1
		patch = mergePatch(&ev)
	}
	c.written.Add(key, writtenEvent{name: ev.Name, count: ev.Count, firstTimestamp: ev.FirstTimestamp, resourceVersion: ev.ResourceVersion})
	limiter, ok := c.spam[ev.Type]
	if !ok {
		limiter = flowcontrol.NewTokenBucketPassiveRateLimiterWithClock(float32(time.Second)/float32(spamEvery), spamBurst, c.clock)
		c.spam[ev.Type] = limiter
	}
	if !limiter.TryAccept() {
		return correlated{Skip: true}
	}
	return correlated{Event: &ev, Patch: patch, Key: key}
}

// remember keeps the Event as the API server wrote it, under key, so that
// the next patch carries its name and count.
func (c *correlator) remember(key string, e *corev1.Event) {
	c.written.Add(key, writtenEvent{name: e.Name, count: e.Count, firstTimestamp: e.FirstTimestamp, resourceVersion: e.ResourceVersion})
}

// correlationKey is an Event's key among those of one pod from one vitals.
func correlationKey(eventType, reason, message string) string {
	return eventType + "\x00" + reason + "\x00" + message
}

// mergePatch is the patch that makes the Event written before e what e
// says: its count, its last time and its message (which a combined Event
// changes).
func mergePatch(e *corev1.Event) []byte {
	b, err := json.Marshal(struct {
		Count         int32       `json:"count"`
		LastTimestamp metav1.Time `json:"lastTimestamp"`
		Message       string      `json:"message"`
	}{e.Count, e.LastTimestamp, e.Message})
	if err != nil {
		panic(fmt.Sprintf("kubereport: an Event's patch: %v", err)) // plain fields: cannot fail
	}
	return b
}
