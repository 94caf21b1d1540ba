package fleet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// pod is a pod of namespace/name; cond is its vitals.dev/ready status
// ("" for none), ready its Ready condition.
func pod(key, cond string, ready bool, labels map[string]string) *corev1.Pod {
	ns, name, _ := strings.Cut(key, "/")
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + key), Labels: labels,
		CreationTimestamp: metav1.NewTime(t0)}}
	p.Spec.NodeName = "node-1"
	readyStatus := corev1.ConditionFalse
	if ready {
		readyStatus = corev1.ConditionTrue
	}
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: readyStatus})
	if cond != "" {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: "vitals.dev/ready",
			Status: corev1.ConditionStatus(cond), Reason: "Checks" + cond, Message: "db: secret output", LastTransitionTime: metav1.NewTime(t0.Add(time.Minute))})
	}
	return p
}

// ev is an Event on the pod of key, last seen at minute min.
func ev(key, reason, message string, count int32, min int) *corev1.Event {
	return &corev1.Event{InvolvedObject: corev1.ObjectReference{Kind: "Pod", UID: types.UID("uid-" + key)}, Type: corev1.EventTypeNormal,
		Reason: reason, Message: message, Count: count,
		FirstTimestamp: metav1.NewTime(t0), LastTimestamp: metav1.NewTime(t0.Add(time.Duration(min) * time.Minute))}
}

// rowsOf are the rows of pods with the Events eventsOf gives, as the
// cache makes them (PodRow, EventOf) and a view joins them (Rows).
func rowsOf(pods []*corev1.Pod, eventsOf func(uid string) []*corev1.Event, o Options) []Row {
	var rows []Row
	for _, p := range pods {
		rows = append(rows, PodRow(p, o))
	}
	return Rows(rows, func(uid string) []Event {
		var out []Event
		for _, e := range eventsOf(uid) {
			out = append(out, EventOf(e, o.Withhold))
		}
		return out
	})
}

// line is a row as the test reads it.
func line(r Row) string {
	var evs []string
	for _, e := range r.Events {
		evs = append(evs, fmt.Sprintf("%s[%s]x%d %q", e.Reason, e.Check, e.Count, e.Message))
	}
	return fmt.Sprintf("%s/%s %s ready=%v events=%d %s", r.Namespace, r.Name, r.Status, r.Ready, r.EventCount, strings.Join(evs, ", "))
}

func TestTheViewOfTheFleet(t *testing.T) {
	pods := []*corev1.Pod{
		pod("shop/web-b", "False", false, map[string]string{"app": "web"}),
		pod("shop/web-a", "True", true, map[string]string{"app": "web"}),
		pod("ops/db", "", true, map[string]string{"app": "db"}),
		pod("ops/cache", "Unknown", false, nil),
	}
	events := []*corev1.Event{
		ev("shop/web-b", "CheckPassed", `Readiness check "db" passed`, 2, 1),
		ev("shop/web-b", "CheckFailed", `Readiness check "db" failed: dial tcp: refused`, 3, 5),
		ev("shop/web-b", "ConfigReloaded", `Notice "example.com/config-reloaded": generation=4`, 1, 3),
		ev("shop/web-a", "Restarted", "Restarted app after it exited with code 3", 1, 2),
		ev("shop/gone", "CheckFailed", `Readiness check "x" failed`, 1, 2), // a pod no longer there
	}
	eventsOf := func(uid string) []*corev1.Event {
		var out []*corev1.Event
		for _, e := range events {
			if string(e.InvolvedObject.UID) == uid {
				out = append(out, e)
			}
		}
		return out
	}
	o := Options{Condition: "vitals.dev/ready", PodPort: "8558"}
	rows := rowsOf(pods, eventsOf, o)
	for _, tc := range []struct {
		name    string
		filter  Filter
		summary string
		rows    []string
	}{
		{"every pod, sorted by namespace and name, each pod's Events newest first", Filter{},
			"2 of 4 ready; 1 failing: shop/web-b; 2 without a vitals condition", []string{
				"ops/cache unknown ready=false events=0 ",
				"ops/db unknown ready=true events=0 ",
				`shop/web-a passing ready=true events=1 Restarted[]x1 "Restarted app after it exited with code 3"`,
				`shop/web-b failing ready=false events=3 CheckFailed[db]x3 "Readiness check \"db\" failed: dial tcp: refused", ` +
					`ConfigReloaded[]x1 "Notice \"example.com/config-reloaded\": generation=4", CheckPassed[db]x2 "Readiness check \"db\" passed"`,
			}},
		{"a namespace", Filter{Namespace: "shop"}, "1 of 2 ready; 1 failing: shop/web-b", []string{
			`shop/web-a passing ready=true events=1 Restarted[]x1 "Restarted app after it exited with code 3"`,
			`shop/web-b failing ready=false events=3 CheckFailed[db]x3 "Readiness check \"db\" failed: dial tcp: refused", ` +
				`ConfigReloaded[]x1 "Notice \"example.com/config-reloaded\": generation=4", CheckPassed[db]x2 "Readiness check \"db\" passed"`,
		}},
		{"failing", Filter{Status: StatusFailing}, "0 of 1 ready; 1 failing: shop/web-b", []string{
			`shop/web-b failing ready=false events=3 CheckFailed[db]x3 "Readiness check \"db\" failed: dial tcp: refused", ` +
				`ConfigReloaded[]x1 "Notice \"example.com/config-reloaded\": generation=4", CheckPassed[db]x2 "Readiness check \"db\" passed"`,
		}},
		{"unknown: no condition, or Unknown", Filter{Status: StatusUnknown}, "1 of 2 ready; 2 without a vitals condition", []string{
			"ops/cache unknown ready=false events=0 ",
			"ops/db unknown ready=true events=0 ",
		}},
		{"not Ready, whatever vitals says", Filter{Status: NotReady}, "0 of 2 ready; 1 failing: shop/web-b; 1 without a vitals condition", []string{
			"ops/cache unknown ready=false events=0 ",
			`shop/web-b failing ready=false events=3 CheckFailed[db]x3 "Readiness check \"db\" failed: dial tcp: refused", ` +
				`ConfigReloaded[]x1 "Notice \"example.com/config-reloaded\": generation=4", CheckPassed[db]x2 "Readiness check \"db\" passed"`,
		}},
		{"a label selector", mustFilter(t, "", "app in (web),app!=db", "passing"), "1 of 1 ready", []string{
			`shop/web-a passing ready=true events=1 Restarted[]x1 "Restarted app after it exited with code 3"`,
		}},
		{"nothing", Filter{Namespace: "none"}, "0 of 0 ready", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Select(rows, tc.filter)
			if v.Summary.Text != tc.summary {
				t.Errorf("summary %q, want %q", v.Summary.Text, tc.summary)
			}
			var got []string
			for _, r := range v.Rows {
				got = append(got, line(r))
			}
			if strings.Join(got, "\n") != strings.Join(tc.rows, "\n") {
				t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.rows, "\n"))
			}
		})
	}
	web := Select(rows, Filter{Namespace: "shop", Status: StatusFailing}).Rows[0]
	if c := web.Condition; c == nil || c.Status != "False" || c.Reason != "ChecksFalse" || !c.Since.Equal(t0.Add(time.Minute)) {
		t.Errorf("condition %+v", c)
	}
	if web.PortForward != "kubectl port-forward -n shop pod/web-b 8558" || web.StatusPage != "http://127.0.0.1:8558/" || web.Node != "node-1" {
		t.Errorf("row %+v", web)
	}
}

func mustFilter(t *testing.T, namespace, selector, status string) Filter {
	f, err := ParseFilter(namespace, selector, status)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestBadFiltersSayWhichAndWhy(t *testing.T) {
	for _, tc := range []struct{ selector, status, want string }{
		{"app=(", "", `selector "app=(": `},
		{"", "broken", `status "broken": use passing, failing, unknown or not-ready`},
	} {
		if _, err := ParseFilter("", tc.selector, tc.status); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("ParseFilter(%q, %q): %v, want %q…", tc.selector, tc.status, err, tc.want)
		}
	}
}

func TestWithheldEventsKeepTheirReasonAndCheck(t *testing.T) {
	p := pod("shop/web", "False", false, nil)
	rows := rowsOf([]*corev1.Pod{p}, func(string) []*corev1.Event {
		return []*corev1.Event{ev("shop/web", "CheckFailed", `Liveness check "db" failed: password=hunter2`, 1, 1)}
	}, Options{Condition: "vitals.dev/ready", PodPort: "8558", Withhold: true})
	if got := line(rows[0]); got != `shop/web failing ready=false events=1 CheckFailed[db]x1 ""` {
		t.Errorf("row %s", got)
	}
}

func TestARowKeepsTheNewestEventsOnly(t *testing.T) {
	p := pod("shop/web", "True", true, nil)
	var evs []*corev1.Event
	for i := range MaxEventsShown + 5 {
		evs = append(evs, ev("shop/web", fmt.Sprintf("Notice%02d", i), "", 1, i))
	}
	r := rowsOf([]*corev1.Pod{p}, func(string) []*corev1.Event { return evs }, Options{Condition: "vitals.dev/ready"})[0]
	if len(r.Events) != MaxEventsShown || r.EventCount != MaxEventsShown+5 || r.Events[0].Reason != "Notice24" || r.Events[MaxEventsShown-1].Reason != "Notice05" {
		t.Errorf("%d events of %d, from %s to %s", len(r.Events), r.EventCount, r.Events[0].Reason, r.Events[len(r.Events)-1].Reason)
	}
}

func TestTheSummaryNamesFiveFailingPodsAndCountsTheRest(t *testing.T) {
	var pods []*corev1.Pod
	for i := range 7 {
		pods = append(pods, pod(fmt.Sprintf("ns/p%d", i), "False", false, nil))
	}
	pods = append(pods, pod("ns/ok", "True", true, nil))
	v := Select(rowsOf(pods, func(string) []*corev1.Event { return nil }, Options{Condition: "vitals.dev/ready"}), Filter{})
	if want := "1 of 8 ready; 7 failing: ns/p0, ns/p1, ns/p2, ns/p3, ns/p4 and 2 more"; v.Summary.Text != want {
		t.Errorf("summary %q, want %q", v.Summary.Text, want)
	}
}

// Events of the same second (a core Event's times are whole seconds) are
// newest first by the order the API server wrote them: a pass that came
// after a failure in the same second is the newest, whatever the reasons'
// names.
func TestEventsOfTheSameSecondAreInTheOrderWritten(t *testing.T) {
	p := pod("shop/web", "True", true, nil)
	failed, passed := ev("shop/web", "CheckFailed", `Readiness check "db" failed: down`, 1, 1), ev("shop/web", "CheckPassed", `Readiness check "db" passed`, 1, 1)
	failed.ResourceVersion, passed.ResourceVersion = "905", "1010" // numbers, not strings: 905 < 1010
	r := rowsOf([]*corev1.Pod{p}, func(string) []*corev1.Event { return []*corev1.Event{failed, passed} }, Options{Condition: "vitals.dev/ready"})[0]
	if r.Events[0].Reason != "CheckPassed" {
		t.Errorf("newest first: %s, %s; want CheckPassed, written last, first", r.Events[0].Reason, r.Events[1].Reason)
	}
}

// The view written a row at a time is what json.Marshal makes of it, with
// a newline: the page, the scripts and --once -o json read one format.
func TestTheViewIsWrittenAsJSONMarshalsIt(t *testing.T) {
	pods := []*corev1.Pod{pod("shop/web", "False", false, map[string]string{"app": "web"}), pod("ops/db", "True", true, nil)}
	rows := rowsOf(pods, func(uid string) []*corev1.Event {
		return []*corev1.Event{ev("shop/web", "CheckFailed", `Readiness check "db" failed: <b>&`, 2, 1)}
	}, Options{Condition: "vitals.dev/ready", PodPort: "8558"})
	for _, f := range []Filter{{}, {Namespace: "none"}} {
		v := Select(rows, f)
		var b bytes.Buffer
		err := writeView(&b, v)
		want, _ := json.Marshal(v)
		want = append(want, '\n')
		if err != nil || !bytes.Equal(b.Bytes(), want) {
			t.Errorf("writeView: %v:\n%s\nwant:\n%s", err, b.Bytes(), want)
		}
	}
}
