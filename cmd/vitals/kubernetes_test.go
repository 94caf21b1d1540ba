package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kube/kubetest"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/supervise/workloadtest"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/internal/kubeenv"
)

// kubeCondition is the readiness gate of these tests' pods.
const kubeCondition = "vitals.dev/ready"

// kubePod is a pod of a real API server, in a namespace of its own, with a
// readiness gate on kubeCondition; no kubelet runs it (it stays Pending).
type kubePod struct {
	env      *kubeenv.Env
	admin    kubernetes.Interface
	ns, name string
	uid      string
}

var kubeNamespaces atomic.Int64

func newKubePod(t *testing.T) *kubePod {
	t.Helper()
	env := kubeenv.SharedFor(t)
	p := &kubePod{env: env, admin: kubetest.Client(t, env.Kubeconfig), name: "app",
		ns: fmt.Sprintf("vitals-run-%d-%d", os.Getpid(), kubeNamespaces.Add(1))}
	ctx := context.Background()
	if _, err := p.admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod, err := p.admin.CoreV1().Pods(p.ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: p.name},
		Spec: corev1.PodSpec{
			Containers:     []corev1.Container{{Name: "app", Image: "example.invalid/app:1"}},
			ReadinessGates: []corev1.PodReadinessGate{{ConditionType: kubeCondition}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.uid = string(pod.UID)
	return p
}

// agentEnv is the environment of a vitals run for the pod: a kubeconfig,
// and the downward API's POD_NAME and POD_NAMESPACE; none from the
// environment of the test, nor a ~/.kube/config.
func (p *kubePod) agentEnv(t *testing.T, kubeconfig string) []string {
	env := []string{"HOME=" + t.TempDir(), "KUBECONFIG=" + kubeconfig, "POD_NAME=" + p.name, "POD_NAMESPACE=" + p.ns}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name != "HOME" && name != "KUBECONFIG" && !strings.HasPrefix(name, "POD_") && !strings.HasPrefix(name, "KUBERNETES_") {
			env = append(env, kv)
		}
	}
	return env
}

// startKubeAgent runs vitals with the file, listen and api filled in, in
// env; after it, the workload's arguments, if any.
func startKubeAgent(t *testing.T, env []string, config string, workload ...string) *agent {
	t.Helper()
	a := &agent{addr: freeAddr(t), dir: t.TempDir(), logs: &vitalstest.Buffer{}, stdout: &vitalstest.Buffer{}}
	a.sock, a.ready = filepath.Join(a.dir, "vitals.sock"), filepath.Join(a.dir, "ready")
	path := writeConfig(t, fmt.Sprintf("listen: %s\napi: %s\n%s", a.addr, a.sock, config))
	a.file = path
	args := []string{"run", "-c", path}
	if len(workload) > 0 {
		args = append(append(args, "--", os.Args[0], workload[0], a.ready), workload[1:]...)
		env = append(env, workloadtest.Env+"=1")
	}
	a.cmd = exec.Command(vitals, args...)
	a.cmd.Env = env
	a.cmd.Stderr, a.cmd.Stdout = a.logs, a.stdout
	a.cmd.WaitDelay = 2 * time.Second
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.cmd.Process.Kill(); a.cmd.Wait(); killWorkload(a.ready) })
	return a
}

// waitCondition waits (a guard only) until the pod's condition has status
// and reason, and returns it.
func (p *kubePod) waitCondition(t *testing.T, a *agent, status corev1.ConditionStatus, reason string) corev1.PodCondition {
	t.Helper()
	var last corev1.PodCondition
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		pod, err := p.admin.CoreV1().Pods(p.ns).Get(context.Background(), p.name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, pc := range pod.Status.Conditions {
			if pc.Type == kubeCondition {
				last = pc
			}
		}
		if last.Status == status && last.Reason == reason {
			return last
		}
	}
	t.Fatalf("the pod's condition is not %s (%s) within 30s: %+v; logs:\n%s", status, reason, last, a.logs)
	return last
}

// waitEvent waits (a guard only) for an Event on the pod with the reason
// and a message with want in it.
func (p *kubePod) waitEvent(t *testing.T, a *agent, reason, want string) corev1.Event {
	t.Helper()
	var seen []string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		list, err := p.admin.CoreV1().Events(p.ns).List(context.Background(), metav1.ListOptions{
			FieldSelector: "involvedObject.name=" + p.name + ",reason=" + reason})
		if err != nil {
			t.Fatal(err)
		}
		seen = seen[:0]
		for _, e := range list.Items {
			if strings.Contains(e.Message, want) {
				return e
			}
			seen = append(seen, e.Message)
		}
	}
	t.Fatalf("no Event %s with %q within 30s; those with the reason: %q; logs:\n%s", reason, want, seen, a.logs)
	return corev1.Event{}
}

func TestKubernetesEventsAndConditionFollowAFileCheck(t *testing.T) {
	p := newKubePod(t)
	data := filepath.Join(t.TempDir(), "peer1.conf")
	a := startKubeAgent(t, p.agentEnv(t, p.env.Kubeconfig), fmt.Sprintf(`drain: 1s
checks:
  peer-config:
    file: {path: %s}
    period: 100ms
    failure-threshold: 1
kubernetes:
  events: true
  condition: %s
`, data, kubeCondition))

	failed := p.waitCondition(t, a, corev1.ConditionFalse, "ChecksFailed")
	if !strings.HasPrefix(failed.Message, "peer-config failed: ") || !strings.Contains(failed.Message, data) {
		t.Fatalf("condition %+v: want the failing check and why", failed)
	}
	e := p.waitEvent(t, a, "CheckFailed", `Readiness check "peer-config" failed: `)
	if e.Type != corev1.EventTypeWarning || e.Source.Component != "vitals" || string(e.InvolvedObject.UID) != p.uid {
		t.Fatalf("Event %+v", e)
	}
	// The probe endpoints say the same.
	res, err := http.Get("http://" + a.addr + "/readyz")
	if err != nil || res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("/readyz: %v %v", res, err)
	}
	res.Body.Close()

	if err := os.WriteFile(data, []byte("peer"), 0o600); err != nil {
		t.Fatal(err)
	}
	passed := p.waitCondition(t, a, corev1.ConditionTrue, "ChecksPassed")
	if !passed.LastTransitionTime.After(failed.LastTransitionTime.Time) && !passed.LastTransitionTime.Equal(&failed.LastTransitionTime) {
		t.Fatalf("condition %+v after %+v", passed, failed)
	}
	p.waitEvent(t, a, "CheckPassed", `Readiness check "peer-config" passed`)

	// Flips: one Event of each, counted.
	os.Remove(data)
	p.waitCondition(t, a, corev1.ConditionFalse, "ChecksFailed")
	os.WriteFile(data, []byte("peer"), 0o600)
	p.waitCondition(t, a, corev1.ConditionTrue, "ChecksPassed")
	p.waitCount(t, a, "CheckFailed", `Readiness check "peer-config" failed`, 2)
	p.waitCount(t, a, "CheckPassed", `Readiness check "peer-config" passed`, 2)

	// SIGTERM: readiness fails at once, and so does the condition, through
	// the drain.
	a.cmd.Process.Signal(syscall.SIGTERM)
	draining := p.waitCondition(t, a, corev1.ConditionFalse, "Draining")
	if draining.Message != "vitals is stopping (signal): readiness fails from now on" {
		t.Fatalf("condition %+v", draining)
	}
	if err := a.cmd.Wait(); err != nil {
		t.Fatalf("vitals run: %v; logs:\n%s", err, a.logs)
	}
	if strings.Contains(a.logs.String(), `level=WARN msg="kubernetes:`) {
		t.Fatalf("warnings with an API server that takes every write:\n%s", a.logs)
	}
}

// waitCount waits (a guard only) until the Event with the reason and want
// in its message is counted n times.
func (p *kubePod) waitCount(t *testing.T, a *agent, reason, want string, n int32) corev1.Event {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		e := p.waitEvent(t, a, reason, want)
		if e.Count >= n {
			return e
		}
		if time.Now().After(deadline) {
			t.Fatalf("Event %+v: want it counted %d times", e, n)
		}
	}
}

// kubernetes: reloads: a condition turned on is written from the reload
// on, while the Events go on with none written twice (the new reporter
// reports from the event after the old one's last); turned off, nothing
// more is written.
func TestKubernetesReloadTurnsTheConditionOnAndTheReportsOff(t *testing.T) {
	p := newKubePod(t)
	data := filepath.Join(t.TempDir(), "peer1.conf")
	checks := fmt.Sprintf("checks:\n  peer-config: {file: {path: %s}, period: 100ms, failure-threshold: 1}\n", data)
	a := startKubeAgent(t, p.agentEnv(t, p.env.Kubeconfig), checks+"kubernetes: {events: true}\n")
	p.waitEvent(t, a, "CheckFailed", `Readiness check "peer-config" failed`)

	a.rewrite(t, checks+"kubernetes: {events: true, condition: "+kubeCondition+"}\n")
	a.vitals(t, "reload").expect(t, 0, "reloaded: applied kubernetes\n", "")
	p.waitCondition(t, a, corev1.ConditionFalse, "ChecksFailed")
	if err := os.WriteFile(data, []byte("peer"), 0o600); err != nil {
		t.Fatal(err)
	}
	p.waitCondition(t, a, corev1.ConditionTrue, "ChecksPassed")
	p.waitEvent(t, a, "CheckPassed", `Readiness check "peer-config" passed`)
	if e := p.waitEvent(t, a, "CheckFailed", `Readiness check "peer-config" failed`); e.Count != 1 {
		t.Fatalf("CheckFailed counted %d times after the reload, want once: %+v", e.Count, e)
	}

	a.rewrite(t, checks)
	a.vitals(t, "reload").expect(t, 0, "reloaded: applied kubernetes\n", "")
	os.Remove(data)
	c, err := client.New(a.sock, "")
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "peer-config to fail", a.logs, func() bool { return checksNow(t, c)["peer-config"].Status == health.Fail })
	time.Sleep(time.Second) // what a reporter left running would write by now
	if e := p.waitEvent(t, a, "CheckFailed", `Readiness check "peer-config" failed`); e.Count != 1 {
		t.Errorf("CheckFailed counted %d times with kubernetes: gone, want once: %+v", e.Count, e)
	}
	pod, err := p.admin.CoreV1().Pods(p.ns).Get(context.Background(), p.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, pc := range pod.Status.Conditions {
		if pc.Type == kubeCondition && (pc.Status != corev1.ConditionTrue || pc.Reason != "ChecksPassed") {
			t.Errorf("condition %+v: want it left as last written, True", pc)
		}
	}
}

func TestKubernetesRestartsOfTheWorkloadAreOneEventCounted(t *testing.T) {
	p := newKubePod(t)
	a := startKubeAgent(t, p.agentEnv(t, p.env.Kubeconfig), `service: {restart: on-failure, backoff: {initial: 50ms, max: 50ms}}
checks:
  a: {heartbeat: {ttl: 1h}}
kubernetes: {events: true}
`, "exit", "3")
	e := p.waitCount(t, a, "Restarted", "after it exited with code 3 (crash)", 3)
	if e.Type != corev1.EventTypeNormal || !strings.HasPrefix(e.Message, "Restarted ") {
		t.Fatalf("Event %+v", e)
	}
}

func TestKubernetesRefusalIsLoggedOnceAndTheAgentCarriesOn(t *testing.T) {
	p := newKubePod(t)
	// docs/kubernetes.md's Role, but for pods/status.
	ctx := context.Background()
	if _, err := p.admin.RbacV1().Roles(p.ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "vitals"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.admin.RbacV1().RoleBindings(p.ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "vitals"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "vitals"},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: p.env.RestrictedUser}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(t.TempDir(), "peer1.conf")
	a := startKubeAgent(t, p.agentEnv(t, p.env.RestrictedKubeconfig), fmt.Sprintf(`checks:
  peer-config:
    file: {path: %s}
    period: 100ms
    failure-threshold: 1
kubernetes:
  events: true
  condition: %s
`, data, kubeCondition))
	p.waitEvent(t, a, "CheckFailed", `Readiness check "peer-config" failed`)
	const refused = `cannot patch resource \"pods/status\"`
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(a.logs.String(), refused); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the refusal is not logged within 30s:\n%s", a.logs)
		}
	}
	// The checks run on and the probe endpoints answer while the condition
	// is tried again: 200ms, 400ms, 800ms, 1.6s, 3.2s after the first.
	os.WriteFile(data, []byte("peer"), 0o600)
	p.waitEvent(t, a, "CheckPassed", `Readiness check "peer-config" passed`)
	for end := time.Now().Add(7 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		res, err := http.Get("http://" + a.addr + "/readyz")
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("/readyz: %v %v; logs:\n%s", res, err, a.logs)
		}
		res.Body.Close()
	}
	if n := strings.Count(a.logs.String(), refused); n != 1 {
		t.Fatalf("the refusal is logged %d times, want once:\n%s", n, a.logs)
	}
	if !strings.Contains(a.logs.String(), `pods \"app\" is forbidden: User \"`+p.env.RestrictedUser+`\"`) {
		t.Fatalf("the log does not say who was refused:\n%s", a.logs)
	}
}

func TestKubernetesWithoutThePodOrAKubeconfigStartsNothing(t *testing.T) {
	addr := freeAddr(t)
	path := writeConfig(t, fmt.Sprintf("listen: %s\napi: %s\nchecks:\n  a: {heartbeat: {ttl: 1s}}\nkubernetes: {condition: vitals.dev/ready}\n",
		addr, filepath.Join(t.TempDir(), "vitals.sock")))
	base := []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	for _, tc := range []struct {
		name string
		env  []string
		want string
	}{
		{"no POD_NAME", append(base, "POD_NAMESPACE=default", "KUBECONFIG="+filepath.Join(t.TempDir(), "none")),
			path + ": kubernetes: the pod is named by the environment variables POD_NAME and POD_NAMESPACE: set them from the downward API (fieldRef metadata.name and metadata.namespace)\n"},
		{"no kubeconfig, not in a pod", append(base, "POD_NAME=app", "POD_NAMESPACE=default", "KUBECONFIG="+filepath.Join(t.TempDir(), "none")),
			path + ": kubernetes: no kubeconfig (KUBECONFIG, ~/.kube/config) and not in a pod (no KUBERNETES_SERVICE_HOST)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(vitals, "run", "-c", path)
			cmd.Env = tc.env
			var stderr vitalstest.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			if cmd.ProcessState.ExitCode() != 2 || stderr.String() != tc.want {
				t.Fatalf("exit %v, stderr %q; want 2 and %q", err, stderr.String(), tc.want)
			}
		})
	}
}

func TestValidatePrintsTheKubernetesBlock(t *testing.T) {
	path := writeConfig(t, "checks:\n  a: {heartbeat: {ttl: 1s}}\nkubernetes:\n  condition: vitals.dev/ready\n")
	r := vitalsRun(t, "validate", "-c", path, "--print")
	r.expect(t, 0, "kubernetes:\n  events: false\n  condition: \"vitals.dev/ready\"\nchecks:\n", "")
	// What --print writes loads back.
	vitalsRun(t, "validate", "-c", writeConfig(t, r.stdout)).expect(t, 0, "ok: ", "")
	bad := writeConfig(t, "checks:\n  a: {heartbeat: {ttl: 1s}}\nkubernetes:\n  condition: Ready\n")
	vitalsRun(t, "validate", "-c", bad).expect(t, 2, "",
		bad+`:4:14: kubernetes.condition: "Ready" is a pod condition Kubernetes sets itself: give one of your own with a prefix, such as vitals.dev/ready`)
}

// client-go's typed clientset registers every API group's types when the
// process starts: linked into vitals, it would add milliseconds to every
// start, probes included. The parts that talk to Kubernetes use the dynamic
// client instead; this keeps it so.
func TestTheFullBuildLinksNoTypedKubernetesClient(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	pkgs := strings.Fields(string(out))
	if !slices.Contains(pkgs, "k8s.io/client-go/dynamic") {
		t.Fatal("the full build does not link client-go's dynamic client: this test no longer shows anything")
	}
	for _, p := range pkgs {
		if p == "k8s.io/client-go/kubernetes" || strings.HasPrefix(p, "k8s.io/client-go/kubernetes/") {
			t.Errorf("the full build links %s", p)
		}
		// client-go's Event recorders patch with a strategic merge, which
		// links kube-openapi's OpenAPI models and gnostic's: the Events
		// are correlated by kubereport, and patched with a JSON merge. Of
		// k8s.io/api, only core/v1: kubewait reads the other kinds into
		// structs of its own.
		for _, heavy := range []string{"k8s.io/client-go/tools/record", "k8s.io/client-go/tools/events",
			"k8s.io/apimachinery/pkg/util/strategicpatch", "github.com/google/gnostic-models/",
			"k8s.io/api/apps/", "k8s.io/api/batch/", "k8s.io/api/scheduling/"} {
			if p == heavy || strings.HasPrefix(p, heavy) && strings.HasSuffix(heavy, "/") {
				t.Errorf("the full build links %s", p)
			}
		}
	}
}
