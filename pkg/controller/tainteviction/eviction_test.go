package tainteviction

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	clienttesting "k8s.io/client-go/testing"
)

func verbs(actions []clienttesting.Action) []string {
	var out []string
	for _, a := range actions {
		v := a.GetVerb()
		if a.GetSubresource() != "" {
			v += "/" + a.GetSubresource()
		}
		out = append(out, v)
	}
	return out
}

func TestRunEviction(t *testing.T) {
	earlier := metav1.NewTime(t0.Add(-time1h))
	marked := v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: conditionReason,
		Message: conditionMessage, LastTransitionTime: earlier}
	tests := []struct {
		name       string
		conditions []v1.PodCondition
		noPod      bool
		failDelete bool
		wantVerbs  []string
	}{
		{name: "adds the condition, then deletes",
			conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse}},
			wantVerbs:  []string{"get", "patch/status", "delete"}},
		{name: "condition already there",
			conditions: []v1.PodCondition{marked},
			wantVerbs:  []string{"get", "delete"}},
		{name: "pod gone",
			noPod: true, wantVerbs: []string{"get"}},
		{name: "delete keeps failing",
			conditions: []v1.PodCondition{marked}, failDelete: true,
			wantVerbs: []string{"get", "delete", "get", "delete", "get", "delete", "get", "delete", "get", "delete"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestController(t)
			if !tc.noPod {
				p := pod(testNode)
				p.Generation = 3
				p.Status.Conditions = tc.conditions
				if err := c.client.Tracker().Add(p); err != nil {
					t.Fatal(err)
				}
			}
			if tc.failDelete {
				c.client.PrependReactor("delete", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, errors.New("boom")
				})
			}
			// Watch the pod's last state before deletion through the patch.
			var patched *v1.Pod
			c.client.PrependReactor("delete", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
				if obj, err := c.client.Tracker().Get(v1.SchemeGroupVersion.WithResource("pods"), testNS, testPod); err == nil {
					patched = obj.(*v1.Pod)
				}
				return false, nil, nil
			})
			c.evictions.schedule(podKey, t0)
			if err := c.runEviction(c.ctx, podKey); err != nil {
				t.Fatalf("runEviction: %v", err)
			}
			if got := verbs(c.client.Actions()); fmt.Sprint(got) != fmt.Sprint(tc.wantVerbs) {
				t.Errorf("actions = %v, want %v", got, tc.wantVerbs)
			}
			if _, ok := c.evictions.pending(podKey); ok {
				t.Error("eviction still known after it ran")
			}
			wantEvents := []string{"Normal TaintManagerEviction Marking for deletion Pod " + podKey}
			if got := c.events(); fmt.Sprint(got) != fmt.Sprint(wantEvents) {
				t.Errorf("events = %q, want %q", got, wantEvents)
			}
			if tc.noPod {
				return
			}
			if patched == nil {
				t.Fatal("pod was not deleted")
			}
			var got *v1.PodCondition
			for i := range patched.Status.Conditions {
				if patched.Status.Conditions[i].Type == v1.DisruptionTarget {
					got = &patched.Status.Conditions[i]
				}
			}
			if got == nil {
				t.Fatalf("no DisruptionTarget condition before deletion: %v", patched.Status.Conditions)
			}
			if got.Status != v1.ConditionTrue || got.Reason != "DeletionByTaintManager" ||
				got.Message != "Taint manager: deleting due to NoExecute taint" {
				t.Errorf("condition = %+v", *got)
			}
			if len(patched.Status.Conditions) != 1+countOther(tc.conditions) {
				t.Errorf("conditions = %v, want the DisruptionTarget one added to the others", patched.Status.Conditions)
			}
			if countOther(tc.conditions) > 0 && got.ObservedGeneration != 3 {
				t.Errorf("observedGeneration = %d, want the pod's generation 3", got.ObservedGeneration)
			}
		})
	}
}

func countOther(conds []v1.PodCondition) int {
	n := 0
	for _, c := range conds {
		if c.Type != v1.DisruptionTarget {
			n++
		}
	}
	return n
}

func TestRunEvictionNotDue(t *testing.T) {
	c := newTestController(t)
	c.evictions.schedule(podKey, t0.Add(time1h))
	if err := c.runEviction(c.ctx, podKey); err != nil {
		t.Fatal(err)
	}
	if n := len(c.client.Actions()); n != 0 {
		t.Errorf("%d API calls for an eviction not due", n)
	}
	if _, ok := c.evictions.pending(podKey); !ok {
		t.Error("eviction not due was dropped")
	}
}

func TestDisruptionTargetPatch(t *testing.T) {
	now := metav1.NewTime(t0)
	earlier := metav1.NewTime(t0.Add(-time1h))
	// apply returns the pod's conditions after the patch.
	apply := func(p *v1.Pod) []v1.PodCondition {
		t.Helper()
		patch, err := disruptionTargetPatch(p, now)
		if err != nil {
			t.Fatal(err)
		}
		if patch == nil {
			return nil
		}
		orig, _ := json.Marshal(p)
		merged, err := strategicpatch.StrategicMergePatch(orig, patch, v1.Pod{})
		if err != nil {
			t.Fatal(err)
		}
		var got v1.Pod
		if err := json.Unmarshal(merged, &got); err != nil {
			t.Fatal(err)
		}
		return got.Status.Conditions
	}
	p := pod(testNode)
	p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse}}
	got := apply(p)
	if len(got) != 2 || got[0].Type != v1.PodReady || got[1].Type != v1.DisruptionTarget || !got[1].LastTransitionTime.Equal(&now) {
		t.Errorf("new condition: %+v, want it appended after Ready at now", got)
	}
	p.Status.Conditions = []v1.PodCondition{{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: "Other", LastTransitionTime: earlier}}
	if got := apply(p); len(got) != 1 || got[0].Reason != conditionReason || !got[0].LastTransitionTime.Equal(&earlier) {
		t.Errorf("other reason: %+v, want ours with the old transition time", got)
	}
	p.Status.Conditions[0].Status = v1.ConditionFalse
	if got := apply(p); len(got) != 1 || got[0].Status != v1.ConditionTrue || !got[0].LastTransitionTime.Equal(&now) {
		t.Errorf("status flip: %+v, want True with a new transition time", got)
	}
	p.Status.Conditions = []v1.PodCondition{{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: conditionReason,
		Message: conditionMessage, LastTransitionTime: earlier}}
	if patch, err := disruptionTargetPatch(p, now); err != nil || patch != nil {
		t.Errorf("already marked: patch %s, %v; want none", patch, err)
	}
}
