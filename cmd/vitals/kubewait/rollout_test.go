package kubewait

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// The cases of kubectl's rollout_status_test.go, and the ones it leaves out
// (a progress deadline, a paused or unpartitioned StatefulSet), with
// kubectl's messages.

// judged is one status evaluation's outcome: the status, or the error of a
// target that can never be ready.
type judged struct {
	msg    string
	ready  bool
	failed string // the error; "" when none
}

// judge judges obj, an object of k8s.io/api, as the dynamic client would
// give it: as an unstructured object, decoded by typed.
func judge[T any](t *testing.T, obj any, f func(*T) (status, error)) judged {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	return outcome(typed(f)(&unstructured.Unstructured{Object: m}))
}

func outcome(s status, err error) judged {
	if err != nil {
		return judged{failed: err.Error()}
	}
	return judged{msg: s.message, ready: s.ready}
}

func TestADeploymentIsRolledOutAsKubectlRolloutStatusSays(t *testing.T) {
	tests := []struct {
		name       string
		generation int64
		replicas   int32
		status     appsv1.DeploymentStatus
		want       judged
	}{
		{"fewer updated replicas than wanted", 0, 1,
			appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 1, UpdatedReplicas: 0, AvailableReplicas: 1},
			judged{msg: `Waiting for deployment "foo" rollout to finish: 0 out of 1 new replicas have been updated...`}},
		{"old replicas still there", 1, 1,
			appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 2, UpdatedReplicas: 1, AvailableReplicas: 2},
			judged{msg: `Waiting for deployment "foo" rollout to finish: 1 old replicas are pending termination...`}},
		{"an updated replica not available yet", 1, 2,
			appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 1, UnavailableReplicas: 1},
			judged{msg: `Waiting for deployment "foo" rollout to finish: 1 of 2 updated replicas are available...`}},
		{"every replica updated and available", 1, 2,
			appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 2},
			judged{msg: `deployment "foo" successfully rolled out`, ready: true}},
		{"a spec the controller has not seen", 2, 2,
			appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 2},
			judged{msg: "Waiting for deployment spec update to be observed..."}},
		{"a new deployment without status", 1, 3,
			appsv1.DeploymentStatus{},
			judged{msg: "Waiting for deployment spec update to be observed..."}},
		{"past its progress deadline", 1, 3,
			appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 3, UpdatedReplicas: 1, Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: "False", Reason: "MinimumReplicasUnavailable"},
				{Type: appsv1.DeploymentProgressing, Status: "False", Reason: "ProgressDeadlineExceeded", Message: `ReplicaSet "foo-5d4" has timed out progressing.`},
			}},
			judged{failed: `deployment "foo" exceeded its progress deadline (ProgressDeadlineExceeded: ReplicaSet "foo-5d4" has timed out progressing.)`}},
		{"past its progress deadline, but the controller has not seen the new spec", 2, 3,
			appsv1.DeploymentStatus{ObservedGeneration: 1, Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentProgressing, Status: "False", Reason: "ProgressDeadlineExceeded"},
			}},
			judged{msg: "Waiting for deployment spec update to be observed..."}},
		{"progressing", 1, 3,
			appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 3, UpdatedReplicas: 3, AvailableReplicas: 2, Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentProgressing, Status: "True", Reason: "ReplicaSetUpdated"},
			}},
			judged{msg: `Waiting for deployment "foo" rollout to finish: 2 of 3 updated replicas are available...`}},
	}
	for _, tt := range tests {
		d := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: "bar", Name: "foo", Generation: tt.generation},
			Spec:       appsv1.DeploymentSpec{Replicas: &tt.replicas},
			Status:     tt.status,
		}
		if got := judge(t, d, deploymentStatus); got != tt.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, got, tt.want)
		}
	}
}

func TestADaemonSetIsRolledOutAsKubectlRolloutStatusSays(t *testing.T) {
	tests := []struct {
		name       string
		generation int64
		strategy   appsv1.DaemonSetUpdateStrategyType
		status     appsv1.DaemonSetStatus
		want       judged
	}{
		{"a node without the new pod", 0, appsv1.RollingUpdateDaemonSetStrategyType,
			appsv1.DaemonSetStatus{ObservedGeneration: 1, UpdatedNumberScheduled: 0, DesiredNumberScheduled: 1},
			judged{msg: `Waiting for daemon set "foo" rollout to finish: 0 out of 1 new pods have been updated...`}},
		{"an updated pod not available yet", 1, appsv1.RollingUpdateDaemonSetStrategyType,
			appsv1.DaemonSetStatus{ObservedGeneration: 1, UpdatedNumberScheduled: 2, DesiredNumberScheduled: 2, NumberAvailable: 1},
			judged{msg: `Waiting for daemon set "foo" rollout to finish: 1 of 2 updated pods are available...`}},
		{"every pod updated and available", 1, appsv1.RollingUpdateDaemonSetStrategyType,
			appsv1.DaemonSetStatus{ObservedGeneration: 1, UpdatedNumberScheduled: 2, DesiredNumberScheduled: 2, NumberAvailable: 2},
			judged{msg: `daemon set "foo" successfully rolled out`, ready: true}},
		{"a spec the controller has not seen", 2, appsv1.RollingUpdateDaemonSetStrategyType,
			appsv1.DaemonSetStatus{ObservedGeneration: 1, UpdatedNumberScheduled: 2, DesiredNumberScheduled: 2, NumberAvailable: 2},
			judged{msg: "Waiting for daemon set spec update to be observed..."}},
		{"updated on delete", 1, appsv1.OnDeleteDaemonSetStrategyType,
			appsv1.DaemonSetStatus{ObservedGeneration: 1},
			judged{failed: "rollout status is only available for RollingUpdate strategy type"}},
	}
	for _, tt := range tests {
		d := &appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: "bar", Name: "foo", Generation: tt.generation},
			Spec:       appsv1.DaemonSetSpec{UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: tt.strategy}},
			Status:     tt.status,
		}
		if got := judge(t, d, daemonSetStatus); got != tt.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, got, tt.want)
		}
	}
}

func TestAStatefulSetIsRolledOutAsKubectlRolloutStatusSays(t *testing.T) {
	partition := func(p int32) *appsv1.RollingUpdateStatefulSetStrategy {
		return &appsv1.RollingUpdateStatefulSetStrategy{Partition: &p}
	}
	rolling := appsv1.RollingUpdateStatefulSetStrategyType
	tests := []struct {
		name       string
		generation int64
		strategy   appsv1.StatefulSetUpdateStrategy
		status     appsv1.StatefulSetStatus
		want       judged
	}{
		{"updated on delete", 1, appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType},
			appsv1.StatefulSetStatus{ObservedGeneration: 1, ReadyReplicas: 1},
			judged{failed: "rollout status is only available for RollingUpdate strategy type"}},
		{"a spec the controller has not seen", 2, appsv1.StatefulSetUpdateStrategy{Type: rolling},
			appsv1.StatefulSetStatus{ObservedGeneration: 1, Replicas: 3, ReadyReplicas: 3, CurrentReplicas: 3},
			judged{msg: "Waiting for statefulset spec update to be observed..."}},
		{"a new statefulset without status", 1, appsv1.StatefulSetUpdateStrategy{Type: rolling},
			appsv1.StatefulSetStatus{},
			judged{msg: "Waiting for statefulset spec update to be observed..."}},
		{"a pod not ready", 1, appsv1.StatefulSetUpdateStrategy{Type: rolling},
			appsv1.StatefulSetStatus{ObservedGeneration: 2, Replicas: 3, ReadyReplicas: 2, CurrentReplicas: 3},
			judged{msg: "Waiting for 1 pods to be ready..."}},
		{"every pod above the partition updated", 1, appsv1.StatefulSetUpdateStrategy{Type: rolling, RollingUpdate: partition(2)},
			appsv1.StatefulSetStatus{ObservedGeneration: 2, Replicas: 3, ReadyReplicas: 3, CurrentReplicas: 2, UpdatedReplicas: 1},
			judged{msg: "partitioned roll out complete: 1 new pods have been updated...", ready: true}},
		{"a pod above the partition not updated", 1, appsv1.StatefulSetUpdateStrategy{Type: rolling, RollingUpdate: partition(2)},
			appsv1.StatefulSetStatus{ObservedGeneration: 2, Replicas: 3, ReadyReplicas: 3, CurrentReplicas: 3},
			judged{msg: "Waiting for partitioned roll out to finish: 0 out of 1 new pods have been updated..."}},
		{"the API server's default partition 0, every pod updated", 1, appsv1.StatefulSetUpdateStrategy{Type: rolling, RollingUpdate: partition(0)},
			appsv1.StatefulSetStatus{ObservedGeneration: 1, Replicas: 3, ReadyReplicas: 3, UpdatedReplicas: 3, CurrentRevision: "foo-1", UpdateRevision: "foo-2"},
			judged{msg: "partitioned roll out complete: 3 new pods have been updated...", ready: true}},
		{"every pod at the current revision", 1, appsv1.StatefulSetUpdateStrategy{Type: rolling},
			appsv1.StatefulSetStatus{ObservedGeneration: 2, Replicas: 3, ReadyReplicas: 3, CurrentReplicas: 3, UpdatedReplicas: 3, CurrentRevision: "foo", UpdateRevision: "foo"},
			judged{msg: "statefulset rolling update complete 3 pods at revision foo...", ready: true}},
		{"pods at an old revision", 1, appsv1.StatefulSetUpdateStrategy{Type: rolling},
			appsv1.StatefulSetStatus{ObservedGeneration: 1, Replicas: 3, ReadyReplicas: 3, CurrentReplicas: 2, UpdatedReplicas: 1, CurrentRevision: "foo-1", UpdateRevision: "foo-2"},
			judged{msg: "waiting for statefulset rolling update to complete 1 pods at revision foo-2..."}},
	}
	for _, tt := range tests {
		replicas := int32(3)
		s := &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: "bar", Name: "foo", Generation: tt.generation},
			Spec:       appsv1.StatefulSetSpec{Replicas: &replicas, UpdateStrategy: tt.strategy},
			Status:     tt.status,
		}
		if got := judge(t, s, statefulSetStatus); got != tt.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, got, tt.want)
		}
	}
}
