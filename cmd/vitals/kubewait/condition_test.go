package kubewait

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// certificate is a custom object named name at generation, with the
// conditions given (each a map, as JSON has them) and, when not 0, the
// status's observedGeneration.
func certificate(name string, generation, observed int64, conditions ...map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
		"metadata": map[string]any{"name": name, "generation": generation},
	}}
	status := map[string]any{}
	if conditions != nil {
		list := make([]any, len(conditions))
		for i, c := range conditions {
			list[i] = c
		}
		status["conditions"] = list
	}
	if observed != 0 {
		status["observedGeneration"] = observed
	}
	u.Object["status"] = status
	return u
}

func cond(typ, status string, more ...any) map[string]any {
	c := map[string]any{"type": typ, "status": status}
	for i := 0; i+1 < len(more); i += 2 {
		c[more[i].(string)] = more[i+1]
	}
	return c
}

// The cases of kubectl wait's ConditionalWait: the first condition of the
// type decides, type and status compared ignoring case, and one observed for
// an older generation does not count.
func TestAConditionIsMetAsKubectlWaitJudgesIt(t *testing.T) {
	tests := []struct {
		name string
		want string // the Condition
		obj  *unstructured.Unstructured
		ok   bool
		msg  string
	}{
		{"no status yet", "Ready", certificate("web", 1, 0), false,
			`Waiting for certificate "web" condition Ready=True: no Ready condition yet`},
		{"another condition only", "Ready", certificate("web", 1, 0, cond("Issuing", "True")), false,
			`Waiting for certificate "web" condition Ready=True: no Ready condition yet`},
		{"False, with its reason", "Ready", certificate("web", 1, 0, cond("Ready", "False", "reason", "DoesNotExist", "message", "Issuing certificate as Secret does not exist")), false,
			`Waiting for certificate "web" condition Ready=True: it is False (DoesNotExist: Issuing certificate as Secret does not exist)`},
		{"True", "Ready", certificate("web", 1, 0, cond("Issuing", "False"), cond("Ready", "True", "reason", "Ready", "message", "Certificate is up to date and has not expired")), true,
			`certificate "web" condition met: Ready=True (Ready: Certificate is up to date and has not expired)`},
		{"type and status in another case", "ready=TRUE", certificate("web", 1, 0, cond("Ready", "True")), true,
			`certificate "web" condition met: Ready=True`},
		{"waiting for False", "Ready=False", certificate("web", 1, 0, cond("Ready", "True")), false,
			`Waiting for certificate "web" condition Ready=False: it is True`},
		{"False, as wanted", "Ready=False", certificate("web", 1, 0, cond("Ready", "False")), true,
			`certificate "web" condition met: Ready=False`},
		{"Unknown", "Ready=Unknown", certificate("web", 1, 0, cond("Ready", "Unknown")), true,
			`certificate "web" condition met: Ready=Unknown`},
		{"the first of the type decides", "Ready", certificate("web", 1, 0, cond("Ready", "False"), cond("Ready", "True")), false,
			`Waiting for certificate "web" condition Ready=True: it is False`},
		{"a condition without a status is passed over", "Ready", certificate("web", 1, 0, map[string]any{"type": "Ready"}, cond("Ready", "True")), true,
			`certificate "web" condition met: Ready=True`},
		{"True for an older generation, its own", "Ready", certificate("web", 3, 0, cond("Ready", "True", "observedGeneration", int64(2))), false,
			`Waiting for certificate "web" condition Ready=True: Ready is True for generation 2, not yet for the object's 3`},
		{"True for an older generation, the status's", "Ready", certificate("web", 3, 2, cond("Ready", "True")), false,
			`Waiting for certificate "web" condition Ready=True: Ready is True for generation 2, not yet for the object's 3`},
		{"the condition's own generation before the status's", "Ready", certificate("web", 3, 2, cond("Ready", "True", "observedGeneration", int64(3))), true,
			`certificate "web" condition met: Ready=True`},
		{"True for the latest generation", "Ready", certificate("web", 3, 3, cond("Ready", "True")), true,
			`certificate "web" condition met: Ready=True`},
	}
	for _, tt := range tests {
		c, err := parseCondition(tt.want)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if s := c.judge(`certificate "web"`, tt.obj); s.ready != tt.ok || s.message != tt.msg {
			t.Errorf("%s:\n got %v %q\nwant %v %q", tt.name, s.ready, s.message, tt.ok, tt.msg)
		}
	}
}

func TestTheObjectsOfASelectorMeetAConditionWhenOneMatchesAndAllDo(t *testing.T) {
	c, _ := parseCondition("Ready")
	ready := func(name string) *unstructured.Unstructured { return certificate(name, 1, 0, cond("Ready", "True")) }
	notReady := func(name string) *unstructured.Unstructured {
		return certificate(name, 1, 0, cond("Ready", "False", "reason", "Pending"))
	}
	tests := []struct {
		name  string
		objs  []*unstructured.Unstructured
		count int
		judged
	}{
		{"none", nil, 0, judged{msg: "no certificate matches app=web yet"}},
		{"one of two", []*unstructured.Unstructured{ready("b"), notReady("c"), notReady("a")}, 0,
			judged{msg: `1 of 3 certificates have condition Ready=True; Waiting for certificate "a" condition Ready=True: it is False (Pending)`}},
		{"all", []*unstructured.Unstructured{ready("a"), ready("b")}, 0, judged{msg: "2 of 2 certificates have condition Ready=True", ready: true}},
		{"all, but one too many", []*unstructured.Unstructured{ready("b"), ready("a")}, 1,
			judged{msg: "2 certificates match app=web, want exactly 1: a, b"}},
		{"exactly as many as wanted", []*unstructured.Unstructured{ready("a")}, 1, judged{msg: "1 of 1 certificates have condition Ready=True", ready: true}},
	}
	for _, tt := range tests {
		if got := outcome(c.selected(tt.objs, "app=web", tt.count, "certificate", "certificates"), nil); got != tt.judged {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, got, tt.judged)
		}
	}
}
