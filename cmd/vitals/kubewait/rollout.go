package kubewait

import (
	"errors"
	"fmt"
)

// The rollouts of Deployments, DaemonSets and StatefulSets, judged as
// `kubectl rollout status` judges them (the StatusViewers of kubectl's
// polymorphichelpers/rollout_status.go), in its words, so that a user who
// knows one knows the other. Only the trailing newline of kubectl's messages
// is left out.

// progressDeadlineExceeded is the reason of a Deployment's Progressing
// condition once its rollout has made no progress for
// progressDeadlineSeconds (the deployment controller's TimedOutReason).
const progressDeadlineExceeded = "ProgressDeadlineExceeded"

// errOnlyRollingUpdate is kubectl's answer for a DaemonSet or StatefulSet
// updated OnDelete: its rollout has no status to wait for.
var errOnlyRollingUpdate = errors.New("rollout status is only available for RollingUpdate strategy type")

func deploymentStatus(d *deployment) (status, error) {
	if d.Generation > d.Status.ObservedGeneration {
		return waiting("Waiting for deployment spec update to be observed..."), nil
	}
	for _, c := range d.Status.Conditions {
		if c.Type == progressing && c.Reason == progressDeadlineExceeded {
			return status{}, fmt.Errorf("deployment %q exceeded its progress deadline (%s)", d.Name, reason(c.Reason, c.Message))
		}
	}
	s := d.Status
	switch {
	case d.Spec.Replicas != nil && s.UpdatedReplicas < *d.Spec.Replicas:
		return waiting("Waiting for deployment %q rollout to finish: %d out of %d new replicas have been updated...", d.Name, s.UpdatedReplicas, *d.Spec.Replicas), nil
	case s.Replicas > s.UpdatedReplicas:
		return waiting("Waiting for deployment %q rollout to finish: %d old replicas are pending termination...", d.Name, s.Replicas-s.UpdatedReplicas), nil
	case s.AvailableReplicas < s.UpdatedReplicas:
		return waiting("Waiting for deployment %q rollout to finish: %d of %d updated replicas are available...", d.Name, s.AvailableReplicas, s.UpdatedReplicas), nil
	}
	return ready("deployment %q successfully rolled out", d.Name), nil
}

func daemonSetStatus(d *daemonSet) (status, error) {
	if d.Spec.UpdateStrategy.Type != rollingUpdate {
		return status{}, errOnlyRollingUpdate
	}
	if d.Generation > d.Status.ObservedGeneration {
		return waiting("Waiting for daemon set spec update to be observed..."), nil
	}
	s := d.Status
	switch {
	case s.UpdatedNumberScheduled < s.DesiredNumberScheduled:
		return waiting("Waiting for daemon set %q rollout to finish: %d out of %d new pods have been updated...", d.Name, s.UpdatedNumberScheduled, s.DesiredNumberScheduled), nil
	case s.NumberAvailable < s.DesiredNumberScheduled:
		return waiting("Waiting for daemon set %q rollout to finish: %d of %d updated pods are available...", d.Name, s.NumberAvailable, s.DesiredNumberScheduled), nil
	}
	return ready("daemon set %q successfully rolled out", d.Name), nil
}

// statefulSetStatus follows kubectl to the letter, also where it surprises:
// the API server defaults a RollingUpdate's partition to 0, so a StatefulSet
// is done once every replica is ready and updated ("partitioned roll out
// complete"), and the comparison of revisions after that is reached only
// when rollingUpdate is absent.
func statefulSetStatus(s *statefulSet) (status, error) {
	if s.Spec.UpdateStrategy.Type != rollingUpdate {
		return status{}, errOnlyRollingUpdate
	}
	if s.Status.ObservedGeneration == 0 || s.Generation > s.Status.ObservedGeneration {
		return waiting("Waiting for statefulset spec update to be observed..."), nil
	}
	if s.Spec.Replicas != nil && s.Status.ReadyReplicas < *s.Spec.Replicas {
		return waiting("Waiting for %d pods to be ready...", *s.Spec.Replicas-s.Status.ReadyReplicas), nil
	}
	if u := s.Spec.UpdateStrategy.RollingUpdate; u != nil {
		if s.Spec.Replicas != nil && u.Partition != nil {
			if want := *s.Spec.Replicas - *u.Partition; s.Status.UpdatedReplicas < want {
				return waiting("Waiting for partitioned roll out to finish: %d out of %d new pods have been updated...", s.Status.UpdatedReplicas, want), nil
			}
		}
		return ready("partitioned roll out complete: %d new pods have been updated...", s.Status.UpdatedReplicas), nil
	}
	if s.Status.UpdateRevision != s.Status.CurrentRevision {
		return waiting("waiting for statefulset rolling update to complete %d pods at revision %s...", s.Status.UpdatedReplicas, s.Status.UpdateRevision), nil
	}
	return ready("statefulset rolling update complete %d pods at revision %s...", s.Status.CurrentReplicas, s.Status.CurrentRevision), nil
}
