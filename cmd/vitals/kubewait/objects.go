package kubewait

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The Deployments, StatefulSets, DaemonSets and Jobs as this package reads
// them: the fields that kubectl's StatusViewers and the Job's conditions
// are judged by, named as apps/v1 and batch/v1 name them, decoded from what
// the dynamic client returns (typed). k8s.io/api's own types of the two
// groups would link 0.9 MiB of the release binary into every vitals (with
// scheduling/v1alpha3's, which batch/v1 imports) for these few fields. The
// tests build the objects with k8s.io/api's types and judge them through
// the same decoding, so a field misnamed here fails them.

var (
	deploymentKind  = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	statefulSetKind = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}
	daemonSetKind   = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "DaemonSet"}
	jobKind         = schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}
)

// The values of the fields read that the judgements compare, as apps/v1
// and batch/v1 spell them.
const (
	conditionTrue    = "True"
	progressing      = "Progressing"   // a Deployment's condition
	rollingUpdate    = "RollingUpdate" // a DaemonSet's or StatefulSet's update strategy
	jobComplete      = "Complete"
	jobFailed        = "Failed"
	jobFailureTarget = "FailureTarget"
)

// statusCondition is a condition of a Deployment's or a Job's status.
type statusCondition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

type deployment struct {
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Replicas *int32 `json:"replicas"`
	} `json:"spec"`
	Status struct {
		ObservedGeneration int64             `json:"observedGeneration"`
		Replicas           int32             `json:"replicas"`
		UpdatedReplicas    int32             `json:"updatedReplicas"`
		AvailableReplicas  int32             `json:"availableReplicas"`
		Conditions         []statusCondition `json:"conditions"`
	} `json:"status"`
}

type daemonSet struct {
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		UpdateStrategy struct {
			Type string `json:"type"`
		} `json:"updateStrategy"`
	} `json:"spec"`
	Status struct {
		ObservedGeneration     int64 `json:"observedGeneration"`
		DesiredNumberScheduled int32 `json:"desiredNumberScheduled"`
		UpdatedNumberScheduled int32 `json:"updatedNumberScheduled"`
		NumberAvailable        int32 `json:"numberAvailable"`
	} `json:"status"`
}

type statefulSet struct {
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Replicas       *int32 `json:"replicas"`
		UpdateStrategy struct {
			Type          string `json:"type"`
			RollingUpdate *struct {
				Partition *int32 `json:"partition"`
			} `json:"rollingUpdate"`
		} `json:"updateStrategy"`
	} `json:"spec"`
	Status struct {
		ObservedGeneration int64  `json:"observedGeneration"`
		ReadyReplicas      int32  `json:"readyReplicas"`
		UpdatedReplicas    int32  `json:"updatedReplicas"`
		CurrentReplicas    int32  `json:"currentReplicas"`
		UpdateRevision     string `json:"updateRevision"`
		CurrentRevision    string `json:"currentRevision"`
	} `json:"status"`
}

type job struct {
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Suspend     *bool  `json:"suspend"`
		Completions *int32 `json:"completions"`
	} `json:"spec"`
	Status struct {
		Conditions []statusCondition `json:"conditions"`
		Succeeded  int32             `json:"succeeded"`
		Active     int32             `json:"active"`
		Failed     int32             `json:"failed"`
	} `json:"status"`
}
