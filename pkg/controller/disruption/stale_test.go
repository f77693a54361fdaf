package disruption

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func disruptionTarget(p *v1.Pod, status v1.ConditionStatus, reason string, at time.Time) *v1.Pod {
	p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{
		Type: v1.DisruptionTarget, Status: status, Reason: reason, Message: "m", LastTransitionTime: metav1.NewTime(at),
	})
	return p
}

func TestStaleDisruptionCondition(t *testing.T) {
	now := t0.Add(time.Minute)
	deleting := disruptionTarget(pod("d"), v1.ConditionTrue, "EvictionByEvictionAPI", t0)
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}
	failed := disruptionTarget(pod("f"), v1.ConditionTrue, "EvictionByEvictionAPI", t0)
	failed.Status.Phase = v1.PodFailed
	cases := []struct {
		name  string
		pod   *v1.Pod
		stale bool
		after time.Duration
	}{
		{"in progress", disruptionTarget(pod("p"), v1.ConditionTrue, "EvictionByEvictionAPI", t0), true, time.Minute},
		{"overdue", disruptionTarget(pod("p"), v1.ConditionTrue, "PreemptionByScheduler", t0.Add(-time.Hour)), true, 0},
		{"no condition", pod("p"), false, 0},
		{"False", disruptionTarget(pod("p"), v1.ConditionFalse, "", t0), false, 0},
		{"set by the kubelet", disruptionTarget(pod("p"), v1.ConditionTrue, v1.PodReasonTerminationByKubelet, t0), false, 0},
		{"deleting", deleting, false, 0},
		{"terminated", failed, false, 0},
	}
	for _, tc := range cases {
		stale, after := staleDisruptionCondition(tc.pod, stalePodDisruptionTimeout, now)
		if stale != tc.stale || after != tc.after {
			t.Errorf("%s: stale %v after %v, want %v %v", tc.name, stale, after, tc.stale, tc.after)
		}
	}
}

// A stale condition becomes False (no reason or message, the pod's
// generation observed); a fresh one is requeued for its expiry.
func TestSyncStalePod(t *testing.T) {
	p := disruptionTarget(pod("p"), v1.ConditionTrue, "EvictionByEvictionAPI", t0)
	p.Generation = 3
	f := newFixture(t, p)
	if err := f.c.syncStalePod(f.ctx, "ns/p"); err != nil {
		t.Fatal(err)
	}
	if len(f.client.Actions()) != 0 {
		t.Fatalf("wrote before the timeout: %v", f.client.Actions())
	}
	f.clock.Step(stalePodDisruptionTimeout)
	deadline := time.Now().Add(5 * time.Second)
	for f.c.staleQueue.Len() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("not requeued for the timeout")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := f.c.syncStalePod(f.ctx, "ns/p"); err != nil {
		t.Fatal(err)
	}
	got, err := f.client.CoreV1().Pods(ns).Get(f.ctx, "p", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionFalse, ObservedGeneration: 3, LastTransitionTime: metav1.NewTime(t0.Add(stalePodDisruptionTimeout))}
	if c := got.Status.Conditions[1]; c != want || got.Status.Conditions[0].Type != v1.PodReady {
		t.Errorf("conditions %+v, want Ready and %+v", got.Status.Conditions, want)
	}
	// A pod that is gone is done.
	if err := f.c.syncStalePod(f.ctx, "ns/gone"); err != nil {
		t.Error(err)
	}
}
