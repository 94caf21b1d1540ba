package fleet

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// The statuses of a row: what the pod's vitals condition says.
const (
	StatusPassing = "passing" // the condition is True: the pod's checks pass
	StatusFailing = "failing" // the condition is False: a check fails, is pending, or vitals is stopping
	StatusUnknown = "unknown" // no condition of the type, or Unknown: vitals has not said
)

// MaxEventsShown is how many of a pod's Events a row carries, the newest:
// the correlator of each vitals keeps their number small, and a pod that
// flaps for days should not make every view of the fleet heavy. The row
// says how many there are in all.
const MaxEventsShown = 20

// View is the fleet as the page, the JSON and vitals fleet --once show it.
type View struct {
	Summary Summary `json:"summary"`
	Rows    []Row   `json:"pods"`
}

// Summary counts the rows of a view.
type Summary struct {
	Pods    int      `json:"pods"`
	Ready   int      `json:"ready"`   // the pods whose Ready condition is True
	Passing int      `json:"passing"` // the rows of each status
	Failing int      `json:"failing"`
	Unknown int      `json:"unknown"`
	Failed  []string `json:"failingPods"` // NAMESPACE/NAME of the failing pods, sorted
	Text    string   `json:"text"`        // the summary in words: 212 of 214 ready; 2 failing: …
}

// Row is one pod.
type Row struct {
	Namespace string            `json:"namespace"`
	Name      string            `json:"name"`
	UID       string            `json:"uid"`
	Node      string            `json:"node"`
	Labels    map[string]string `json:"labels,omitempty"`
	Phase     string            `json:"phase"`
	Status    string            `json:"status"` // StatusPassing, StatusFailing or StatusUnknown
	// Condition is the pod's vitals condition, without its message: that
	// can quote checks' outputs, which the fleet shows only as the Events
	// tell them.
	Condition *Condition `json:"condition,omitempty"`
	Ready     bool       `json:"ready"`
	Restarts  int32      `json:"restarts"` // of all its containers
	Created   time.Time  `json:"created"`  // its age is from then
	Deleting  bool       `json:"deleting,omitempty"`
	// PortForward is the command that reaches the pod's own status page
	// from this machine, at StatusPage.
	PortForward string  `json:"portForward"`
	StatusPage  string  `json:"statusPage"`
	Events      []Event `json:"events"` // the newest MaxEventsShown of its vitals Events, newest first
	EventCount  int     `json:"eventCount"`
}

// Condition is a pod's vitals condition as a row shows it.
type Condition struct {
	Type   string    `json:"type"`
	Status string    `json:"status"` // True, False, Unknown
	Reason string    `json:"reason"`
	Since  time.Time `json:"since"` // its lastTransitionTime
}

// Event is one vitals Event of a pod.
type Event struct {
	Type      string    `json:"type"` // Normal, Warning
	Reason    string    `json:"reason"`
	Check     string    `json:"check,omitempty"` // the check a CheckFailed or CheckPassed names
	Message   string    `json:"message,omitempty"`
	Count     int32     `json:"count"`
	FirstSeen time.Time `json:"firstSeen"`
	LastSeen  time.Time `json:"lastSeen"`
	// written orders Events of the same second (a core Event's times
	// are whole seconds): its resourceVersion, which the API server
	// raises at every write, a count's too.
	written uint64
}

// Options say how rows are built.
type Options struct {
	// Condition is the type of the pod condition vitals writes
	// (kubernetes.condition in vitals.yaml).
	Condition string
	// PodPort is the port of each pod's status page, for the port-forward
	// command: vitals run's listen.
	PodPort string
	// Withhold leaves the Events' messages out (--details none), as the
	// agent's page leaves outputs out.
	Withhold bool
}

// PodRow is the row of pod p without its Events (Rows joins them): made
// once each time the pod changes, when the cache keeps it.
func PodRow(p *corev1.Pod, o Options) Row {
	r := Row{Namespace: p.Namespace, Name: p.Name, UID: string(p.UID), Node: p.Spec.NodeName, Labels: p.Labels,
		Phase: string(p.Status.Phase), Status: StatusUnknown, Created: p.CreationTimestamp.Time,
		Deleting:    p.DeletionTimestamp != nil,
		PortForward: "kubectl port-forward -n " + p.Namespace + " pod/" + p.Name + " " + o.PodPort,
		StatusPage:  "http://127.0.0.1:" + o.PodPort + "/"}
	for _, c := range p.Status.Conditions {
		switch string(c.Type) {
		case string(corev1.PodReady):
			r.Ready = c.Status == corev1.ConditionTrue
		case o.Condition:
			r.Condition = &Condition{Type: o.Condition, Status: string(c.Status), Reason: c.Reason, Since: c.LastTransitionTime.Time}
			switch c.Status {
			case corev1.ConditionTrue:
				r.Status = StatusPassing
			case corev1.ConditionFalse:
				r.Status = StatusFailing
			}
		}
	}
	for _, cs := range slices.Concat(p.Status.InitContainerStatuses, p.Status.ContainerStatuses) {
		r.Restarts += cs.RestartCount
	}
	return r
}

// Rows joins each pod's row (PodRow) with the Events that eventsOf gives
// for it (by its UID: an index, so that a view costs the pods' own Events,
// not all of them), its newest MaxEventsShown first, and sorts the rows by
// namespace and name. eventsOf's slice is the row's to sort and keep.
func Rows(pods []Row, eventsOf func(uid string) []Event) []Row {
	rows := make([]Row, 0, len(pods))
	for _, r := range pods {
		events := eventsOf(r.UID)
		slices.SortStableFunc(events, func(a, b Event) int {
			return cmp.Or(b.LastSeen.Compare(a.LastSeen), cmp.Compare(b.written, a.written), strings.Compare(a.Reason, b.Reason))
		})
		r.EventCount = len(events)
		switch {
		case len(events) > MaxEventsShown: // the rest go with their array
			r.Events = slices.Clone(events[:MaxEventsShown])
		case events == nil:
			r.Events = []Event{}
		default:
			r.Events = events
		}
		rows = append(rows, r)
	}
	slices.SortFunc(rows, func(a, b Row) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return rows
}

// checkMessage is how kubereport words a check's change: Readiness check
// "db" failed: OUTPUT.
var checkMessage = regexp.MustCompile(`^(?:Startup|Liveness|Readiness) check "([^"]+)" (?:failed|passed)`)

// EventOf is Event e as a row shows it, its message left out when
// withhold: made once each time the Event changes, when the cache keeps it.
func EventOf(e *corev1.Event, withhold bool) Event {
	ev := Event{Type: e.Type, Reason: e.Reason, Message: e.Message, Count: max(e.Count, 1),
		FirstSeen: e.FirstTimestamp.Time, LastSeen: e.LastTimestamp.Time}
	ev.written, _ = strconv.ParseUint(e.ResourceVersion, 10, 64) // opaque to clients, a number in etcd
	if ev.LastSeen.IsZero() {
		ev.LastSeen = cmp.Or(e.EventTime.Time, ev.FirstSeen)
	}
	if ev.FirstSeen.IsZero() {
		ev.FirstSeen = ev.LastSeen
	}
	if m := checkMessage.FindStringSubmatch(e.Message); m != nil {
		ev.Check = m[1]
	}
	if withhold {
		ev.Message = ""
	}
	return ev
}

// Filter narrows a view; zero values select everything.
type Filter struct {
	Namespace string          // one namespace
	Labels    labels.Selector // nil: every pod
	Status    string          // StatusPassing, StatusFailing, StatusUnknown, or "not-ready"
}

// NotReady is the Filter.Status of the pods that are not Ready, whatever
// vitals says.
const NotReady = "not-ready"

// Select is the view of the rows that f selects, with its summary.
func Select(rows []Row, f Filter) View {
	v := View{Rows: []Row{}}
	for _, r := range rows {
		if f.Namespace != "" && r.Namespace != f.Namespace ||
			f.Labels != nil && !f.Labels.Matches(labels.Set(r.Labels)) ||
			f.Status == NotReady && r.Ready ||
			f.Status != "" && f.Status != NotReady && r.Status != f.Status {
			continue
		}
		v.Rows = append(v.Rows, r)
	}
	v.Summary = summarize(v.Rows)
	return v
}

// maxNamed is how many failing pods the summary's text names; the rest it
// counts.
const maxNamed = 5

func summarize(rows []Row) Summary {
	s := Summary{Pods: len(rows), Failed: []string{}}
	for _, r := range rows {
		if r.Ready {
			s.Ready++
		}
		switch r.Status {
		case StatusPassing:
			s.Passing++
		case StatusFailing:
			s.Failing++
			s.Failed = append(s.Failed, r.Namespace+"/"+r.Name)
		default:
			s.Unknown++
		}
	}
	text := fmt.Sprintf("%d of %d ready", s.Ready, s.Pods)
	if s.Failing > 0 {
		named := s.Failed[:min(len(s.Failed), maxNamed)]
		text += fmt.Sprintf("; %d failing: %s", s.Failing, strings.Join(named, ", "))
		if more := len(s.Failed) - len(named); more > 0 {
			text += fmt.Sprintf(" and %d more", more)
		}
	}
	if s.Unknown > 0 {
		text += fmt.Sprintf("; %d without a vitals condition", s.Unknown)
	}
	s.Text = text
	return s
}
