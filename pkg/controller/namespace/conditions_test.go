package namespace

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestConditionsApply(t *testing.T) {
	var status v1.NamespaceStatus
	var c conditions
	r := newRemaining()
	r.add(podsGVR, gvrResult{numRemaining: 2})
	r.add(configmapsGVR, gvrResult{numRemaining: 0})
	c.contentRemaining(r)
	if !c.apply(&status) {
		t.Fatal("first apply reported no change")
	}
	if len(status.Conditions) != len(conditionTypes) {
		t.Fatalf("conditions = %v", status.Conditions)
	}
	for i, ct := range conditionTypes {
		if status.Conditions[i].Type != ct {
			t.Errorf("condition %d = %s, want %s", i, status.Conditions[i].Type, ct)
		}
	}
	got := findCondition(status.Conditions, v1.NamespaceContentRemaining)
	if got.Status != v1.ConditionTrue || got.Message != "Some resources are remaining: pods. has 2 resource instances" {
		t.Errorf("ContentRemaining = %+v", got)
	}

	// Same outcome again: nothing to write.
	if c.apply(&status) {
		t.Error("second apply reported a change")
	}

	// A flip moves LastTransitionTime; a message change alone does not.
	old := metav1.NewTime(time.Now().Add(-time.Hour))
	for i := range status.Conditions {
		status.Conditions[i].LastTransitionTime = old
	}
	var flipped conditions
	r = newRemaining()
	r.add(podsGVR, gvrResult{numRemaining: 1})
	flipped.contentRemaining(r)
	flipped.contentDeletionFailed(errorString("b"))
	flipped.contentDeletionFailed(errorString("a"))
	if !flipped.apply(&status) {
		t.Fatal("apply reported no change")
	}
	if c := findCondition(status.Conditions, v1.NamespaceContentRemaining); !c.LastTransitionTime.Equal(&old) {
		t.Error("LastTransitionTime moved on a message change")
	}
	fail := findCondition(status.Conditions, v1.NamespaceDeletionContentFailure)
	if fail.LastTransitionTime.Equal(&old) || fail.Status != v1.ConditionTrue || fail.Reason != "ContentDeletionFailed" ||
		fail.Message != "Failed to delete all resource types, 2 remaining: a, b" {
		t.Errorf("ContentFailure = %+v", fail)
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }
