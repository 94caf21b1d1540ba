// Package kubewait waits for Kubernetes objects to be ready: a Deployment,
// StatefulSet or DaemonSet rolled out as `kubectl rollout status` judges it,
// a Job complete, a pod Ready, every pod that a label selector matches (and
// exactly as many as asked), or any object of any resource with a status
// condition, as `kubectl wait --for=condition=…` judges it. It is for Go
// programs, an operator waiting for what it deployed, and it is the k8s://
// target of vitals wait and vitals probe, which call it.
//
//	ready, err := kubewait.Wait(ctx, config,
//		kubewait.Target{Resource: "deployment", Namespace: "gefyra", Name: "gefyra-stowaway"},
//		kubewait.Target{Resource: "pods", Namespace: "gefyra", Selector: "app=stowaway", Count: 1})
//	pod := ready[1].Names[0] // the one pod
//
// A target is plain data, built as a struct or read from a k8s:// URL by
// Parse. Wait waits until several are ready at the same time, Watch follows
// one and reports each change, Look looks once. Each takes the *rest.Config that the caller
// already has (controller-runtime's ctrl.GetConfigOrDie or mgr.GetConfig,
// client-go's rest.InClusterConfig or clientcmd), and makes of it the one
// client it needs: a REST client, which serves as client-go's dynamic client
// and reads the API server's discovery. A kubernetes.Interface would not do:
// it cannot read a custom resource, and it links client-go's typed
// clientset, whose scheme registers every API group when the process starts
// (vitals links neither it nor client-go's discovery package, which imports
// that scheme). A dynamic.Interface alone cannot read discovery.
//
// What ready means for each kind is a pure function of the object
// (rollout.go, job.go, pod.go, condition.go). Watch follows the objects
// through the API server's watch (client-go's UntilWithSync, as kubectl
// rollout status and kubectl wait do) rather than polling. Objects are read
// as unstructured and converted to structs: a pod's of k8s.io/api, and, of
// the other kinds, this package's with the fields judged (objects.go).
//
// This package is in the module of the vitals command
// (github.com/vitals-dev/vitals/cmd/vitals), not in the library's root
// module, which uses the standard library only: importing it brings
// client-go, and the versions that this module requires.
package kubewait

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Target is what to wait for, in one namespace: one object by its name, or
// the objects that a label selector matches. The zero values of the
// optional fields are the defaults.
type Target struct {
	// Resource is the kind of object. Without a Condition: deployment,
	// statefulset, daemonset, job or pod, or kubectl's plurals and short
	// names for them (deployments, deploy, sts, ds, jobs, po, pods), or
	// those with their API group (deployments.apps). With a Condition, any
	// resource that the API server serves as well: RESOURCE.GROUP
	// (certificates.cert-manager.io), or a resource of the core group
	// (nodes), its plural, singular, kind or short name, found through the
	// API server's discovery. Required.
	Resource string
	// Namespace is where the objects are; "" is "default", as in kubectl.
	// A cluster-scoped resource (nodes) ignores it.
	Namespace string
	// Name names one object. Give a Name or a Selector.
	Name string
	// Selector is a label selector (app=web,tier!=cache): at least one
	// object must match, and every one that does must be ready. Without a
	// Condition, it selects pods; pods that have finished or are being
	// deleted are left out, as a ReplicaSet leaves them out of its count.
	Selector string
	// Count, with a Selector, is how many objects must match: the wait goes
	// on while more or fewer do (two pods in the middle of a rollout, where
	// one is wanted). 0, the default, is at least one.
	Count int
	// Condition is a status condition to wait for instead of the kind's own
	// readiness, as kubectl wait --for=condition=… takes it: TYPE, for its
	// status True, or TYPE=STATUS (Ready=False), both compared ignoring
	// case; a condition observed for an older generation than the object's
	// does not count. "" (the default) judges the kind's own readiness.
	Condition string
}

// Result is what a look at a target found: which objects, and whether they
// are ready. Its JSON is the document that vitals wait -o json writes for a
// k8s:// target, under "kubernetes".
type Result struct {
	// APIVersion and Kind say what the objects are: apps/v1 Deployment,
	// cert-manager.io/v1 Certificate. Empty while a resource found through
	// discovery has not been found yet.
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	// Namespace is the target's; "" for a cluster-scoped resource.
	Namespace string `json:"namespace,omitempty"`
	// Name is the target's Name, Selector its Selector.
	Name     string `json:"name,omitempty"`
	Selector string `json:"selector,omitempty"`
	// Names are the objects that the selector matched, sorted; for pods
	// without a condition, those that run, as the readiness and Count
	// count them.
	Names []string `json:"names,omitempty"`
	// Ready says whether the wait for the target is over.
	Ready bool `json:"ready"`
	// Message says what was found, or what is missing, in kubectl's words
	// where it has some: `Waiting for deployment "api" rollout to finish: 1
	// of 3 updated replicas are available...`. In a report of a request that
	// failed, the failure: the API server's message, or why it could not be
	// reached.
	Message string `json:"message"`
}

// status is what one look at a target found.
type status struct {
	ready   bool   // rolled out, complete, ready: the wait is over
	message string // what is missing, or what was found
}

func waiting(format string, args ...any) status {
	return status{message: fmt.Sprintf(format, args...)}
}

func ready(format string, args ...any) status {
	return status{ready: true, message: fmt.Sprintf(format, args...)}
}

// reason joins a condition's reason and message, either of which may be
// empty: "ProgressDeadlineExceeded: ReplicaSet "api-5d4" has timed out
// progressing."
func reason(reason, message string) string {
	if reason != "" && message != "" {
		return reason + ": " + message
	}
	return reason + message
}

// kind is a kind of object whose readiness this package judges itself: how
// users write it, where the API keeps it, and what ready means for it. An
// error from judge means that the object can never be ready without a
// change to it.
type kind struct {
	name    string   // as messages say it
	aliases []string // what kubectl takes for it as well
	gvk     schema.GroupVersionKind
	plural  string // its resource
	judge   func(*unstructured.Unstructured) (status, error)
}

var kinds = []kind{
	{"deployment", []string{"deployments", "deploy"}, deploymentKind, "deployments", typed(deploymentStatus)},
	{"statefulset", []string{"statefulsets", "sts"}, statefulSetKind, "statefulsets", typed(statefulSetStatus)},
	{"daemonset", []string{"daemonsets", "ds"}, daemonSetKind, "daemonsets", typed(daemonSetStatus)},
	{"job", []string{"jobs"}, jobKind, "jobs", typed(jobStatus)},
	{"pod", []string{"pods", "po"}, corev1.SchemeGroupVersion.WithKind("Pod"), "pods", typed(podStatus)},
}

// typed judges an object that the dynamic client returned by a struct of
// it: k8s.io/api's (a pod's), or this package's (objects.go).
func typed[T any](judge func(*T) (status, error)) func(*unstructured.Unstructured) (status, error) {
	return func(u *unstructured.Unstructured) (status, error) {
		obj := new(T)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
			return status{}, fmt.Errorf("%s %q: %w", strings.ToLower(u.GetKind()), u.GetName(), err)
		}
		return judge(obj)
	}
}

// kindNamed finds the kind that a resource names, as kubectl takes it: its
// name, plural or short name, alone or with its API group (deployments.apps,
// deploy.apps).
func kindNamed(resource string) *kind {
	name, group, _ := strings.Cut(strings.ToLower(resource), ".")
	for i, k := range kinds {
		if (k.name == name || slices.Contains(k.aliases, name)) && (group == "" || group == k.gvk.Group) {
			return &kinds[i]
		}
	}
	return nil
}

// kindList names the kinds for messages.
const kindList = "deployment, statefulset, daemonset, job or pod"

// Parse reads a target written as vitals wait takes it:
// k8s://KIND/NAME, k8s://pods?selector=SELECTOR (with &count=N for exactly
// N pods), or k8s://RESOURCE/NAME?condition=TYPE[=STATUS] and
// k8s://RESOURCE?selector=SELECTOR&condition=TYPE for any resource. The
// target's Namespace is left "": the URL has none. Its errors say what is
// wrong and how to write it.
func Parse(target string) (Target, error) {
	t, err := parse(target)
	if err != nil {
		return Target{}, fmt.Errorf("target %q%w", target, err)
	}
	return t, nil
}

// parse is Parse without the target in front of its errors, each of which
// starts with ": " or " " to follow it.
func parse(target string) (Target, error) {
	u, err := url.Parse(target)
	if err != nil {
		return Target{}, fmt.Errorf(": %w", err)
	}
	form := fmt.Sprintf("write k8s://KIND/NAME (KIND: %s), k8s://pods?selector=SELECTOR or k8s://RESOURCE/NAME?condition=TYPE", kindList)
	switch {
	case !strings.EqualFold(u.Scheme, "k8s"):
		return Target{}, fmt.Errorf(" is not a k8s:// target")
	case u.Host == "":
		return Target{}, fmt.Errorf(" names no kind: %s", form)
	case u.User != nil || u.Port() != "" || u.Fragment != "" || strings.HasSuffix(target, "#"):
		return Target{}, fmt.Errorf(": %s", form)
	}
	query, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return Target{}, fmt.Errorf(": %w", err)
	}
	for key, values := range query {
		if !slices.Contains([]string{"selector", "condition", "count"}, key) {
			return Target{}, fmt.Errorf(": unknown parameter %q: the parameters are selector, count and condition (k8s://pods?selector=app%%3Dweb&count=1)", key)
		}
		if len(values) > 1 && key == "selector" {
			return Target{}, fmt.Errorf(": give one selector; join requirements with a comma (%%2C)")
		}
		if len(values) > 1 {
			return Target{}, fmt.Errorf(": give one %s", key)
		}
	}
	t := Target{Resource: u.Host, Name: strings.TrimPrefix(u.Path, "/"), Selector: query.Get("selector"), Condition: query.Get("condition")}
	if query.Has("count") {
		if t.Count, err = strconv.Atoi(query.Get("count")); err != nil || t.Count < 1 {
			return Target{}, fmt.Errorf(": count %q: give a whole number of objects, 1 or more", query.Get("count"))
		}
	}
	switch {
	case query.Has("selector") && t.Selector == "":
		return Target{}, fmt.Errorf(": the selector is empty; it would match every pod")
	case query.Has("condition") && t.Condition == "":
		return Target{}, fmt.Errorf(": the condition is empty: give its type, as condition=Ready")
	case t.Selector == "" && strings.Contains(t.Name, "/"):
		return Target{}, fmt.Errorf(": write k8s://%s/NAME; the namespace is --namespace (-n)", t.resourceName())
	}
	if _, err := t.check(); err != nil {
		return Target{}, err
	}
	return t, nil
}

// compiled is a target checked: what it names, and how its objects are
// judged.
type compiled struct {
	kind      *kind      // nil for a resource found through discovery
	condition *condition // nil: the kind's own readiness
}

// check says whether the target is whole and valid, without asking the API
// server anything. Its errors start with ": " or " ", to follow the target.
func (t Target) check() (compiled, error) {
	var c compiled
	if t.Condition != "" {
		cond, err := parseCondition(t.Condition)
		if err != nil {
			return c, fmt.Errorf(": %w", err)
		}
		c.condition = &cond
	}
	c.kind = kindNamed(t.Resource)
	name := t.resourceName()
	switch {
	case t.Resource == "":
		return c, fmt.Errorf(" names no kind: give a resource, such as deployment")
	case c.kind == nil && c.condition == nil:
		return c, fmt.Errorf(": unknown kind %q: use %s (k8s://KIND/NAME), or k8s://pods?selector=SELECTOR; any other resource with a condition (k8s://RESOURCE.GROUP/NAME?condition=Ready)", t.Resource, kindList)
	case c.kind == nil && !isResource(name):
		return c, fmt.Errorf(": resource %q: write RESOURCE.GROUP, as certificates.cert-manager.io, or a resource of the core group, as nodes", t.Resource)
	case t.Selector != "" && name != "pod" && c.condition == nil:
		return c, fmt.Errorf(": a selector selects pods (k8s://pods?selector=SELECTOR), or the objects of any resource with a condition (k8s://%s?selector=SELECTOR&condition=TYPE)", name)
	case t.Selector == "" && t.Name == "" && name == "pod":
		return c, fmt.Errorf(" names no pod: write k8s://pod/NAME, or k8s://pods?selector=SELECTOR for the pods a label selector matches")
	case t.Selector == "" && t.Name == "":
		return c, fmt.Errorf(" names no %s: write k8s://%s/NAME", name, name)
	case t.Selector != "" && t.Name != "" && name == "pod":
		return c, fmt.Errorf(": give a pod's name or a selector, not both")
	case t.Selector != "" && t.Name != "":
		return c, fmt.Errorf(": give a name or a selector, not both")
	case t.Count != 0 && t.Selector == "":
		return c, fmt.Errorf(": a count applies to a selector: k8s://pods?selector=SELECTOR&count=%d", t.Count)
	case t.Count < 0:
		return c, fmt.Errorf(": count %d: give a whole number of objects, 1 or more", t.Count)
	}
	if t.Namespace != "" {
		if errs := validation.IsDNS1123Label(t.Namespace); len(errs) > 0 {
			return c, fmt.Errorf(": namespace %q: %s", t.Namespace, strings.Join(errs, "; "))
		}
	}
	if t.Name != "" {
		if errs := validation.IsDNS1123Subdomain(t.Name); len(errs) > 0 {
			return c, fmt.Errorf(": name %q: %s", t.Name, strings.Join(errs, "; "))
		}
	}
	if t.Selector != "" {
		if _, err := labels.Parse(t.Selector); err != nil {
			return c, fmt.Errorf(": selector %q: %w", t.Selector, err)
		}
	}
	return c, nil
}

// isResource says whether s can name a resource, with or without its group:
// lower-case letters, digits, '-' and '.'.
func isResource(s string) bool {
	return len(validation.IsDNS1123Subdomain(s)) == 0
}

// resourceName is the target's resource as messages say it: a kind's name
// (deployment for deploy), else the resource as given, in lower case.
func (t Target) resourceName() string {
	if k := kindNamed(t.Resource); k != nil {
		return k.name
	}
	return strings.ToLower(t.Resource)
}

// namespace is the namespace the target works in.
func (t Target) namespace() string {
	if t.Namespace == "" {
		return "default"
	}
	return t.Namespace
}

// String says what the target is the way kubectl would be told it:
// `k8s deployment/api -n shop`, `k8s pods -l app=api -n shop`,
// `k8s certificates.cert-manager.io/web -n shop --for=condition=Ready`.
func (t Target) String() string {
	resource := t.resourceName()
	if k := kindNamed(t.Resource); k != nil && t.Selector != "" {
		resource = k.plural
	}
	var b strings.Builder
	b.WriteString("k8s ")
	if t.Selector != "" {
		fmt.Fprintf(&b, "%s -l %s", resource, t.Selector)
	} else {
		fmt.Fprintf(&b, "%s/%s", resource, t.Name)
	}
	fmt.Fprintf(&b, " -n %s", t.namespace())
	if t.Condition != "" {
		fmt.Fprintf(&b, " --for=condition=%s", t.Condition)
	}
	if t.Count != 0 {
		fmt.Fprintf(&b, " (exactly %d)", t.Count)
	}
	return b.String()
}
