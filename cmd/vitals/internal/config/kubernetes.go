package config

import (
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"k8s.io/apimachinery/pkg/api/validate/content"
)

// Kubernetes is the kubernetes: block: what the agent tells Kubernetes
// about the pod it runs in (named by POD_NAME and POD_NAMESPACE, from the
// downward API).
type Kubernetes struct {
	// Events writes an Event on the pod when a check fails or passes, and
	// when the workload is restarted, as the kubelet does for its probes.
	// Default false.
	Events bool
	// Condition is the type of a pod condition that follows the ready
	// level, True exactly when /readyz answers 200: for the pod's
	// spec.readinessGates. A qualified name with a prefix, such as
	// vitals.dev/ready. Default "": none.
	Condition string
}

// builtinConditions are the pod conditions that Kubernetes itself sets
// (k8s.io/api/core/v1's PodConditionType constants, written out so that
// config need not import the API's types): a readiness gate on one of them
// would fight the kubelet.
var builtinConditions = []string{
	"PodScheduled", "PodReadyToStartContainers", "Initialized", "ContainersReady",
	"Ready", "DisruptionTarget", "PodResizePending", "PodResizeInProgress",
	"AllContainersRestarting",
}

// kubernetes reads the kubernetes: block.
func (d *Decoder) kubernetes(n ast.Node, path string) *Kubernetes {
	k := &Kubernetes{}
	mark := d.Failures()
	if _, ok := d.Fields(n, path, kubernetesFields(k)); !ok {
		return nil
	}
	if d.Failures() == mark && !k.Events && k.Condition == "" {
		d.Errorf(n, path, "nothing to tell Kubernetes: give events: true, or condition: with a condition type such as vitals.dev/ready")
	}
	return k
}

// kubernetesFields are the fields of the kubernetes: block, read into k.
func kubernetesFields(k *Kubernetes) []Field {
	return []Field{
		{Key: "events", Value: Bool(&k.Events), Default: "false",
			Doc: "Writes an Event on the pod when a check fails or passes, and when the workload is restarted, as the kubelet does for its probes."},
		{Key: "condition", Value: Value{"string", func(d *Decoder, n ast.Node, path string) {
			if s, ok := d.scalar(n, path); ok {
				k.Condition = s
				d.conditionType(n, path, s)
			}
		}, scalar}, Doc: "A pod condition type of your own (PREFIX/NAME, such as vitals.dev/ready) that is True exactly when /readyz answers 200: for the pod's spec.readinessGates."},
	}
}

// conditionType checks a pod condition type of vitals's own: a qualified
// name with a prefix (PREFIX/NAME, the prefix a DNS subdomain), as the API
// server wants custom pod conditions, and none of the built-in ones.
func (d *Decoder) conditionType(n ast.Node, path, s string) {
	switch {
	case slices.Contains(builtinConditions, s):
		d.Errorf(n, path, "%q is a pod condition Kubernetes sets itself: give one of your own with a prefix, such as vitals.dev/ready", s)
	case !strings.Contains(s, "/"):
		d.Errorf(n, path, "%q has no prefix: a pod condition of your own is PREFIX/NAME, such as vitals.dev/ready", s)
	default:
		if msgs := content.IsLabelKey(s); len(msgs) > 0 {
			d.Errorf(n, path, "%q is not a qualified name such as vitals.dev/ready: %s", s, strings.Join(msgs, "; "))
		}
	}
}
