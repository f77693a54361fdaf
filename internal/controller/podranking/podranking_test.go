package podranking

import (
	"sort"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

type podOpt func(*v1.Pod)

func pod(name string, opts ...podOpt) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func onNode(n string) podOpt      { return func(p *v1.Pod) { p.Spec.NodeName = n } }
func phase(ph v1.PodPhase) podOpt { return func(p *v1.Pod) { p.Status.Phase = ph } }
func created(ago time.Duration) podOpt {
	return func(p *v1.Pod) { p.CreationTimestamp = metav1.NewTime(now.Add(-ago)) }
}
func cost(c string) podOpt {
	return func(p *v1.Pod) { p.Annotations = map[string]string{DeletionCostAnnotation: c} }
}
func readySince(ago time.Duration) podOpt {
	return func(p *v1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{
			Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-ago))})
	}
}
func restarts(n int32) podOpt {
	return func(p *v1.Pod) {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, v1.ContainerStatus{RestartCount: n})
	}
}
func sidecarRestarts(n int32) podOpt {
	return func(p *v1.Pod) {
		p.Spec.InitContainers = append(p.Spec.InitContainers, v1.Container{Name: "side", RestartPolicy: ptr.To(v1.ContainerRestartPolicyAlways)})
		p.Status.InitContainerStatuses = append(p.Status.InitContainerStatuses, v1.ContainerStatus{Name: "side", RestartCount: n})
	}
}

func TestLess(t *testing.T) {
	running := []podOpt{onNode("n"), phase(v1.PodRunning)}
	ready := append(running[:2:2], readySince(time.Hour))
	tests := []struct {
		name         string
		first, other *v1.Pod
		ranks        [2]int
		noCost       bool
		zeroNow      bool
	}{
		{name: "unassigned before assigned", first: pod("a", phase(v1.PodRunning)), other: pod("b", running...)},
		{name: "pending before unknown", first: pod("a", onNode("n"), phase(v1.PodPending)), other: pod("b", onNode("n"), phase(v1.PodUnknown))},
		{name: "unknown before running", first: pod("a", onNode("n"), phase(v1.PodUnknown)), other: pod("b", running...)},
		{name: "not ready before ready", first: pod("a", running...), other: pod("b", ready...)},
		{name: "lower deletion cost first", first: pod("a", append(ready, cost("-5"))...), other: pod("b", append(ready, cost("3"))...), ranks: [2]int{0, 9}},
		{name: "cost ignored without the gate", first: pod("a", append(ready, cost("3"))...), other: pod("b", append(ready, cost("-5"))...), ranks: [2]int{9, 0}, noCost: true},
		{name: "invalid cost counts as zero", first: pod("a", append(ready, cost("+5"))...), other: pod("b", append(ready, cost("1"))...)},
		{name: "more co-located first", first: pod("a", ready...), other: pod("b", ready...), ranks: [2]int{3, 1}},
		{name: "ready more recently first", first: pod("a", append(running, readySince(time.Minute))...), other: pod("b", append(running, readySince(time.Hour))...)},
		{name: "ready times in one log bucket tie on UID", first: pod("a", append(running, readySince(70*time.Minute))...), other: pod("b", append(running, readySince(65*time.Minute))...)},
		{name: "exact ready times without now", first: pod("b", append(running, readySince(65*time.Minute))...), other: pod("a", append(running, readySince(70*time.Minute))...), zeroNow: true},
		{name: "more restarts first", first: pod("a", append(ready, restarts(3))...), other: pod("b", append(ready, restarts(1), sidecarRestarts(9))...)},
		{name: "then more sidecar restarts", first: pod("a", append(ready, restarts(1), sidecarRestarts(2))...), other: pod("b", append(ready, restarts(1))...)},
		{name: "newer first", first: pod("b", append(running, created(time.Minute))...), other: pod("a", append(running, created(time.Hour))...)},
		{name: "zero creation time first", first: pod("b", append(running, created(0), func(p *v1.Pod) { p.CreationTimestamp = metav1.Time{} })...), other: pod("a", append(running, created(time.Minute))...)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := ActivePodsWithRanks{Pods: []*v1.Pod{tc.first, tc.other}, Rank: tc.ranks[:], Now: now, UseDeletionCost: !tc.noCost}
			if tc.zeroNow {
				s.Now = time.Time{}
			}
			if !s.Less(0, 1) {
				t.Errorf("%s not before %s", tc.first.Name, tc.other.Name)
			}
			if s.Less(1, 0) {
				t.Errorf("%s before %s", tc.other.Name, tc.first.Name)
			}
		})
	}
}

func TestSortOrder(t *testing.T) {
	pods := []*v1.Pod{
		pod("old-ready", onNode("n"), phase(v1.PodRunning), readySince(10*time.Hour), created(10*time.Hour)),
		pod("unassigned", phase(v1.PodPending)),
		pod("costly", onNode("n"), phase(v1.PodRunning), readySince(time.Minute), cost("100")),
		pod("running", onNode("n"), phase(v1.PodRunning)),
		pod("pending", onNode("n"), phase(v1.PodPending)),
	}
	ranks := make([]int, len(pods))
	sort.Sort(ActivePodsWithRanks{Pods: pods, Rank: ranks, Now: now, UseDeletionCost: true})
	want := []string{"unassigned", "pending", "running", "old-ready", "costly"}
	for i, p := range pods {
		if p.Name != want[i] {
			t.Fatalf("position %d: %s, want order %v", i, p.Name, want)
		}
	}
}

func TestPredicates(t *testing.T) {
	deleted := func(p *v1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: now} }
	tests := []struct {
		name                              string
		pod                               *v1.Pod
		active, terminating, ready, avail bool
	}{
		{name: "pending", pod: pod("p", phase(v1.PodPending)), active: true},
		{name: "ready long enough", pod: pod("p", phase(v1.PodRunning), readySince(10*time.Second)), active: true, ready: true, avail: true},
		{name: "ready exactly minReadySeconds", pod: pod("p", phase(v1.PodRunning), readySince(5*time.Second)), active: true, ready: true, avail: true},
		{name: "ready too recently", pod: pod("p", phase(v1.PodRunning), readySince(4*time.Second)), active: true, ready: true},
		{name: "succeeded", pod: pod("p", phase(v1.PodSucceeded))},
		{name: "failed and deleted", pod: pod("p", phase(v1.PodFailed), deleted)},
		{name: "running and deleted", pod: pod("p", phase(v1.PodRunning), deleted), terminating: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsActive(tc.pod); got != tc.active {
				t.Errorf("IsActive = %v", got)
			}
			if got := IsTerminating(tc.pod); got != tc.terminating {
				t.Errorf("IsTerminating = %v", got)
			}
			if got := IsReady(tc.pod); got != tc.ready {
				t.Errorf("IsReady = %v", got)
			}
			if got := IsAvailable(tc.pod, 5, now); got != tc.avail {
				t.Errorf("IsAvailable = %v", got)
			}
		})
	}
	if !IsAvailable(pod("p", readySince(0)), 0, now) {
		t.Error("ready pod not available with minReadySeconds 0")
	}
}

func TestNextAvailabilityCheck(t *testing.T) {
	tests := []struct {
		name    string
		pods    []*v1.Pod
		elapsed time.Duration // between the status evaluation and the check
		want    time.Duration
		wantOK  bool
	}{
		{name: "nothing ready", pods: []*v1.Pod{pod("a")}},
		{name: "all available", pods: []*v1.Pod{pod("a", readySince(time.Minute))}},
		{name: "earliest pod", pods: []*v1.Pod{pod("a", readySince(2*time.Second)), pod("b", readySince(7*time.Second))}, want: 3 * time.Second, wantOK: true},
		{name: "measured from now", pods: []*v1.Pod{pod("a", readySince(2*time.Second))}, elapsed: time.Second, want: 7 * time.Second, wantOK: true},
		{name: "passed since evaluation", pods: []*v1.Pod{pod("a", readySince(9*time.Second))}, elapsed: 2 * time.Second, want: 0, wantOK: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := testingclock.NewFakePassiveClock(now.Add(tc.elapsed))
			got, ok := NextAvailabilityCheck(tc.pods, 10, now, clk)
			if ok != tc.wantOK || got != tc.want {
				t.Errorf("NextAvailabilityCheck = %v, %v; want %v, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestDeletionCost(t *testing.T) {
	for v, want := range map[string]int32{"": 0, "0": 0, "-7": -7, "42": 42, "+1": 0, "01": 0, "x": 0, "3000000000": 0, "-2147483648": -2147483648} {
		if got := DeletionCost(pod("p", cost(v))); got != want {
			t.Errorf("DeletionCost(%q) = %d, want %d", v, got, want)
		}
	}
	if got := DeletionCost(pod("p")); got != 0 {
		t.Errorf("no annotation: %d", got)
	}
}
