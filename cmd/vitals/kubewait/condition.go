package kubewait

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// condition is a wait for a status condition, judged as kubectl wait
// --for=condition=TYPE[=STATUS] judges it (its ConditionalWait, in
// kubectl's pkg/cmd/wait): the first condition of the type, compared
// ignoring case, decides; its status must equal the one wanted, ignoring
// case; and a condition whose observedGeneration (its own, else the
// status's) is older than the object's generation does not count yet, as
// the controller has not judged the latest spec. A condition never fails
// the wait: a False may turn True (kubectl waits on as well).
type condition struct {
	typ  string // Ready
	want string // True, the default, or as given
}

// parseCondition reads TYPE or TYPE=STATUS, split at the first '=' as
// kubectl splits it.
func parseCondition(s string) (condition, error) {
	typ, want, given := strings.Cut(s, "=")
	switch {
	case typ == "":
		return condition{}, fmt.Errorf("condition %q names no type: write TYPE or TYPE=STATUS, as Ready or Ready=False", s)
	case given && want == "":
		return condition{}, fmt.Errorf("condition %q has no status after '=': write TYPE or TYPE=STATUS, as Ready or Ready=False", s)
	case !given:
		want = "True"
	}
	return condition{typ: typ, want: want}, nil
}

func (c condition) String() string { return c.typ + "=" + c.want }

// judge judges one object, which messages call what (certificate "web").
func (c condition) judge(what string, u *unstructured.Unstructured) status {
	waitingFor := fmt.Sprintf("Waiting for %s condition %s", what, c)
	conditions, _, err := unstructured.NestedSlice(u.Object, "status", "conditions")
	if err != nil {
		return waiting("%s: its status.conditions is not a list: %v", waitingFor, err)
	}
	for _, raw := range conditions {
		cond, ok := raw.(map[string]any)
		if !ok {
			continue
		}
		typ, found, err := unstructured.NestedString(cond, "type")
		if !found || err != nil || !strings.EqualFold(typ, c.typ) {
			continue
		}
		got, found, err := unstructured.NestedString(cond, "status")
		if !found || err != nil {
			continue
		}
		generation, found, _ := unstructured.NestedInt64(u.Object, "metadata", "generation")
		if found {
			if observed, found := observedGeneration(u, cond); found && observed < generation {
				return waiting("%s: %s is %s for generation %d, not yet for the object's %d", waitingFor, typ, got, observed, generation)
			}
		}
		why := reason(str(cond, "reason"), str(cond, "message"))
		if strings.EqualFold(got, c.want) {
			if why != "" {
				return ready("%s condition met: %s=%s (%s)", what, typ, got, why)
			}
			return ready("%s condition met: %s=%s", what, typ, got)
		}
		if why != "" {
			return waiting("%s: it is %s (%s)", waitingFor, got, why)
		}
		return waiting("%s: it is %s", waitingFor, got)
	}
	return waiting("%s: no %s condition yet", waitingFor, c.typ)
}

// observedGeneration is the generation that a condition was judged for:
// its own observedGeneration, else the status's.
func observedGeneration(u *unstructured.Unstructured, cond map[string]any) (int64, bool) {
	if g, found, _ := unstructured.NestedInt64(cond, "observedGeneration"); found {
		return g, true
	}
	g, found, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	return g, found
}

func str(m map[string]any, key string) string {
	s, _, _ := unstructured.NestedString(m, key)
	return s
}

// selected judges the objects that a selector matched by a condition: at
// least one (count, if not 0: exactly count), and every one meeting it.
// singular and plural say the objects' kind in messages.
func (c condition) selected(objs []*unstructured.Unstructured, selector string, count int, singular, plural string) status {
	if len(objs) == 0 {
		return waiting("no %s matches %s yet", singular, selector)
	}
	if count != 0 && len(objs) != count {
		return waiting("%d %s match %s, want exactly %d: %s", len(objs), plural, selector, count, strings.Join(names(objs), ", "))
	}
	var unmet []*unstructured.Unstructured
	for _, u := range objs {
		if !c.judge("", u).ready { // its message is not shown: no name needed
			unmet = append(unmet, u)
		}
	}
	if len(unmet) == 0 {
		return ready("%d of %d %s have condition %s", len(objs), len(objs), plural, c)
	}
	first := slices.MinFunc(unmet, func(a, b *unstructured.Unstructured) int { return strings.Compare(a.GetName(), b.GetName()) })
	s := c.judge(fmt.Sprintf("%s %q", singular, first.GetName()), first)
	return waiting("%d of %d %s have condition %s; %s", len(objs)-len(unmet), len(objs), plural, c, s.message)
}

// names are the objects' names, sorted.
func names(objs []*unstructured.Unstructured) []string {
	out := make([]string, len(objs))
	for i, u := range objs {
		out[i] = u.GetName()
	}
	slices.Sort(out)
	return out
}
