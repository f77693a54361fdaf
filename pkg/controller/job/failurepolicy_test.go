package job

import (
	"testing"

	batch "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func onExit(action batch.PodFailurePolicyAction, op batch.PodFailurePolicyOnExitCodesOperator, codes ...int32) batch.PodFailurePolicyRule {
	return batch.PodFailurePolicyRule{Action: action, OnExitCodes: &batch.PodFailurePolicyOnExitCodesRequirement{Operator: op, Values: codes}}
}

func onCondition(action batch.PodFailurePolicyAction, t v1.PodConditionType) batch.PodFailurePolicyRule {
	return batch.PodFailurePolicyRule{Action: action, OnPodConditions: []batch.PodFailurePolicyOnPodConditionsPattern{{Type: t, Status: v1.ConditionTrue}}}
}

func TestMatchFailurePolicy(t *testing.T) {
	job := newJob(1, 1)
	in := batch.PodFailurePolicyOnExitCodesOpIn
	notIn := batch.PodFailurePolicyOnExitCodesOpNotIn
	tests := []struct {
		name       string
		rules      []batch.PodFailurePolicyRule
		pod        *v1.Pod
		wantAction batch.PodFailurePolicyAction // "" for none
		wantCount  bool
		wantMsg    string
	}{
		{name: "no rule matches", rules: []batch.PodFailurePolicyRule{onExit(batch.PodFailurePolicyActionFailJob, in, 42)},
			pod: newPod(job, "p", podPhase(v1.PodFailed), exitCode(1)), wantCount: true},
		{name: "FailJob on exit code", rules: []batch.PodFailurePolicyRule{onExit(batch.PodFailurePolicyActionIgnore, in, 3), onExit(batch.PodFailurePolicyActionFailJob, in, 42)},
			pod: newPod(job, "p", podPhase(v1.PodFailed), exitCode(42)), wantAction: batch.PodFailurePolicyActionFailJob, wantCount: true,
			wantMsg: "Container c for pod ns/p failed with exit code 42 matching FailJob rule at index 1"},
		{name: "NotIn", rules: []batch.PodFailurePolicyRule{onExit(batch.PodFailurePolicyActionCount, notIn, 1, 2)},
			pod: newPod(job, "p", podPhase(v1.PodFailed), exitCode(3)), wantAction: batch.PodFailurePolicyActionCount, wantCount: true},
		{name: "NotIn excludes", rules: []batch.PodFailurePolicyRule{onExit(batch.PodFailurePolicyActionIgnore, notIn, 1, 2)},
			pod: newPod(job, "p", podPhase(v1.PodFailed), exitCode(2)), wantCount: true},
		{name: "exit code 0 never matches", rules: []batch.PodFailurePolicyRule{onExit(batch.PodFailurePolicyActionIgnore, notIn, 1)},
			pod: newPod(job, "p", podPhase(v1.PodFailed), exitCode(0)), wantCount: true},
		{name: "Ignore on DisruptionTarget", rules: []batch.PodFailurePolicyRule{onCondition(batch.PodFailurePolicyActionIgnore, v1.DisruptionTarget)},
			pod: newPod(job, "p", podPhase(v1.PodFailed), podCondition(v1.DisruptionTarget)), wantAction: batch.PodFailurePolicyActionIgnore},
		{name: "FailJob on condition", rules: []batch.PodFailurePolicyRule{onCondition(batch.PodFailurePolicyActionFailJob, v1.DisruptionTarget)},
			pod: newPod(job, "p", podPhase(v1.PodFailed), podCondition(v1.DisruptionTarget)), wantAction: batch.PodFailurePolicyActionFailJob, wantCount: true,
			wantMsg: "Pod ns/p has condition DisruptionTarget matching FailJob rule at index 0"},
		{name: "FailIndex", rules: []batch.PodFailurePolicyRule{onExit(batch.PodFailurePolicyActionFailIndex, in, 5)},
			pod: newPod(job, "p", podPhase(v1.PodFailed), exitCode(5)), wantAction: batch.PodFailurePolicyActionFailIndex, wantCount: true},
		{name: "container name", rules: []batch.PodFailurePolicyRule{{Action: batch.PodFailurePolicyActionIgnore,
			OnExitCodes: &batch.PodFailurePolicyOnExitCodesRequirement{ContainerName: ptr.To("other"), Operator: in, Values: []int32{5}}}},
			pod: newPod(job, "p", podPhase(v1.PodFailed), exitCode(5)), wantCount: true},
		{name: "init container", rules: []batch.PodFailurePolicyRule{onExit(batch.PodFailurePolicyActionIgnore, in, 7)},
			pod: newPod(job, "p", podPhase(v1.PodFailed), func(p *v1.Pod) {
				p.Status.InitContainerStatuses = []v1.ContainerStatus{{Name: "init", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 7}}}}
			}), wantAction: batch.PodFailurePolicyActionIgnore},
		{name: "unknown action skipped", rules: []batch.PodFailurePolicyRule{onExit("Later", in, 5), onExit(batch.PodFailurePolicyActionIgnore, in, 5)},
			pod: newPod(job, "p", podPhase(v1.PodFailed), exitCode(5)), wantAction: batch.PodFailurePolicyActionIgnore},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := matchFailurePolicy(&batch.PodFailurePolicy{Rules: tc.rules}, tc.pod)
			if got := ptr.Deref(m.action, ""); got != tc.wantAction {
				t.Errorf("action = %q, want %q", got, tc.wantAction)
			}
			if m.count != tc.wantCount {
				t.Errorf("count = %v, want %v", m.count, tc.wantCount)
			}
			if got := ptr.Deref(m.failJob, ""); got != tc.wantMsg {
				t.Errorf("message = %q, want %q", got, tc.wantMsg)
			}
		})
	}
	if m := matchFailurePolicy(nil, newPod(job, "p")); !m.count || m.action != nil {
		t.Errorf("no policy: %+v", m)
	}
}
