// Package kube connects vitals to a Kubernetes API server: in a pod with
// its service account, elsewhere with a kubeconfig, the way kubectl finds
// one. It hands out client-go's dynamic client: the parts that use it
// convert to and from the typed objects of k8s.io/api, and never link
// client-go's typed clientset, whose scheme registers every API group at
// start (about 8 ms more for every start of vitals, probes included).
package kube

import (
	"errors"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/vitals-dev/vitals/version"
)

// The resources vitals reads and writes.
var (
	Pods         = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	Events       = schema.GroupVersionResource{Version: "v1", Resource: "events"}
	Deployments  = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	StatefulSets = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}
	DaemonSets   = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}
	Jobs         = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
)

// Options say where the API server is. Zero values take kubectl's defaults:
// the KUBECONFIG environment variable, else ~/.kube/config, its current
// context and that context's namespace; in a pod with neither, the pod's
// service account and namespace.
type Options struct {
	Kubeconfig string // a kubeconfig file (--kubeconfig)
	Context    string // a context of it (--context)
	Namespace  string // the namespace (-n); "" is the context's, or the pod's
}

// Connect returns the client configuration and the namespace to work in.
func Connect(o Options) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.Kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: o.Context}
	overrides.Context.Namespace = o.Namespace
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	config, err := loader.ClientConfig()
	if err != nil {
		if o.Kubeconfig == "" && clientcmd.IsEmptyConfig(err) {
			return nil, "", errors.New("kubernetes: no kubeconfig (KUBECONFIG, ~/.kube/config) and not in a pod (no KUBERNETES_SERVICE_HOST)")
		}
		return nil, "", fmt.Errorf("kubernetes: %w", err)
	}
	namespace, _, err := loader.Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("kubernetes: the namespace: %w", err)
	}
	config.UserAgent = "vitals/" + version.Version
	return config, namespace, nil
}

// Dynamic returns a dynamic client for the configuration.
func Dynamic(config *rest.Config) (*dynamic.DynamicClient, error) {
	c, err := dynamic.NewForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: a client for %s: %w", config.Host, err)
	}
	return c, nil
}

// Pod names the pod vitals runs in, from the downward API's environment
// variables POD_NAME and POD_NAMESPACE (the namespace falls back to the
// service account's, in a pod).
func Pod() (name, namespace string, err error) {
	name, namespace = os.Getenv("POD_NAME"), os.Getenv("POD_NAMESPACE")
	if namespace == "" {
		if b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil {
			namespace = string(b)
		}
	}
	if name == "" || namespace == "" {
		return "", "", errors.New("kubernetes: the pod is named by the environment variables POD_NAME and POD_NAMESPACE: set them from the downward API (fieldRef metadata.name and metadata.namespace)")
	}
	return name, namespace, nil
}
