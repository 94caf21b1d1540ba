// Package kubewait waits for Kubernetes objects to be ready: a Deployment,
// StatefulSet or DaemonSet rolled out as `kubectl rollout status` judges it,
// a Job complete, a pod Ready, or every pod that a label selector matches.
// It is the k8s:// target of vitals wait and vitals probe; package target
// builds it in the full build only, as it links client-go.
//
// What ready means for each kind is a pure function of the object
// (rollout.go, job.go, pod.go). Watch follows the objects through the API
// server's watch (client-go's UntilWithSync, as kubectl rollout status does)
// rather than polling; Measure looks once. Both use the dynamic client of
// package kube and convert to the typed structs of k8s.io/api, never
// client-go's typed clientset.
package kubewait

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/dynamic"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/kube"
)

// Status is what one look at a target found.
type Status struct {
	Ready   bool   // rolled out, complete, ready: the wait is over
	Message string // what is missing, or what was found
}

func waiting(format string, args ...any) Status {
	return Status{Message: fmt.Sprintf(format, args...)}
}

func ready(format string, args ...any) Status {
	return Status{Ready: true, Message: fmt.Sprintf(format, args...)}
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

// kind is a kind of object that a target names: how users write it, where
// the API keeps it, and what ready means for it. An error from status means
// that the object can never be ready without a change to it.
type kind struct {
	name     string   // as messages say it
	aliases  []string // what kubectl takes for it as well
	resource schema.GroupVersionResource
	status   func(*unstructured.Unstructured) (Status, error)
}

var kinds = []kind{
	{"deployment", []string{"deployments", "deploy"}, kube.Deployments, typed(deploymentStatus)},
	{"statefulset", []string{"statefulsets", "sts"}, kube.StatefulSets, typed(statefulSetStatus)},
	{"daemonset", []string{"daemonsets", "ds"}, kube.DaemonSets, typed(daemonSetStatus)},
	{"job", []string{"jobs"}, kube.Jobs, typed(jobStatus)},
	{"pod", []string{"pods", "po"}, kube.Pods, typed(podStatus)},
}

// typed judges an object that the dynamic client returned by its k8s.io/api
// struct.
func typed[T any](status func(*T) (Status, error)) func(*unstructured.Unstructured) (Status, error) {
	return func(u *unstructured.Unstructured) (Status, error) {
		obj := new(T)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
			return Status{}, fmt.Errorf("%s %q: %w", strings.ToLower(u.GetKind()), u.GetName(), err)
		}
		return status(obj)
	}
}

func kindNamed(name string) *kind {
	name = strings.ToLower(name)
	for i, k := range kinds {
		if k.name == name || slices.Contains(k.aliases, name) {
			return &kinds[i]
		}
	}
	return nil
}

// Target is a k8s:// target: one object by name, or the pods that a label
// selector matches, in one namespace.
type Target struct {
	kind      *kind
	name      string // "" for the pods of a selector
	selector  string // a label selector, for pods
	namespace string
	server    string // the API server's URL, for messages
	client    dynamic.ResourceInterface
}

// New makes the target for k8s://KIND/NAME or k8s://pods?selector=SELECTOR,
// connected to the API server that o names (without a request yet).
func New(target string, o kube.Options) (*Target, error) {
	t, err := parse(target)
	if err != nil {
		return nil, err
	}
	if o.Namespace != "" {
		if errs := validation.IsDNS1123Label(o.Namespace); len(errs) > 0 {
			return nil, fmt.Errorf("--namespace %q: %s", o.Namespace, strings.Join(errs, "; "))
		}
	}
	config, namespace, err := kube.Connect(o)
	if err != nil {
		return nil, fmt.Errorf("target %q: %w", target, err)
	}
	client, err := kube.Dynamic(config)
	if err != nil {
		return nil, fmt.Errorf("target %q: %w", target, err)
	}
	t.namespace, t.server = namespace, config.Host
	t.client = client.Resource(t.kind.resource).Namespace(namespace)
	quietClientGo()
	return t, nil
}

// kindList names the kinds for messages.
const kindList = "deployment, statefulset, daemonset, job or pod"

// parse reads a target without connecting. Its errors say what is wrong
// with the target and how to write it.
func parse(target string) (*Target, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("target %q: %w", target, err)
	}
	form := fmt.Sprintf("write k8s://KIND/NAME (KIND: %s) or k8s://pods?selector=SELECTOR", kindList)
	switch {
	case !strings.EqualFold(u.Scheme, "k8s"):
		return nil, fmt.Errorf("target %q is not a k8s:// target", target)
	case u.Host == "":
		return nil, fmt.Errorf("target %q names no kind: %s", target, form)
	case u.User != nil || u.Port() != "" || u.Fragment != "" || strings.HasSuffix(target, "#"):
		return nil, fmt.Errorf("target %q: %s", target, form)
	}
	k := kindNamed(u.Host)
	if k == nil {
		return nil, fmt.Errorf("target %q: unknown kind %q: use %s (k8s://KIND/NAME), or k8s://pods?selector=SELECTOR", target, u.Host, kindList)
	}
	query, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, fmt.Errorf("target %q: %w", target, err)
	}
	for key := range query {
		if key != "selector" {
			return nil, fmt.Errorf("target %q: unknown parameter %q: the one parameter is selector (k8s://pods?selector=app%%3Dweb)", target, key)
		}
	}
	t := &Target{kind: k, name: strings.TrimPrefix(u.Path, "/")}
	if !query.Has("selector") {
		switch {
		case t.name == "" && k.name == "pod":
			return nil, fmt.Errorf("target %q names no pod: write k8s://pod/NAME, or k8s://pods?selector=SELECTOR for the pods a label selector matches", target)
		case t.name == "":
			return nil, fmt.Errorf("target %q names no %s: write k8s://%s/NAME", target, k.name, k.name)
		case strings.Contains(t.name, "/"):
			return nil, fmt.Errorf("target %q: write k8s://%s/NAME; the namespace is --namespace (-n)", target, k.name)
		}
		if errs := validation.IsDNS1123Subdomain(t.name); len(errs) > 0 {
			return nil, fmt.Errorf("target %q: name %q: %s", target, t.name, strings.Join(errs, "; "))
		}
		return t, nil
	}
	t.selector = query.Get("selector")
	switch {
	case k.name != "pod":
		return nil, fmt.Errorf("target %q: a selector selects pods: k8s://pods?selector=SELECTOR", target)
	case t.name != "":
		return nil, fmt.Errorf("target %q: give a pod's name or a selector, not both", target)
	case len(query["selector"]) > 1:
		return nil, fmt.Errorf("target %q: give one selector; join requirements with a comma (%%2C)", target)
	case t.selector == "":
		return nil, fmt.Errorf("target %q: the selector is empty; it would match every pod", target)
	}
	if _, err := labels.Parse(t.selector); err != nil {
		return nil, fmt.Errorf("target %q: selector %q: %w", target, t.selector, err)
	}
	return t, nil
}

// String says what the target is the way kubectl would be told it:
// `k8s deployment/api -n shop`, `k8s pods -l app=api -n shop`.
func (t *Target) String() string {
	if t.name == "" {
		return fmt.Sprintf("k8s pods -l %s -n %s", t.selector, t.namespace)
	}
	return fmt.Sprintf("k8s %s/%s -n %s", t.kind.name, t.name, t.namespace)
}

// status judges the objects found: the one named (none: not there yet), or
// the pods the selector matches.
func (t *Target) status(objs []*unstructured.Unstructured) (Status, error) {
	if t.name != "" {
		if len(objs) == 0 {
			return waiting("%s %q not found yet", t.kind.name, t.name), nil
		}
		return t.kind.status(objs[0])
	}
	pods := make([]*corev1.Pod, len(objs))
	for i, u := range objs {
		pods[i] = new(corev1.Pod)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, pods[i]); err != nil {
			return Status{}, fmt.Errorf("pod %q: %w", u.GetName(), err)
		}
	}
	return podsStatus(pods, t.selector), nil
}
