package kubewait

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestAJobIsDoneWhenCompleteAndFailsAtOnceWhenFailed(t *testing.T) {
	three, yes := int32(3), true
	cond := func(typ batchv1.JobConditionType, status corev1.ConditionStatus, reason, message string) batchv1.JobCondition {
		return batchv1.JobCondition{Type: typ, Status: status, Reason: reason, Message: message}
	}
	tests := []struct {
		name string
		spec batchv1.JobSpec
		st   batchv1.JobStatus
		want judged
	}{
		{"running, any one completion", batchv1.JobSpec{}, batchv1.JobStatus{Active: 1},
			judged{msg: `Waiting for job "migrate" to complete: 0 succeeded, 1 active, 0 failed...`}},
		{"running, three completions", batchv1.JobSpec{Completions: &three}, batchv1.JobStatus{Succeeded: 1, Active: 2, Failed: 1},
			judged{msg: `Waiting for job "migrate" to complete: 1 of 3 succeeded, 2 active, 1 failed...`}},
		{"suspended", batchv1.JobSpec{Suspend: &yes}, batchv1.JobStatus{Conditions: []batchv1.JobCondition{cond(batchv1.JobSuspended, "True", "JobSuspended", "Job suspended")}},
			judged{msg: `job "migrate" is suspended`}},
		{"success criteria met, pods still terminating", batchv1.JobSpec{Completions: &three}, batchv1.JobStatus{Succeeded: 3, Conditions: []batchv1.JobCondition{
			cond(batchv1.JobSuccessCriteriaMet, "True", "CompletionsReached", "Reached expected number of succeeded pods")}},
			judged{msg: `Waiting for job "migrate" to complete: 3 of 3 succeeded, 0 active, 0 failed...`}},
		{"complete", batchv1.JobSpec{Completions: &three}, batchv1.JobStatus{Succeeded: 3, Conditions: []batchv1.JobCondition{
			cond(batchv1.JobSuccessCriteriaMet, "True", "CompletionsReached", ""), cond(batchv1.JobComplete, "True", "CompletionsReached", "")}},
			judged{msg: `job "migrate" complete: 3 succeeded`, ready: true}},
		{"a Complete condition that is False", batchv1.JobSpec{}, batchv1.JobStatus{Active: 1, Conditions: []batchv1.JobCondition{cond(batchv1.JobComplete, "False", "", "")}},
			judged{msg: `Waiting for job "migrate" to complete: 0 succeeded, 1 active, 0 failed...`}},
		{"failed", batchv1.JobSpec{}, batchv1.JobStatus{Failed: 7, Conditions: []batchv1.JobCondition{
			cond(batchv1.JobFailureTarget, "True", "BackoffLimitExceeded", "Job has reached the specified backoff limit"),
			cond(batchv1.JobFailed, "True", "BackoffLimitExceeded", "Job has reached the specified backoff limit")}},
			judged{failed: `job "migrate" failed (BackoffLimitExceeded: Job has reached the specified backoff limit)`}},
		{"bound to fail, its pods still terminating", batchv1.JobSpec{}, batchv1.JobStatus{Active: 1, Conditions: []batchv1.JobCondition{
			cond(batchv1.JobFailureTarget, "True", "DeadlineExceeded", "Job was active longer than specified deadline")}},
			judged{failed: `job "migrate" failed (DeadlineExceeded: Job was active longer than specified deadline)`}},
	}
	for _, tt := range tests {
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "migrate"}, Spec: tt.spec, Status: tt.st}
		if got := judge(t, j, jobStatus); got != tt.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, got, tt.want)
		}
	}
}

// pod builds a pod named name in phase with the given Ready condition
// ("" for none) and container statuses.
func pod(name string, phase corev1.PodPhase, ready corev1.ConditionStatus, containers ...corev1.ContainerStatus) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{Phase: phase, ContainerStatuses: containers}}
	if ready != "" {
		c := corev1.PodCondition{Type: corev1.PodReady, Status: ready}
		if ready != corev1.ConditionTrue {
			c.Reason, c.Message = "ContainersNotReady", "containers with unready status: [app]"
		}
		p.Status.Conditions = append(p.Status.Conditions, c)
	}
	return p
}

func TestAPodIsReadyByItsReadyConditionAndAFinishedOneNeverIs(t *testing.T) {
	unschedulable := pod("web-0", corev1.PodPending, "")
	unschedulable.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: "False", Reason: "Unschedulable", Message: "0/3 nodes are available: 3 Insufficient cpu."}}
	evicted := pod("web-0", corev1.PodFailed, "False")
	evicted.Status.Reason, evicted.Status.Message = "Evicted", "The node was low on resource: memory."
	tests := []struct {
		name string
		pod  *corev1.Pod
		want judged
	}{
		{"ready", pod("web-0", corev1.PodRunning, "True"), judged{msg: `pod "web-0" is ready`, ready: true}},
		{"just created", pod("web-0", corev1.PodPending, ""), judged{msg: `Waiting for pod "web-0" to be ready: Pending`}},
		{"without a phase", pod("web-0", "", ""), judged{msg: `Waiting for pod "web-0" to be ready: Pending`}},
		{"unschedulable", unschedulable, judged{msg: `Waiting for pod "web-0" to be ready: Unschedulable: 0/3 nodes are available: 3 Insufficient cpu.`}},
		{"running, not ready", pod("web-0", corev1.PodRunning, "False"),
			judged{msg: `Waiting for pod "web-0" to be ready: ContainersNotReady: containers with unready status: [app]`}},
		{"an image that cannot be pulled", pod("web-0", corev1.PodPending, "False", corev1.ContainerStatus{Name: "app",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "web:nope"`}}}),
			judged{msg: `Waiting for pod "web-0" to be ready: container "app": ImagePullBackOff: Back-off pulling image "web:nope"`}},
		{"succeeded", pod("web-0", corev1.PodSucceeded, "False"),
			judged{failed: `pod "web-0" has completed (phase Succeeded) and will not become ready`}},
		{"evicted", evicted, judged{failed: `pod "web-0" failed (Evicted: The node was low on resource: memory.)`}},
		{"a container that failed", pod("web-0", corev1.PodFailed, "False", corev1.ContainerStatus{Name: "app",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error"}}}),
			judged{failed: `pod "web-0" failed (container "app" exited with code 3: Error)`}},
		{"failed, nothing said", pod("web-0", corev1.PodFailed, ""), judged{failed: `pod "web-0" failed (phase Failed)`}},
	}
	for _, tt := range tests {
		if got := outcome(podStatus(tt.pod)); got != tt.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, got, tt.want)
		}
	}
}

// terminating marks a pod as being deleted, as the API server does on a
// delete while the pod shuts down.
func terminating(p *corev1.Pod) *corev1.Pod {
	now := metav1.Now()
	p.DeletionTimestamp = &now
	return p
}

func TestThePodsOfASelectorAreReadyWhenThereIsOneAndAllAre(t *testing.T) {
	tests := []struct {
		name  string
		pods  []*corev1.Pod
		count int
		want  judged
		names string // the pods counted
	}{
		{"none", nil, 0, judged{msg: "no pod matches app=web yet"}, ""},
		{"only finished ones", []*corev1.Pod{pod("job-1", corev1.PodSucceeded, "False")}, 0,
			judged{msg: "no running pod matches app=web yet (1 finished)"}, ""},
		{"one of two ready, the other named", []*corev1.Pod{pod("web-b", corev1.PodRunning, "True"), pod("web-c", corev1.PodRunning, "False"), pod("web-a", corev1.PodPending, "")}, 0,
			judged{msg: `1 of 3 pods ready; pod "web-a": Pending`}, "web-a web-b web-c"},
		{"all ready", []*corev1.Pod{pod("web-a", corev1.PodRunning, "True"), pod("web-b", corev1.PodRunning, "True")}, 0,
			judged{msg: "2 of 2 pods ready", ready: true}, "web-a web-b"},
		{"all ready beside an evicted one", []*corev1.Pod{pod("web-a", corev1.PodRunning, "True"), pod("web-old", corev1.PodFailed, "False")}, 0,
			judged{msg: "1 of 1 pods ready", ready: true}, "web-a"},
		{"all ready beside an old one terminating, not ready", []*corev1.Pod{pod("web-new", corev1.PodRunning, "True"),
			terminating(pod("web-old", corev1.PodRunning, "False"))}, 0,
			judged{msg: "1 of 1 pods ready", ready: true}, "web-new"},
		{"a new one not ready beside an old one terminating", []*corev1.Pod{pod("web-new", corev1.PodPending, ""),
			terminating(pod("web-old", corev1.PodRunning, "False"))}, 0,
			judged{msg: `0 of 1 pods ready; pod "web-new": Pending`}, "web-new"},
		{"only terminating and finished ones", []*corev1.Pod{terminating(pod("web-old", corev1.PodRunning, "True")),
			pod("job-1", corev1.PodSucceeded, "False")}, 0,
			judged{msg: "no running pod matches app=web yet (1 finished, 1 terminating)"}, ""},
		{"exactly one wanted, two ready", []*corev1.Pod{pod("web-b", corev1.PodRunning, "True"), pod("web-a", corev1.PodRunning, "True")}, 1,
			judged{msg: "2 pods match app=web, want exactly 1: web-a, web-b"}, "web-a web-b"},
		{"exactly one wanted, one ready beside an old one terminating", []*corev1.Pod{pod("web-new", corev1.PodRunning, "True"),
			terminating(pod("web-old", corev1.PodRunning, "True"))}, 1,
			judged{msg: "1 of 1 pods ready", ready: true}, "web-new"},
		{"exactly one wanted, one not ready", []*corev1.Pod{pod("web-a", corev1.PodPending, "")}, 1,
			judged{msg: `0 of 1 pods ready; pod "web-a": Pending`}, "web-a"},
		{"exactly one wanted, none", nil, 1, judged{msg: "no pod matches app=web yet"}, ""},
	}
	for _, tt := range tests {
		s, names := podsStatus(tt.pods, "app=web", tt.count)
		if got := outcome(s, nil); got != tt.want || strings.Join(names, " ") != tt.names {
			t.Errorf("%s:\n got %+v, pods %q\nwant %+v, pods %q", tt.name, got, names, tt.want, tt.names)
		}
	}
}
