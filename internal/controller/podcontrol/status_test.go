package podcontrol

import (
	"encoding/json"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

func TestSetConditionAndStatusPatch(t *testing.T) {
	earlier := metav1.NewTime(time.Unix(1000, 0))
	now := metav1.NewTime(time.Unix(2000, 0))
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "uid-1"}}
	pod.Status.Conditions = []v1.PodCondition{
		{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: earlier},
		{Type: v1.PodReady, Status: v1.ConditionFalse, LastTransitionTime: earlier},
	}

	// A new condition is appended after the existing ones, also once the
	// patch is applied (a patch of the condition alone would prepend it).
	status := pod.Status.DeepCopy()
	if !SetCondition(status, v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: "R"}, now) {
		t.Fatal("new condition reported unchanged")
	}
	patch, err := StatusPatch(pod, status)
	if err != nil || patch == nil {
		t.Fatalf("patch %s, %v", patch, err)
	}
	orig, _ := json.Marshal(pod)
	merged, err := strategicpatch.StrategicMergePatch(orig, patch, v1.Pod{})
	if err != nil {
		t.Fatal(err)
	}
	var got v1.Pod
	if err := json.Unmarshal(merged, &got); err != nil {
		t.Fatal(err)
	}
	var types []v1.PodConditionType
	for _, c := range got.Status.Conditions {
		types = append(types, c.Type)
	}
	if len(types) != 3 || types[0] != v1.PodScheduled || types[1] != v1.PodReady || types[2] != v1.DisruptionTarget {
		t.Errorf("conditions after the patch: %v", types)
	}
	if got.UID != "uid-1" {
		t.Errorf("patch lost the uid precondition: %s", patch)
	}

	// The same status keeps its transition time; only observedGeneration
	// differing is no change, as upstream.
	status = pod.Status.DeepCopy()
	if SetCondition(status, v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse, ObservedGeneration: 4}, now) {
		t.Error("observedGeneration alone reported as a change")
	}
	if !status.Conditions[1].LastTransitionTime.Equal(&earlier) {
		t.Errorf("unchanged status got a new transition time %v", status.Conditions[1].LastTransitionTime)
	}
	// A flip gets a new transition time, in place.
	if !SetCondition(status, v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue}, now) ||
		status.Conditions[1].Type != v1.PodReady || !status.Conditions[1].LastTransitionTime.Equal(&now) {
		t.Errorf("flip: %+v", status.Conditions)
	}

	// No change, no patch.
	if patch, err := StatusPatch(pod, pod.Status.DeepCopy()); err != nil || patch != nil {
		t.Errorf("unchanged status: patch %s, %v", patch, err)
	}
}
