package kubewait

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// podStatus: a pod is ready when its Ready condition is True, which the
// kubelet sets once every container is ready. A pod that has finished
// (Succeeded or Failed) never will be.
func podStatus(p *corev1.Pod) (status, error) {
	switch p.Status.Phase {
	case corev1.PodSucceeded:
		return status{}, fmt.Errorf("pod %q has completed (phase Succeeded) and will not become ready", p.Name)
	case corev1.PodFailed:
		return status{}, fmt.Errorf("pod %q failed (%s)", p.Name, whyFailed(p))
	}
	if isReady(p) {
		return ready("pod %q is ready", p.Name), nil
	}
	return waiting("Waiting for pod %q to be ready: %s", p.Name, whyNotReady(p)), nil
}

// podsStatus: the pods that a label selector matches are ready when there is
// at least one (count, if not 0: exactly count) and every one is. A pod that
// has finished (Succeeded or Failed) is left out: it never becomes ready,
// and an evicted pod stays Failed beside the pod that replaced it. So is a
// pod being deleted (it has a deletionTimestamp), as a ReplicaSet's count of
// its pods leaves it out: the old pod of a rollout, not ready as it shuts
// down, would hold the wait until it is gone. It returns the names of the
// pods it counted, sorted.
func podsStatus(pods []*corev1.Pod, selector string, count int) (status, []string) {
	var running, notReady []*corev1.Pod
	var names []string
	finished, terminating := 0, 0
	for _, p := range pods {
		switch {
		case p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed:
			finished++
			continue
		case p.DeletionTimestamp != nil:
			terminating++
			continue
		}
		running = append(running, p)
		names = append(names, p.Name)
		if !isReady(p) {
			notReady = append(notReady, p)
		}
	}
	slices.Sort(names)
	switch {
	case len(running) == 0 && len(pods) > 0:
		var left []string
		if finished > 0 {
			left = append(left, fmt.Sprintf("%d finished", finished))
		}
		if terminating > 0 {
			left = append(left, fmt.Sprintf("%d terminating", terminating))
		}
		return waiting("no running pod matches %s yet (%s)", selector, strings.Join(left, ", ")), names
	case len(running) == 0:
		return waiting("no pod matches %s yet", selector), names
	case count != 0 && len(running) != count:
		return waiting("%d pods match %s, want exactly %d: %s", len(running), selector, count, strings.Join(names, ", ")), names
	case len(notReady) == 0:
		return ready("%d of %d pods ready", len(running), len(running)), names
	}
	first := slices.MinFunc(notReady, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return waiting("%d of %d pods ready; pod %q: %s", len(running)-len(notReady), len(running), first.Name, whyNotReady(first)), names
}

func isReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// whyNotReady says what keeps a pod from being ready, the most telling
// first: that it cannot be scheduled, a container that waits (for its image,
// in a crash loop), the Ready condition's reason, else the pod's phase.
func whyNotReady(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return reason(c.Reason, c.Message)
		}
	}
	for _, c := range slices.Concat(p.Status.InitContainerStatuses, p.Status.ContainerStatuses) {
		if w := c.State.Waiting; w != nil && w.Reason != "" {
			return fmt.Sprintf("container %q: %s", c.Name, reason(w.Reason, w.Message))
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && (c.Reason != "" || c.Message != "") {
			return reason(c.Reason, c.Message)
		}
	}
	if p.Status.Phase == "" {
		return string(corev1.PodPending)
	}
	return string(p.Status.Phase)
}

// whyFailed says why a pod failed: the pod's reason (Evicted, …), else the
// first container that exited with an error.
func whyFailed(p *corev1.Pod) string {
	if p.Status.Reason != "" || p.Status.Message != "" {
		return reason(p.Status.Reason, p.Status.Message)
	}
	for _, c := range slices.Concat(p.Status.InitContainerStatuses, p.Status.ContainerStatuses) {
		if t := c.State.Terminated; t != nil && t.ExitCode != 0 {
			why := fmt.Sprintf("container %q exited with code %d", c.Name, t.ExitCode)
			if r := reason(t.Reason, t.Message); r != "" {
				why += ": " + r
			}
			return why
		}
	}
	return "phase Failed"
}
