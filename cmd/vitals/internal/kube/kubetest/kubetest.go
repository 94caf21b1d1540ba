// Package kubetest is for the tests of cmd/vitals that talk to the real API
// server of internal/kubeenv: a typed client for a kubeconfig, and a
// namespace of a test's own. Tests may use client-go's typed clientset; the
// vitals binary never links it (see package kube).
package kubetest

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/kube"
)

// Client returns a typed client for the user of kubeconfig.
func Client(tb testing.TB, kubeconfig string) *kubernetes.Clientset {
	tb.Helper()
	cfg, _, err := kube.Connect(kube.Options{Kubeconfig: kubeconfig})
	if err != nil {
		tb.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return cs
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
