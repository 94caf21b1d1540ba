package kubewait

import (
	"fmt"
)

// jobStatus: a Job is done when its Complete condition is True. When its
// Failed condition is True it never will be, and neither once FailureTarget
// is: the job controller sets that when it has decided that the Job fails,
// and Failed follows only after the Job's pods have terminated, which may
// take their grace period.
func jobStatus(j *job) (status, error) {
	for _, c := range j.Status.Conditions {
		if c.Status == conditionTrue && (c.Type == jobFailed || c.Type == jobFailureTarget) {
			return status{}, fmt.Errorf("job %q failed (%s)", j.Name, reason(c.Reason, c.Message))
		}
	}
	for _, c := range j.Status.Conditions {
		if c.Type == jobComplete && c.Status == conditionTrue {
			return ready("job %q complete: %d succeeded", j.Name, j.Status.Succeeded), nil
		}
	}
	if j.Spec.Suspend != nil && *j.Spec.Suspend {
		return waiting("job %q is suspended", j.Name), nil
	}
	succeeded := fmt.Sprint(j.Status.Succeeded)
	if j.Spec.Completions != nil {
		succeeded = fmt.Sprintf("%d of %d", j.Status.Succeeded, *j.Spec.Completions)
	}
	return waiting("Waiting for job %q to complete: %s succeeded, %d active, %d failed...", j.Name, succeeded, j.Status.Active, j.Status.Failed), nil
}
