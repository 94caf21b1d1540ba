package main

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/kube/kubetest"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
	"github.com/vitals-dev/vitals/cmd/vitals/kubewait"
	"github.com/vitals-dev/vitals/internal/kubeenv"
)

// The k8s:// targets of vitals wait and vitals probe, against a real API
// server (internal/kubeenv). No controller runs there: a test moves an
// object's status on through the status subresource, as its controller
// would, and vitals, watching, says each step.

// cluster is a test's view of the shared API server: an admin's client and
// a namespace of the test's own.
type cluster struct {
	env       *kubeenv.Env
	cs        *kubernetes.Clientset
	namespace string
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	env := kubeenv.SharedFor(t)
	cs := kubetest.Client(t, env.Kubeconfig)
	return &cluster{env: env, cs: cs, namespace: kubetest.Namespace(t, cs, "vitals-wait")}
}

// args are the flags that point vitals at the cluster's namespace, as its
// admin.
func (c *cluster) args(args ...string) []string {
	return append(args, "--kubeconfig", c.env.Kubeconfig, "-n", c.namespace)
}

var podTemplate = corev1.PodTemplateSpec{
	ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "api"}},
	Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/api:1"}}},
}

func (c *cluster) createDeployment(t *testing.T, name string, replicas int32) {
	t.Helper()
	_, err := c.cs.AppsV1().Deployments(c.namespace).Create(context.Background(), &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}},
			Template: podTemplate},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// deploymentStatus sets the deployment's status as its controller would,
// for the generation it has.
func (c *cluster) deploymentStatus(t *testing.T, name string, s appsv1.DeploymentStatus) {
	t.Helper()
	ctx := context.Background()
	d, err := c.cs.AppsV1().Deployments(c.namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.ObservedGeneration = d.Generation
	d.Status = s
	if _, err := c.cs.AppsV1().Deployments(c.namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// background is a vitals run that the test watches as it goes.
type background struct {
	cmd            *exec.Cmd
	stdout, stderr *vitalstest.Buffer
	done           chan struct{}
}

func startVitals(t *testing.T, binary string, args ...string) *background {
	t.Helper()
	b := &background{cmd: exec.Command(binary, args...), stdout: &vitalstest.Buffer{}, stderr: &vitalstest.Buffer{}, done: make(chan struct{})}
	b.cmd.Stdout, b.cmd.Stderr = b.stdout, b.stderr
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { b.cmd.Wait(); close(b.done) }()
	t.Cleanup(func() { b.cmd.Process.Kill(); <-b.done })
	return b
}

// said waits (a guard only) until vitals has written text to stderr, and
// fails the test if vitals ended without it.
func (b *background) said(t *testing.T, text string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(b.stderr.String(), text); time.Sleep(10 * time.Millisecond) {
		select {
		case <-b.done:
			if !strings.Contains(b.stderr.String(), text) {
				t.Fatalf("vitals ended (exit %d) without saying %q:\n%s", b.cmd.ProcessState.ExitCode(), text, b.stderr)
			}
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("vitals did not say %q within 20s:\n%s", text, b.stderr)
		}
	}
}

// exit waits (a guard only) for vitals to end and returns its exit code.
func (b *background) exit(t *testing.T) int {
	t.Helper()
	select {
	case <-b.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("vitals did not end within 30s:\n%s", b.stderr)
	}
	return b.cmd.ProcessState.ExitCode()
}

// running says whether vitals is still running.
func (b *background) running() bool {
	select {
	case <-b.done:
		return false
	default:
		return true
	}
}

// inOrder checks that the lines of text come in the order given.
func inOrder(t *testing.T, text string, lines ...string) {
	t.Helper()
	rest := text
	for _, l := range lines {
		i := strings.Index(rest, l)
		if i < 0 {
			t.Fatalf("%q is missing, or out of order, in:\n%s", l, text)
		}
		rest = rest[i+len(l):]
	}
}

func TestWaitFollowsADeploymentsRolloutStepByStep(t *testing.T) {
	c := newCluster(t)
	c.createDeployment(t, "api", 3)
	w := startVitals(t, vitals, c.args("wait", "k8s://deployment/api", "--timeout", "30s")...)
	target := "k8s deployment/api -n " + c.namespace
	steps := []struct {
		status appsv1.DeploymentStatus
		says   string
	}{
		{appsv1.DeploymentStatus{Replicas: 3, UpdatedReplicas: 1, ReadyReplicas: 3, AvailableReplicas: 3},
			`Waiting for deployment "api" rollout to finish: 1 out of 3 new replicas have been updated...`},
		{appsv1.DeploymentStatus{Replicas: 4, UpdatedReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 3},
			`Waiting for deployment "api" rollout to finish: 1 old replicas are pending termination...`},
		{appsv1.DeploymentStatus{Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 2, AvailableReplicas: 2},
			`Waiting for deployment "api" rollout to finish: 2 of 3 updated replicas are available...`},
	}
	// A new deployment's status is empty until its controller sees it.
	w.said(t, "waiting: "+target+": Waiting for deployment spec update to be observed...\n")
	for _, s := range steps {
		c.deploymentStatus(t, "api", s.status)
		w.said(t, "waiting: "+target+": "+s.says+"\n")
	}
	if !w.running() {
		t.Fatalf("vitals ended before the rollout did:\n%s", w.stderr)
	}
	c.deploymentStatus(t, "api", appsv1.DeploymentStatus{Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 3})
	if code := w.exit(t); code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", code, w.stderr)
	}
	inOrder(t, w.stderr.String(), "Waiting for deployment spec update to be observed...", steps[0].says, steps[1].says, steps[2].says,
		"ready: "+target+` (deployment "api" successfully rolled out) after `, "ready: 1 of 1 after ")
	// Off a terminal, a line per change of state, not per event.
	if n := strings.Count(w.stderr.String(), "\n"); n != 6 {
		t.Errorf("%d lines, want 6:\n%s", n, w.stderr)
	}
}

func TestWaitTimesOutOnAStuckRolloutSayingWhatIsMissing(t *testing.T) {
	c := newCluster(t)
	c.createDeployment(t, "stuck", 3)
	c.deploymentStatus(t, "stuck", appsv1.DeploymentStatus{Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 2, AvailableReplicas: 2})
	began := time.Now()
	r := vitalsRun(t, c.args("wait", "k8s://deployment/stuck", "--timeout", "2s")...)
	r.expect(t, 1, "", "vitals wait: timed out after 2s; not ready:\n  k8s deployment/stuck -n "+c.namespace+
		`: Waiting for deployment "stuck" rollout to finish: 2 of 3 updated replicas are available...`+"\n")
	if took := time.Since(began); took < 2*time.Second {
		t.Errorf("gave up after %v, before its timeout of 2s", took)
	}
}

func TestWaitFailsAtOnceWhenARolloutExceedsItsProgressDeadline(t *testing.T) {
	c := newCluster(t)
	c.createDeployment(t, "api", 3)
	progressing := appsv1.DeploymentStatus{Replicas: 3, UpdatedReplicas: 1, ReadyReplicas: 2, AvailableReplicas: 2}
	c.deploymentStatus(t, "api", progressing)
	w := startVitals(t, vitals, c.args("wait", "k8s://deployment/api", "--timeout", "60s")...)
	w.said(t, "1 out of 3 new replicas have been updated...")
	began := time.Now()
	progressing.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse,
		Reason: "ProgressDeadlineExceeded", Message: `ReplicaSet "api-5d4f" has timed out progressing.`,
		LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	c.deploymentStatus(t, "api", progressing)
	if code := w.exit(t); code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, w.stderr)
	}
	if took := time.Since(began); took > 20*time.Second {
		t.Errorf("failed %v after the deadline was exceeded; want at once, long before the 60s timeout", took)
	}
	target := "k8s deployment/api -n " + c.namespace
	want := "vitals wait: " + target + " failed after "
	if !strings.Contains(w.stderr.String(), want) || !strings.Contains(w.stderr.String(), "; not ready:\n  "+target+
		`: deployment "api" exceeded its progress deadline (ProgressDeadlineExceeded: ReplicaSet "api-5d4f" has timed out progressing.)`+"\n") {
		t.Fatalf("stderr:\n%s\nwant the target and the reason", w.stderr)
	}
}

func TestWaitForEveryPodThatASelectorMatches(t *testing.T) {
	c := newCluster(t)
	stowaway := map[string]string{"app": "stowaway"}
	kubetest.CreatePod(t, c.cs, c.namespace, "stowaway-a", stowaway)
	kubetest.CreatePod(t, c.cs, c.namespace, "stowaway-b", stowaway)
	kubetest.CreatePod(t, c.cs, c.namespace, "operator", map[string]string{"app": "operator"}) // never ready, not matched
	w := startVitals(t, vitals, c.args("wait", "k8s://pods?selector=app%3Dstowaway", "--timeout", "30s")...)
	target := "k8s pods -l app=stowaway -n " + c.namespace
	w.said(t, "waiting: "+target+`: 0 of 2 pods ready; pod "stowaway-a": Pending`+"\n")
	kubetest.PodReady(t, c.cs, c.namespace, "stowaway-a")
	w.said(t, "waiting: "+target+`: 1 of 2 pods ready; pod "stowaway-b": Pending`+"\n")
	if !w.running() {
		t.Fatalf("vitals ended with one pod of two ready:\n%s", w.stderr)
	}
	kubetest.PodReady(t, c.cs, c.namespace, "stowaway-b")
	if code := w.exit(t); code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", code, w.stderr)
	}
	w.said(t, "ready: "+target+" (2 of 2 pods ready) after ")
}

func (c *cluster) createJob(t *testing.T, name string) {
	t.Helper()
	template := *podTemplate.DeepCopy()
	template.Labels = nil
	template.Spec.RestartPolicy = corev1.RestartPolicyNever
	_, err := c.cs.BatchV1().Jobs(c.namespace).Create(context.Background(), &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       batchv1.JobSpec{Template: template},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// jobStatus moves a job's status on as the job controller would.
func (c *cluster) jobStatus(t *testing.T, name string, set func(*batchv1.JobStatus)) {
	t.Helper()
	ctx := context.Background()
	j, err := c.cs.BatchV1().Jobs(c.namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	set(&j.Status)
	if _, err := c.cs.BatchV1().Jobs(c.namespace).UpdateStatus(ctx, j, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func condition(typ batchv1.JobConditionType, reason, message string) batchv1.JobCondition {
	return batchv1.JobCondition{Type: typ, Status: corev1.ConditionTrue, Reason: reason, Message: message,
		LastProbeTime: metav1.Now(), LastTransitionTime: metav1.Now()}
}

func TestWaitForAJobToComplete(t *testing.T) {
	c := newCluster(t)
	c.createJob(t, "migrate")
	w := startVitals(t, vitals, c.args("wait", "k8s://job/migrate", "--timeout", "30s")...)
	w.said(t, `Waiting for job "migrate" to complete: 0 of 1 succeeded, 0 active, 0 failed...`)
	started := metav1.Now()
	c.jobStatus(t, "migrate", func(s *batchv1.JobStatus) { s.StartTime, s.Active = &started, 1 })
	w.said(t, `Waiting for job "migrate" to complete: 0 of 1 succeeded, 1 active, 0 failed...`)
	c.jobStatus(t, "migrate", func(s *batchv1.JobStatus) {
		done := metav1.Now()
		s.Active, s.Succeeded, s.CompletionTime = 0, 1, &done
		s.Conditions = []batchv1.JobCondition{condition(batchv1.JobSuccessCriteriaMet, "CompletionsReached", "Reached expected number of succeeded pods"),
			condition(batchv1.JobComplete, "CompletionsReached", "Reached expected number of succeeded pods")}
	})
	if code := w.exit(t); code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", code, w.stderr)
	}
	w.said(t, "ready: k8s job/migrate -n "+c.namespace+` (job "migrate" complete: 1 succeeded) after `)
}

// A failed job ends the wait at once, the targets beside it too.
func TestWaitFailsAtOnceWhenAJobFails(t *testing.T) {
	c := newCluster(t)
	c.createJob(t, "broken")
	started := metav1.Now()
	c.jobStatus(t, "broken", func(s *batchv1.JobStatus) { s.StartTime, s.Active = &started, 1 })
	refused := closedPort(t)
	w := startVitals(t, vitals, c.args("wait", "k8s://job/broken", "tcp://"+refused, "--timeout", "60s")...)
	w.said(t, `Waiting for job "broken" to complete: 0 of 1 succeeded, 1 active, 0 failed...`)
	began := time.Now()
	c.jobStatus(t, "broken", func(s *batchv1.JobStatus) {
		s.Active, s.Failed = 0, 7
		s.Conditions = []batchv1.JobCondition{condition(batchv1.JobFailureTarget, "BackoffLimitExceeded", "Job has reached the specified backoff limit"),
			condition(batchv1.JobFailed, "BackoffLimitExceeded", "Job has reached the specified backoff limit")}
	})
	if code := w.exit(t); code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, w.stderr)
	}
	if took := time.Since(began); took > 20*time.Second {
		t.Errorf("ended %v after the job failed; want at once, long before the 60s timeout", took)
	}
	target := "k8s job/broken -n " + c.namespace
	w.said(t, "vitals wait: "+target+" failed after ")
	w.said(t, "; not ready:\n  "+target+`: job "broken" failed (BackoffLimitExceeded: Job has reached the specified backoff limit)`+"\n  tcp "+refused+": ")
}

// A deployment created after the wait began, beside a TCP target that
// comes up last: the wait ends when both pass, not when the first does.
func TestWaitForADeploymentNotCreatedYetBesideATCPTarget(t *testing.T) {
	c := newCluster(t)
	addr := closedPort(t)
	w := startVitals(t, vitals, c.args("wait", "tcp://"+addr, "k8s://deployment/late", "--timeout", "30s", "--interval", "100ms")...)
	target := "k8s deployment/late -n " + c.namespace
	w.said(t, "waiting: "+target+`: deployment "late" not found yet`+"\n")
	c.createDeployment(t, "late", 1)
	w.said(t, "waiting: "+target+": Waiting for deployment spec update to be observed...\n")
	c.deploymentStatus(t, "late", appsv1.DeploymentStatus{Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1})
	w.said(t, "ready: "+target+` (deployment "late" successfully rolled out) after `)
	time.Sleep(300 * time.Millisecond) // three tries of the TCP target, failing
	if !w.running() {
		t.Fatalf("vitals ended with the TCP target down:\n%s", w.stderr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the closed port was taken meanwhile: %v", err)
	}
	defer ln.Close()
	if code := w.exit(t); code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", code, w.stderr)
	}
	inOrder(t, w.stderr.String(), `deployment "late" not found yet`, "ready: "+target, "ready: tcp "+addr, "ready: 2 of 2 after ")
}

// The restricted user may not list deployments: the wait says so in the API
// server's words and keeps trying, as the rights may come after the pod that
// needs them; once granted, it goes on.
func TestWaitWithoutRightsSaysSoAndGoesOnOnceGranted(t *testing.T) {
	c := newCluster(t)
	c.createDeployment(t, "api", 1)
	c.deploymentStatus(t, "api", appsv1.DeploymentStatus{Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1})
	// The list names the deployment (a field selector on its name), and so
	// does the API server.
	forbidden := `deployments.apps "api" is forbidden: User "` + c.env.RestrictedUser + `" cannot list resource "deployments" in API group "apps" in the namespace "` + c.namespace + `"`

	r := vitalsRun(t, "wait", "k8s://deployment/api", "--kubeconfig", c.env.RestrictedKubeconfig, "-n", c.namespace, "--timeout", "2s")
	r.expect(t, 1, "", "vitals wait: timed out after 2s; not ready:\n  k8s deployment/api -n "+c.namespace+": "+forbidden+"\n")

	w := startVitals(t, vitals, "wait", "k8s://deployment/api", "--kubeconfig", c.env.RestrictedKubeconfig, "-n", c.namespace, "--timeout", "30s")
	w.said(t, "waiting: k8s deployment/api -n "+c.namespace+": "+forbidden+"\n")
	ctx := context.Background()
	rules := []rbacv1.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "list", "watch"}}}
	if _, err := c.cs.RbacV1().Roles(c.namespace).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "wait"}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.cs.RbacV1().RoleBindings(c.namespace).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "wait"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "wait"},
		Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: c.env.RestrictedUser}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if code := w.exit(t); code != 0 {
		t.Fatalf("exit %d, want 0 once granted:\n%s", code, w.stderr)
	}
	w.said(t, `ready: k8s deployment/api -n `+c.namespace+` (deployment "api" successfully rolled out)`)
}

func TestKubeProbeLooksOnceAtEveryKind(t *testing.T) {
	c := newCluster(t)
	ctx := context.Background()
	c.createDeployment(t, "api", 2)
	c.deploymentStatus(t, "api", appsv1.DeploymentStatus{Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 1, AvailableReplicas: 1})
	replicas := int32(2)
	if _, err := c.cs.AppsV1().StatefulSets(c.namespace).Create(ctx, &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: appsv1.StatefulSetSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}},
			Template: podTemplate},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sts, err := c.cs.AppsV1().StatefulSets(c.namespace).Get(ctx, "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sts.Status = appsv1.StatefulSetStatus{ObservedGeneration: sts.Generation, Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2, UpdatedReplicas: 2, CurrentReplicas: 2}
	if _, err := c.cs.AppsV1().StatefulSets(c.namespace).UpdateStatus(ctx, sts, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.cs.AppsV1().DaemonSets(c.namespace).Create(ctx, &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent"},
		Spec:       appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}}, Template: podTemplate},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kubetest.CreatePod(t, c.cs, c.namespace, "web-0", map[string]string{"app": "web"})

	vitalsRun(t, c.args("probe", "k8s://deploy/api")...).expect(t, 1, "",
		"k8s deployment/api -n "+c.namespace+`: Waiting for deployment "api" rollout to finish: 1 of 2 updated replicas are available...`+"\n")
	// The API server defaults a RollingUpdate's partition to 0: kubectl's
	// "partitioned roll out complete".
	vitalsRun(t, c.args("probe", "-v", "k8s://sts/db")...).expect(t, 0,
		"ok: k8s statefulset/db -n "+c.namespace+": partitioned roll out complete: 2 new pods have been updated...", "")
	vitalsRun(t, c.args("probe", "k8s://daemonset/agent")...).expect(t, 1, "", "Waiting for daemon set spec update to be observed...")
	vitalsRun(t, c.args("probe", "k8s://pod/web-0")...).expect(t, 1, "", `Waiting for pod "web-0" to be ready: Pending`)
	vitalsRun(t, c.args("probe", "k8s://pods?selector=app%3Dnone")...).expect(t, 1, "", "no pod matches app=none yet")
	vitalsRun(t, c.args("probe", "k8s://job/none")...).expect(t, 1, "", `jobs.batch "none" not found`)
	kubetest.PodReady(t, c.cs, c.namespace, "web-0")
	vitalsRun(t, c.args("probe", "k8s://pod/web-0")...).expect(t, 0, "", "")
	vitalsRun(t, "probe", "k8s://pod/web-0", "--kubeconfig", c.env.RestrictedKubeconfig, "-n", c.namespace).expect(t, 1, "",
		`pods "web-0" is forbidden: User "`+c.env.RestrictedUser+`" cannot get resource "pods" in API group "" in the namespace "`+c.namespace+`"`)
}

func TestKubeTargetsThatAreWrongAreUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"wait", "k8s://deploymnt/api"}, `vitals: target "k8s://deploymnt/api": unknown kind "deploymnt": use deployment, statefulset, daemonset, job or pod`},
		{[]string{"wait", "k8s://deployment/"}, `vitals: target "k8s://deployment/" names no deployment: write k8s://deployment/NAME`},
		{[]string{"wait", "k8s://pods?selector=app%3D%3D%3Dweb"}, `vitals: target "k8s://pods?selector=app%3D%3D%3Dweb": selector "app===web": `},
		{[]string{"wait", "k8s://deployment/api", "-n", "Not_A_Namespace"}, `vitals: --namespace "Not_A_Namespace": a lowercase RFC 1123 label`},
		{[]string{"probe", "k8s://pod/web-0", "--kubeconfig", "/nonexistent/kubeconfig"}, `vitals: target "k8s://pod/web-0": kubernetes: stat /nonexistent/kubeconfig: no such file or directory`},
		{[]string{"wait", "http://x/", "-n", "shop"}, "vitals: --namespace applies to k8s targets, and there is none"},
		{[]string{"probe", "http://x/", "--context", "kind"}, "vitals: --context does not apply to an http target (http://x/)"},
	} {
		vitalsRun(t, tt.args...).expect(t, 2, "", tt.want)
	}
}

func TestTheProbeBuildSaysK8sTargetsAreInTheFullBuild(t *testing.T) {
	for _, args := range [][]string{
		{"wait", "k8s://deployment/gefyra-stowaway", "-n", "gefyra", "--timeout", "2m"},
		{"wait", "tcp://db:5432", "k8s://deployment/api"},
		{"probe", "k8s://pod/web-0", "--kubeconfig", "/etc/kubeconfig"},
	} {
		r := binaryRun(t, vitalsProbe, args...)
		r.expect(t, 2, "", `: k8s:// targets are in the full build of vitals (built without -tags vitals_probe); this is the probe build`)
		if strings.Count(r.stderr, "vitals: ") != 1 {
			t.Errorf("vitals %v: want one error, got:\n%s", args, r.stderr)
		}
	}
	binaryRun(t, vitalsProbe, "wait", "--help").expect(t, 0, "k8s://…                                Kubernetes objects: in the full build of vitals only", "")
}

// unreachable writes a kubeconfig for an API server at a port where nothing
// listens.
func unreachable(t *testing.T) (kubeconfig, server string) {
	t.Helper()
	server = "https://" + closedPort(t)
	kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	config := `apiVersion: v1
kind: Config
clusters:
- name: gone
  cluster:
    server: ` + server + `
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    token: secret
contexts:
- name: gone
  context: {cluster: gone, user: admin, namespace: shop}
current-context: gone
`
	if err := os.WriteFile(kubeconfig, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig, server
}

// An API server that is not there from the start: the wait says so while it
// waits, and ends at its timeout saying why, not long after it with "no
// answer yet". (client-go's streaming list retried the server in silence
// with a backoff that did not heed the timeout.)
func TestWaitOnAnUnreachableAPIServerSaysWhyAndEndsAtItsTimeout(t *testing.T) {
	kubeconfig, server := unreachable(t)
	began := time.Now()
	w := startVitals(t, vitals, "wait", "k8s://deployment/api", "--kubeconfig", kubeconfig, "--timeout", "3s")
	cannot := "k8s deployment/api -n shop: cannot reach the API server at " + server + ": "
	w.said(t, "waiting: "+cannot)
	if code := w.exit(t); code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, w.stderr)
	}
	// A guard, not a measurement: 3s and a generous slack.
	if took := time.Since(began); took > 10*time.Second {
		t.Errorf("ended after %v; want at its timeout of 3s", took)
	}
	w.said(t, "vitals wait: timed out after 3s; not ready:\n  "+cannot)
	if !strings.Contains(w.stderr.String(), "connection refused") {
		t.Errorf("stderr:\n%s\nwant connection refused", w.stderr)
	}
}

// Ctrl-C ends a wait on an unreachable API server at once too.
func TestAnInterruptEndsAWaitOnAnUnreachableAPIServer(t *testing.T) {
	kubeconfig, server := unreachable(t)
	w := startVitals(t, vitals, "wait", "k8s://pods?selector=app%3Dweb", "--kubeconfig", kubeconfig, "--timeout", "2m")
	w.said(t, "cannot reach the API server at "+server+": ")
	interrupted := time.Now()
	if err := w.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := w.exit(t); code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, w.stderr)
	}
	if took := time.Since(interrupted); took > 7*time.Second {
		t.Errorf("ended %v after the interrupt; want at once", took)
	}
	w.said(t, "vitals wait: interrupted after ")
}

// The old pod of a rollout, deleted and shutting down (a finalizer holds it
// here), not Ready: the wait for the pods of the selector does not wait for
// it to be gone.
func TestWaitForThePodsOfASelectorLeavesOutAPodBeingDeleted(t *testing.T) {
	c := newCluster(t)
	ctx := context.Background()
	web := map[string]string{"app": "web"}
	if _, err := c.cs.CoreV1().Pods(c.namespace).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-old", Labels: web, Finalizers: []string{"vitals.dev/test"}},
		Spec:       podTemplate.Spec,
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p, err := c.cs.CoreV1().Pods(c.namespace).Get(ctx, "web-old", metav1.GetOptions{})
		if err == nil {
			p.Finalizers = nil
			c.cs.CoreV1().Pods(c.namespace).Update(ctx, p, metav1.UpdateOptions{})
		}
	})
	if err := c.cs.CoreV1().Pods(c.namespace).Delete(ctx, "web-old", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	kubetest.CreatePod(t, c.cs, c.namespace, "web-new", web)
	w := startVitals(t, vitals, c.args("wait", "k8s://pods?selector=app%3Dweb", "--timeout", "30s")...)
	target := "k8s pods -l app=web -n " + c.namespace
	w.said(t, "waiting: "+target+`: 0 of 1 pods ready; pod "web-new": Pending`+"\n")
	kubetest.PodReady(t, c.cs, c.namespace, "web-new")
	if code := w.exit(t); code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", code, w.stderr)
	}
	w.said(t, "ready: "+target+" (1 of 1 pods ready) after ")
}

// The document that vitals wait -o json writes for a k8s:// target, under
// "kubernetes", is package kubewait's Result of the same target.
func kubewaitResult(t *testing.T, c *cluster, target string) map[string]any {
	t.Helper()
	tg, err := kubewait.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	tg.Namespace = c.namespace
	config := kubetest.Config(t, c.env.Kubeconfig)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a guard only
	defer cancel()
	got, err := kubewait.Wait(ctx, config, tg)
	if err != nil {
		t.Fatalf("kubewait.Wait: %v", err)
	}
	b, err := json.Marshal(got[0])
	if err != nil {
		t.Fatal(err)
	}
	return vitalstest.Document(t, b, false).(map[string]any)
}

// A custom resource, waited for by its condition, as kubectl wait
// --for=condition=Ready: the wait says it is waiting while the condition is
// absent and while it is False, and ends when it is True, printing what
// became ready.
func TestWaitForACustomResourceByItsCondition(t *testing.T) {
	c := newCluster(t)
	kubetest.InstallCertificates(t, c.env.Kubeconfig)
	kubetest.CreateCertificate(t, c.env.Kubeconfig, c.namespace, "web")
	const url = "k8s://certificates.cert-manager.io/web?condition=Ready"
	w := startVitals(t, vitals, c.args("wait", url, "-o", "json", "--timeout", "60s")...)
	target := "k8s certificates.cert-manager.io/web -n " + c.namespace + " --for=condition=Ready"
	w.said(t, "waiting: "+target+`: Waiting for certificate "web" condition Ready=True: no Ready condition yet`+"\n")
	kubetest.CertificateReady(t, c.env.Kubeconfig, c.namespace, "web", "False", "DoesNotExist", "Issuing certificate as Secret does not exist")
	w.said(t, "waiting: "+target+`: Waiting for certificate "web" condition Ready=True: it is False (DoesNotExist: Issuing certificate as Secret does not exist)`+"\n")
	if !w.running() {
		t.Fatalf("vitals ended with the condition False:\n%s", w.stderr)
	}
	kubetest.CertificateReady(t, c.env.Kubeconfig, c.namespace, "web", "True", "Ready", "Certificate is up to date and has not expired")
	if code := w.exit(t); code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", code, w.stderr)
	}
	const met = `certificate "web" condition met: Ready=True (Ready: Certificate is up to date and has not expired)`
	w.said(t, "ready: "+target+" ("+met+") after ")
	doc := vitalstest.Document(t, []byte(w.stdout.String()), false)
	want := map[string]any{"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "namespace": c.namespace, "name": "web",
		"ready": true, "message": met}
	results, ok := doc.([]any)
	if !ok || len(results) != 1 || !reflect.DeepEqual(results[0].(map[string]any)["kubernetes"], want) {
		t.Fatalf("stdout:\n%s\nwant one result whose kubernetes is %v", w.stdout, want)
	}
	if got := kubewaitResult(t, c, url); !reflect.DeepEqual(got, want) {
		t.Errorf("kubewait.Wait's Result %v, the wait printed %v", got, want)
	}
	vitalsRun(t, c.args("probe", "k8s://certs.cert-manager.io/web?condition=Ready=False")...).expect(t, 1, "",
		`Waiting for certificate "web" condition Ready=False: it is True (Ready: Certificate is up to date and has not expired)`)
}

// The pods of a selector, exactly one: its name is in the document that -o
// json and -o yaml write, alike.
func TestWaitForExactlyOnePodPrintsItsName(t *testing.T) {
	c := newCluster(t)
	stowaway := map[string]string{"app": "stowaway"}
	kubetest.CreatePod(t, c.cs, c.namespace, "stowaway-a", stowaway)
	kubetest.CreatePod(t, c.cs, c.namespace, "stowaway-b", stowaway)
	kubetest.PodReady(t, c.cs, c.namespace, "stowaway-a")
	kubetest.PodReady(t, c.cs, c.namespace, "stowaway-b")
	const url = "k8s://pods?selector=app%3Dstowaway&count=1"
	target := "k8s pods -l app=stowaway -n " + c.namespace + " (exactly 1)"
	w := startVitals(t, vitals, c.args("wait", url, "-o", "json", "--timeout", "60s")...)
	w.said(t, "waiting: "+target+": 2 pods match app=stowaway, want exactly 1: stowaway-a, stowaway-b\n")
	if err := c.cs.CoreV1().Pods(c.namespace).Delete(context.Background(), "stowaway-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if code := w.exit(t); code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", code, w.stderr)
	}
	want := map[string]any{"apiVersion": "v1", "kind": "Pod", "namespace": c.namespace, "selector": "app=stowaway",
		"names": []any{"stowaway-b"}, "ready": true, "message": "1 of 1 pods ready"}
	results, ok := vitalstest.Document(t, []byte(w.stdout.String()), false).([]any)
	if !ok || len(results) != 1 || !reflect.DeepEqual(results[0].(map[string]any)["kubernetes"], want) {
		t.Fatalf("stdout:\n%s\nwant one result whose kubernetes is %v", w.stdout, want)
	}
	if got := kubewaitResult(t, c, url); !reflect.DeepEqual(got, want) {
		t.Errorf("kubewait.Wait's Result %v, the wait printed %v", got, want)
	}
	j := vitalsRun(t, c.args("wait", url, "-o", "json")...)
	y := vitalsRun(t, c.args("wait", url, "-o", "yaml")...)
	if j.code != 0 || y.code != 0 {
		t.Fatalf("exit %d and %d:\n%s\n%s", j.code, y.code, j.stderr, y.stderr)
	}
	if got, want := shape(vitalstest.Document(t, []byte(y.stdout), true)), shape(vitalstest.Document(t, []byte(j.stdout), false)); !reflect.DeepEqual(got, want) {
		t.Errorf("YAML and JSON differ in shape:\n%s\n%s", y.stdout, j.stdout)
	}
	if !strings.Contains(y.stdout, "  kubernetes:\n") || !strings.Contains(y.stdout, "- stowaway-b\n") {
		t.Errorf("-o yaml:\n%s\nwant the pod's name under kubernetes", y.stdout)
	}
}

// A built-in kind by a condition of its own, rather than by its rollout: a
// Deployment Available, once observed for its latest generation.
func TestWaitForADeploymentByItsCondition(t *testing.T) {
	c := newCluster(t)
	c.createDeployment(t, "api", 1)
	w := startVitals(t, vitals, c.args("wait", "k8s://deployments.apps/api?condition=Available", "--timeout", "60s")...)
	w.said(t, `Waiting for deployment "api" condition Available=True: no Available condition yet`)
	available := appsv1.DeploymentCondition{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable",
		Message: "Deployment has minimum availability.", LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now()}
	c.deploymentStatus(t, "api", appsv1.DeploymentStatus{Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
		Conditions: []appsv1.DeploymentCondition{available}})
	if code := w.exit(t); code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", code, w.stderr)
	}
	w.said(t, `deployment "api" condition met: Available=True (MinimumReplicasAvailable: Deployment has minimum availability.)`)
}

// A resource that the API server does not serve ends the wait at once,
// exit 1, saying what it has instead.
func TestWaitForAResourceTheAPIServerDoesNotServeFailsAtOnce(t *testing.T) {
	c := newCluster(t)
	kubetest.InstallCertificates(t, c.env.Kubeconfig)
	r := vitalsRun(t, c.args("wait", "k8s://certificate.cert-manager.io/web?condition=Ready", "k8s://certificatess.cert-manager.io/web?condition=Ready", "--timeout", "2m")...)
	r.expect(t, 1, "", "vitals wait: k8s certificatess.cert-manager.io/web -n "+c.namespace+" --for=condition=Ready failed after ")
	r.expect(t, 1, "", `: the API server has no resource "certificatess" in API group "cert-manager.io", which has certificates`+"\n")
	vitalsRun(t, c.args("probe", "k8s://widgets.example.com/a?condition=Ready")...).expect(t, 1, "",
		`the API server has no API group "example.com": is its CustomResourceDefinition installed?`)
}
