package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/fleet"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kube/kubetest"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
	"github.com/vitals-dev/vitals/internal/kubeenv"
)

// A fleet of pods on a real API server, which no kubelet runs: the tests
// write their Ready condition as a kubelet would, their vitals condition and
// Events as the vitals in each would (kubereport: a strategic merge patch
// of status.conditions, Events from the component vitals).
type kubeFleet struct {
	kubeconfig string
	admin      kubernetes.Interface
	ns         string
}

// secretOutput is in each failing condition's message: a check's output,
// which the fleet never shows (only what the Events say).
const secretOutput = "password=hunter2"

func newKubeFleet(t *testing.T) *kubeFleet {
	t.Helper()
	env := kubeenv.SharedFor(t)
	f := &kubeFleet{kubeconfig: env.Kubeconfig, admin: kubetest.Client(t, env.Kubeconfig)}
	f.ns = kubetest.Namespace(t, f.admin, "fleet")
	return f
}

// pod creates a pod with labels, Ready or not, and with its vitals
// condition of status ("" for none).
func (f *kubeFleet) pod(t *testing.T, name string, labels map[string]string, ready bool, status corev1.ConditionStatus) {
	t.Helper()
	kubetest.CreatePod(t, f.admin, f.ns, name, labels)
	if ready {
		kubetest.PodReady(t, f.admin, f.ns, name)
	}
	if status != "" {
		f.condition(t, name, status)
	}
}

// condition writes the pod's vitals condition as kubereport does.
func (f *kubeFleet) condition(t *testing.T, name string, status corev1.ConditionStatus) {
	t.Helper()
	reason, message := "ChecksPassed", "every check of the ready level passes"
	if status == corev1.ConditionFalse {
		reason, message = "ChecksFailed", "db failed: "+secretOutput
	}
	body, _ := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.PodCondition{{
		Type: kubeCondition, Status: status, Reason: reason, Message: message, LastTransitionTime: metav1.Now()}}}})
	if _, err := f.admin.CoreV1().Pods(f.ns).Patch(context.Background(), name, types.StrategicMergePatchType, body,
		metav1.PatchOptions{FieldManager: "vitals"}, "status"); err != nil {
		t.Fatal(err)
	}
}

// event writes an Event on the pod from component (vitals, or another).
func (f *kubeFleet) event(t *testing.T, name, component, eventType, reason, message string, count int32) {
	t.Helper()
	ctx := context.Background()
	p, err := f.admin.CoreV1().Pods(f.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	if _, err := f.admin.CoreV1().Events(f.ns).Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: name + "."},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: f.ns, Name: name, UID: p.UID},
		Type:           eventType, Reason: reason, Message: message, Count: count,
		FirstTimestamp: metav1.NewTime(now.Add(-time.Minute)), LastTimestamp: now,
		Source: corev1.EventSource{Component: component},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// shop makes the fleet the tests read: web-a passing and Ready, web-b
// failing and not Ready, db without a condition, and a job that -l
// app=web leaves out.
func (f *kubeFleet) shop(t *testing.T) {
	t.Helper()
	f.pod(t, "web-a", map[string]string{"app": "web"}, true, corev1.ConditionTrue)
	f.pod(t, "web-b", map[string]string{"app": "web"}, false, corev1.ConditionFalse)
	f.pod(t, "db", map[string]string{"app": "db"}, true, "")
	f.pod(t, "job", map[string]string{"app": "batch"}, false, corev1.ConditionTrue)
	f.event(t, "web-a", "vitals", corev1.EventTypeNormal, "CheckPassed", `Readiness check "db" passed`, 1)
	f.event(t, "web-b", "vitals", corev1.EventTypeWarning, "CheckFailed", `Readiness check "db" failed: dial tcp 10.0.0.9:5432: connect: connection refused`, 3)
	f.event(t, "web-b", "kubelet", corev1.EventTypeWarning, "Unhealthy", "Readiness probe failed: the kubelet's, not vitals's", 1)
}

func (f *kubeFleet) once(t *testing.T, args ...string) fleet.View {
	t.Helper()
	r := vitalsRun(t, append([]string{"fleet", "--once", "--kubeconfig", f.kubeconfig, "-n", f.ns, "-o", "json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("vitals fleet --once: exit %d: %s", r.code, r.stderr)
	}
	if strings.Contains(r.stdout, secretOutput) {
		t.Errorf("the fleet shows a condition's message:\n%s", r.stdout)
	}
	var v fleet.View
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("%v:\n%s", err, r.stdout)
	}
	return v
}

func names(v fleet.View) string {
	var out []string
	for _, r := range v.Rows {
		out = append(out, r.Name+":"+r.Status)
	}
	return strings.Join(out, " ")
}

func TestFleetOncePrintsThePodsTheirConditionAndTheirVitalsEvents(t *testing.T) {
	f := newKubeFleet(t)
	f.shop(t)
	v := f.once(t)
	if got, want := names(v), "db:unknown job:passing web-a:passing web-b:failing"; got != want {
		t.Errorf("rows %s, want %s", got, want)
	}
	if want := fmt.Sprintf("2 of 4 ready; 1 failing: %s/web-b; 1 without a vitals condition", f.ns); v.Summary.Text != want {
		t.Errorf("summary %q, want %q", v.Summary.Text, want)
	}
	b := v.Rows[3]
	if len(b.Events) != 1 || b.Events[0].Reason != "CheckFailed" || b.Events[0].Check != "db" || b.Events[0].Count != 3 ||
		b.Condition == nil || b.Condition.Reason != "ChecksFailed" || b.Ready || b.PortForward != "kubectl port-forward -n "+f.ns+" pod/web-b 8558" {
		t.Errorf("web-b: %+v", b)
	}

	web := f.once(t, "-l", "app=web")
	if got, want := names(web), "web-a:passing web-b:failing"; got != want {
		t.Errorf("-l app=web: rows %s, want %s", got, want)
	}

	r := vitalsRun(t, "fleet", "--once", "--kubeconfig", f.kubeconfig, "-n", f.ns, "-o", "text")
	lines := strings.Split(r.stdout, "\n")
	if r.code != 0 || lines[0] != v.Summary.Text || !strings.HasPrefix(lines[1], "NAMESPACE") ||
		!strings.Contains(r.stdout, "CheckFailed: Readiness check \"db\" failed") {
		t.Errorf("-o text: exit %d, stdout:\n%s\nstderr: %s", r.code, r.stdout, r.stderr)
	}

	// --details none: the Events' reasons and checks, not their messages.
	withheld := f.once(t, "--details", "none")
	if e := withheld.Rows[3].Events[0]; e.Message != "" || e.Check != "db" {
		t.Errorf("--details none: %+v", e)
	}
}

func TestFleetSaysWhatTheAPIServerRefused(t *testing.T) {
	env := kubeenv.SharedFor(t)
	r := vitalsRun(t, "fleet", "--once", "--kubeconfig", env.RestrictedKubeconfig, "-n", "default", "--timeout", "2s")
	if r.code != 1 || !strings.Contains(r.stderr, "vitals fleet: kubernetes: cannot list ") || !strings.Contains(r.stderr, "forbidden") {
		t.Fatalf("exit %d, stderr %q: want 1 and the API server's refusal", r.code, r.stderr)
	}
	bad := vitalsRun(t, "fleet", "--once", "-A", "-n", "x")
	if bad.code != 2 || !strings.Contains(bad.stderr, "-A and -n: give one or the other") {
		t.Fatalf("-A -n: exit %d, stderr %q", bad.code, bad.stderr)
	}
}

// startFleet serves vitals fleet for the fleet's namespace, and returns its
// URL once it answers.
func (f *kubeFleet) startFleet(t *testing.T, args ...string) string {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(vitals, append([]string{"fleet", "--kubeconfig", f.kubeconfig, "-n", f.ns, "--listen", addr}, args...)...)
	logs := &vitalstest.Buffer{}
	cmd.Stderr, cmd.Stdout = logs, logs
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	url := "http://" + addr
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) { // a guard only
		if res, err := http.Get(url + "/api/fleet"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return url
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("vitals fleet does not answer within 30s:\n%s", logs)
		}
	}
}

func getView(t *testing.T, url string) fleet.View {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %s", url, res.Status, body)
	}
	var v fleet.View
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestFleetServesTheViewAndStreamsEachChange(t *testing.T) {
	f := newKubeFleet(t)
	f.shop(t)
	url := f.startFleet(t)

	// The kubelet's probes of the fleet's own pod (the chart's).
	for _, path := range []string{"/livez", "/readyz"} {
		res, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("%s: %s, want 200 once the pods are listed", path, res.Status)
		}
	}
	if v := getView(t, url+"/api/fleet?status=failing"); names(v) != "web-b:failing" || v.Summary.Failing != 1 {
		t.Errorf("?status=failing: %s, %+v", names(v), v.Summary)
	}
	if v := getView(t, url+"/api/fleet?selector=app%3Dweb&namespace="+f.ns); names(v) != "web-a:passing web-b:failing" {
		t.Errorf("?selector=app=web: %s", names(v))
	}
	// An unchanged view is a 304 to whom has it; gzipped to whom asks.
	req, _ := http.NewRequest(http.MethodGet, url+"/api/fleet", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	first, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	first.Body.Close()
	if first.Header.Get("Content-Encoding") != "gzip" || first.Header.Get("ETag") == "" {
		t.Errorf("/api/fleet asked for gzip: %v", first.Header)
	}
	req.Header.Set("If-None-Match", first.Header.Get("ETag"))
	again, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	again.Body.Close()
	if again.StatusCode != http.StatusNotModified {
		t.Errorf("/api/fleet with its ETag: %s, want 304", again.Status)
	}
	res, err := http.Get(url + "/api/fleet?status=broken")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest {
		t.Errorf("?status=broken: %s, want 400", res.Status)
	}

	stream, err := http.Get(url + "/api/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	if ct := stream.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("/api/stream: Content-Type %q", ct)
	}
	changes := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stream.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				changes <- data
			}
		}
		close(changes)
	}()
	<-changes // the version of now, at once
	// What the informers saw before (the first list's changes, told
	// within Coalesce) comes first: the flip's change is the one after.
	for quiet := false; !quiet; {
		select {
		case <-changes:
		case <-time.After(3 * fleet.Coalesce):
			quiet = true
		}
	}

	f.condition(t, "web-a", corev1.ConditionFalse)
	flipped := time.Now()
	select {
	case <-changes:
	case <-time.After(time.Second):
		t.Fatal("no change on the stream within 1s of the condition's flip")
	}
	v := getView(t, url+"/api/fleet")
	if d := time.Since(flipped); !strings.Contains(names(v), "web-a:failing") || d > time.Second {
		t.Errorf("%v after the flip: %s", d, names(v))
	}

	f.event(t, "web-a", "vitals", corev1.EventTypeWarning, "CheckFailed", `Readiness check "db" failed: timed out after 1s`, 1)
	for deadline := time.Now().Add(time.Second); ; {
		select {
		case <-changes:
		case <-time.After(time.Until(deadline)):
			t.Fatal("no change on the stream within 1s of the new Event")
		}
		v := getView(t, url+"/api/fleet?namespace="+f.ns+"&selector=app%3Dweb")
		if i := slices.IndexFunc(v.Rows, func(r fleet.Row) bool { return r.Name == "web-a" }); i >= 0 && len(v.Rows[i].Events) == 2 {
			if e := v.Rows[i].Events[0]; e.Reason != "CheckFailed" || e.Message != `Readiness check "db" failed: timed out after 1s` {
				t.Errorf("the newest Event first: %+v", v.Rows[i].Events)
			}
			break
		}
	}
}

// A fleet of no pods, whose caches have seen no change since their first
// list, serves its view, empty, as any other.
func TestFleetServesTheViewOfNoPods(t *testing.T) {
	f := newKubeFleet(t)
	url := f.startFleet(t)
	if v := getView(t, url+"/api/fleet"); len(v.Rows) != 0 || v.Summary.Pods != 0 {
		t.Errorf("the view of an empty namespace: %s, %+v", names(v), v.Summary)
	}
}
