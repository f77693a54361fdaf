package job

import (
	"fmt"
	"slices"

	batch "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
)

// policyMatch is what a failed pod's match against the pod failure policy
// decides.
type policyMatch struct {
	// failJob is the Job's failure message when a FailJob rule matched.
	failJob *string
	// count is false when an Ignore rule matched: the failure counts
	// toward neither backoffLimit nor backoffLimitPerIndex.
	count bool
	// action is the matched rule's action, nil when none matched.
	action *batch.PodFailurePolicyAction
}

// matchFailurePolicy evaluates the rules in order against a failed pod;
// the first that matches decides. Without a policy, or when no rule
// matches, the failure counts.
func matchFailurePolicy(policy *batch.PodFailurePolicy, pod *v1.Pod) policyMatch {
	if policy == nil {
		return policyMatch{count: true}
	}
	for i := range policy.Rules {
		rule := &policy.Rules[i]
		var msg string
		switch {
		case rule.OnExitCodes != nil:
			cs := matchExitCodes(&pod.Status, rule.OnExitCodes)
			if cs == nil {
				continue
			}
			msg = fmt.Sprintf("Container %s for pod %s/%s failed with exit code %v matching %v rule at index %d",
				cs.Name, pod.Namespace, pod.Name, cs.State.Terminated.ExitCode, rule.Action, i)
		case rule.OnPodConditions != nil:
			cond := matchPodConditions(&pod.Status, rule.OnPodConditions)
			if cond == nil {
				continue
			}
			msg = fmt.Sprintf("Pod %s/%s has condition %v matching %v rule at index %d",
				pod.Namespace, pod.Name, cond.Type, rule.Action, i)
		default:
			continue
		}
		action := rule.Action
		switch action {
		case batch.PodFailurePolicyActionIgnore:
			return policyMatch{count: false, action: &action}
		case batch.PodFailurePolicyActionFailIndex, batch.PodFailurePolicyActionCount:
			return policyMatch{count: true, action: &action}
		case batch.PodFailurePolicyActionFailJob:
			return policyMatch{failJob: &msg, count: true, action: &action}
		}
		// An action this version does not know: the rule is skipped, as
		// upstream's switch falls through to the next rule.
	}
	return policyMatch{count: true}
}

// matchExitCodes returns the first terminated container (regular ones
// before init containers) whose non-zero exit code satisfies req.
func matchExitCodes(status *v1.PodStatus, req *batch.PodFailurePolicyOnExitCodesRequirement) *v1.ContainerStatus {
	if cs := matchExitCodesIn(status.ContainerStatuses, req); cs != nil {
		return cs
	}
	return matchExitCodesIn(status.InitContainerStatuses, req)
}

func matchExitCodesIn(statuses []v1.ContainerStatus, req *batch.PodFailurePolicyOnExitCodesRequirement) *v1.ContainerStatus {
	for i := range statuses {
		cs := &statuses[i]
		t := cs.State.Terminated
		if t == nil || t.ExitCode == 0 {
			continue
		}
		if req.ContainerName != nil && *req.ContainerName != cs.Name {
			continue
		}
		switch req.Operator {
		case batch.PodFailurePolicyOnExitCodesOpIn:
			if slices.Contains(req.Values, t.ExitCode) {
				return cs
			}
		case batch.PodFailurePolicyOnExitCodesOpNotIn:
			if !slices.Contains(req.Values, t.ExitCode) {
				return cs
			}
		}
	}
	return nil
}

// matchPodConditions returns the first of the pod's conditions (in the
// pod's order) that one of the patterns matches by type and status.
func matchPodConditions(status *v1.PodStatus, patterns []batch.PodFailurePolicyOnPodConditionsPattern) *v1.PodCondition {
	for i := range status.Conditions {
		c := &status.Conditions[i]
		for _, p := range patterns {
			if c.Type == p.Type && c.Status == p.Status {
				return c
			}
		}
	}
	return nil
}

// failJobMessage returns the failure message of the first failed pod that
// matches a FailJob rule, if any.
func failJobMessage(job *batch.Job, pods []*v1.Pod) *string {
	if job.Spec.PodFailurePolicy == nil {
		return nil
	}
	for _, p := range pods {
		if isPodFailed(p, job) {
			if m := matchFailurePolicy(job.Spec.PodFailurePolicy, p); m.failJob != nil {
				return m.failJob
			}
		}
	}
	return nil
}
