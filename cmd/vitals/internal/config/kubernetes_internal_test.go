package config

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// builtinConditions, written out, are the API's own.
func TestTheBuiltinConditionsAreTheAPIs(t *testing.T) {
	api := []corev1.PodConditionType{
		corev1.PodScheduled, corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.ContainersReady,
		corev1.PodReady, corev1.DisruptionTarget, corev1.PodResizePending, corev1.PodResizeInProgress,
		corev1.AllContainersRestarting,
	}
	var want []string
	for _, c := range api {
		want = append(want, string(c))
	}
	if !slices.Equal(builtinConditions, want) {
		t.Errorf("builtinConditions %v, want %v", builtinConditions, want)
	}
}
