// Package kubetest is for the tests of cmd/vitals that talk to the real API
// server of internal/kubeenv: a typed client for a kubeconfig, a namespace of
// a test's own, pods moved on as a kubelet would, and a custom resource
// (certificates.cert-manager.io) moved on as its controller would. Tests may
// use client-go's typed clientset; the vitals binary never links it (see
// package kube).
package kubetest

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/kube"
)

// Client returns a typed client for the user of kubeconfig.
func Client(tb testing.TB, kubeconfig string) *kubernetes.Clientset {
	tb.Helper()
	cs, err := kubernetes.NewForConfig(Config(tb, kubeconfig))
	if err != nil {
		tb.Fatal(err)
	}
	return cs
}

// Dynamic returns a dynamic client for the user of kubeconfig, for the
// resources that the typed one does not have.
func Dynamic(tb testing.TB, kubeconfig string) dynamic.Interface {
	tb.Helper()
	client, err := kube.Dynamic(Config(tb, kubeconfig))
	if err != nil {
		tb.Fatal(err)
	}
	return client
}

// Config returns the client configuration of the user of kubeconfig.
func Config(tb testing.TB, kubeconfig string) *rest.Config {
	tb.Helper()
	cfg, _, err := kube.Connect(kube.Options{Kubeconfig: kubeconfig})
	if err != nil {
		tb.Fatal(err)
	}
	return cfg
}

// Namespace creates a namespace named prefix and a random suffix, and
// returns its name. Every test gets a new one: the test API server runs no
// namespace controller, so a deleted namespace would stay Terminating.
func Namespace(tb testing.TB, admin kubernetes.Interface, prefix string) string {
	tb.Helper()
	ns, err := admin.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}, metav1.CreateOptions{})
	if err != nil {
		tb.Fatalf("create a namespace %s-…: %v", prefix, err)
	}
	return ns.Name
}

// Certificates is the resource of the custom resource that
// InstallCertificates installs.
var Certificates = schema.GroupVersionResource{Group: "cert-manager.io", Version: "v1", Resource: "certificates"}

// InstallCertificates installs a CustomResourceDefinition in the image of
// cert-manager's Certificate (certificates.cert-manager.io, namespaced, v1,
// with a status subresource and any fields), unless the API server has it
// already, and returns once the API server serves it in its discovery.
func InstallCertificates(tb testing.TB, kubeconfig string) {
	tb.Helper()
	ctx := context.Background()
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "certificates.cert-manager.io"},
		"spec": map[string]any{
			"group": "cert-manager.io",
			"scope": "Namespaced",
			"names": map[string]any{"kind": "Certificate", "listKind": "CertificateList", "plural": "certificates",
				"singular": "certificate", "shortNames": []any{"cert", "certs"}},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"subresources": map[string]any{"status": map[string]any{}},
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
			}},
		},
	}}
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := Dynamic(tb, kubeconfig).Resource(crds).Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		tb.Fatalf("install the CustomResourceDefinition certificates.cert-manager.io: %v", err)
	}
	discovery := Client(tb, kubeconfig).Discovery()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) { // a guard only
		l, err := discovery.ServerResourcesForGroupVersion("cert-manager.io/v1")
		if err == nil && slices.ContainsFunc(l.APIResources, func(r metav1.APIResource) bool { return r.Name == "certificates" }) {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the API server does not serve certificates.cert-manager.io 60s after its CustomResourceDefinition was made: %v", err)
		}
	}
}

// CreatePod creates a pod with one container and labels, which no kubelet
// runs: it stays Pending until PodReady.
func CreatePod(tb testing.TB, cs kubernetes.Interface, namespace, name string, labels map[string]string) {
	tb.Helper()
	_, err := cs.CoreV1().Pods(namespace).Create(context.Background(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		tb.Fatal(err)
	}
}

// PodReady makes a pod Running and Ready, as its kubelet would.
func PodReady(tb testing.TB, cs kubernetes.Interface, namespace, name string) {
	tb.Helper()
	ctx := context.Background()
	p, err := cs.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
	if _, err := cs.CoreV1().Pods(namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		tb.Fatal(err)
	}
}

// CreateCertificate creates a Certificate (InstallCertificates) with no
// status, as cert-manager's controller has not seen it yet.
func CreateCertificate(tb testing.TB, kubeconfig, namespace, name string) {
	tb.Helper()
	c := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"secretName": name + "-tls", "dnsNames": []any{name + ".example"}},
	}}
	if _, err := Dynamic(tb, kubeconfig).Resource(Certificates).Namespace(namespace).Create(context.Background(), c, metav1.CreateOptions{}); err != nil {
		tb.Fatal(err)
	}
}

// CertificateReady sets a Certificate's Ready condition, for its latest
// generation, through its status subresource, as cert-manager's controller
// would.
func CertificateReady(tb testing.TB, kubeconfig, namespace, name, status, reason, message string) {
	tb.Helper()
	ctx := context.Background()
	certs := Dynamic(tb, kubeconfig).Resource(Certificates).Namespace(namespace)
	c, err := certs.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	c.Object["status"] = map[string]any{"conditions": []any{map[string]any{
		"type": "Ready", "status": status, "reason": reason, "message": message,
		"observedGeneration": c.GetGeneration(), "lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
	}}}
	if _, err := certs.UpdateStatus(ctx, c, metav1.UpdateOptions{}); err != nil {
		tb.Fatal(err)
	}
}
