package disruption

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func condition(s policy.PodDisruptionBudgetStatus) *metav1.Condition {
	return apimeta.FindStatusCondition(s.Conditions, policy.DisruptionAllowedCondition)
}

func TestStatusAndCondition(t *testing.T) {
	f := newFixture(t, rs("rs", "rs-uid", 4))
	for _, p := range pods("p", 3, rsRef) {
		f.add(p)
	}
	f.add(unready(pod("p-3", rsRef)))
	f.add(pdbMax("pdb", intstr.FromInt32(1)))
	s := f.mustSync("pdb")
	want := policy.PodDisruptionBudgetStatus{ExpectedPods: 4, DesiredHealthy: 3, CurrentHealthy: 3, DisruptionsAllowed: 0, ObservedGeneration: 1}
	if s.ExpectedPods != want.ExpectedPods || s.DesiredHealthy != want.DesiredHealthy || s.CurrentHealthy != want.CurrentHealthy ||
		s.DisruptionsAllowed != 0 || s.ObservedGeneration != 1 {
		t.Errorf("status %+v, want %+v", s, want)
	}
	if c := condition(s); c == nil || c.Status != metav1.ConditionFalse || c.Reason != policy.InsufficientPodsReason || c.ObservedGeneration != 1 {
		t.Errorf("condition %+v, want False InsufficientPods", c)
	}

	// The fourth pod becomes ready: one disruption allowed.
	f.add(pod("p-3", rsRef))
	p := pdbMax("pdb", intstr.FromInt32(1))
	p.Status = s
	f.add(p)
	s = f.mustSync("pdb")
	if s.CurrentHealthy != 4 || s.DisruptionsAllowed != 1 {
		t.Errorf("status %+v, want 4 healthy, 1 allowed", s)
	}
	if c := condition(s); c == nil || c.Status != metav1.ConditionTrue || c.Reason != policy.SufficientPodsReason || !c.LastTransitionTime.Time.Equal(t0) {
		t.Errorf("condition %+v, want True SufficientPods at the controller's clock", c)
	}

	// Nothing changed: no write.
	p.Status = s
	f.add(p)
	if w, err := f.sync("pdb"); err != nil || w != nil {
		t.Errorf("sync of an up-to-date budget wrote %+v (err %v)", w, err)
	}
	// A new generation is observed.
	p = p.DeepCopy()
	p.Generation = 2
	f.add(p)
	if s = f.mustSync("pdb"); s.ObservedGeneration != 2 || condition(s).ObservedGeneration != 2 {
		t.Errorf("observedGeneration %d, condition's %d, want 2", s.ObservedGeneration, condition(s).ObservedGeneration)
	}
}

// Budgets that expect no pods allow nothing, whatever their numbers.
func TestNoPodsExpected(t *testing.T) {
	f := newFixture(t)
	f.add(pdbMin("pdb", intstr.FromInt32(0)))
	s := f.mustSync("pdb")
	if s.ExpectedPods != 0 || s.DisruptionsAllowed != 0 || condition(s).Reason != policy.InsufficientPodsReason {
		t.Errorf("status %+v", s)
	}
	if !f.hasEvent("Normal NoPods No matching pods found") {
		t.Error("no NoPods Event")
	}
	// Neither minAvailable nor maxUnavailable: nothing expected either.
	f.add(pod("p", rsRef))
	p := pdbMin("none", intstr.FromInt32(0))
	p.Spec.MinAvailable = nil
	f.add(p)
	if s := f.mustSync("none"); s.ExpectedPods != 0 || s.DesiredHealthy != 0 || s.CurrentHealthy != 1 || s.DisruptionsAllowed != 0 {
		t.Errorf("status %+v", s)
	}
}

// Other conditions are kept.
func TestKeepsOtherConditions(t *testing.T) {
	f := newFixture(t)
	p := pdbMin("pdb", intstr.FromInt32(3))
	p.Status.Conditions = []metav1.Condition{{Type: "Other", Status: metav1.ConditionTrue, Reason: "Test"}}
	f.add(p)
	s := f.mustSync("pdb")
	if len(s.Conditions) != 2 || apimeta.FindStatusCondition(s.Conditions, "Other") == nil {
		t.Errorf("conditions %+v", s.Conditions)
	}
}

// A failing sync writes disruptionsAllowed 0 and SyncFailed with the
// error, keeps the rest of the status, records the Event, and is done
// (not retried) once that is written; written again only if it changed.
func TestFailSafe(t *testing.T) {
	f := newFixture(t, pod("p", ownerRef("batch/v1", "Job", "j", "j-uid")))
	p := pdbMax("pdb", intstr.FromInt32(1))
	p.Generation = 2
	p.Status = policy.PodDisruptionBudgetStatus{ExpectedPods: 3, DesiredHealthy: 2, CurrentHealthy: 3, DisruptionsAllowed: 1, ObservedGeneration: 1,
		Conditions: []metav1.Condition{{Type: policy.DisruptionAllowedCondition, Status: metav1.ConditionTrue, Reason: policy.SufficientPodsReason, ObservedGeneration: 1}}}
	f.add(p)
	s := f.mustSync("pdb")
	const msg = "jobs.batch does not implement the scale subresource"
	if s.DisruptionsAllowed != 0 || s.ExpectedPods != 3 || s.CurrentHealthy != 3 || s.ObservedGeneration != 1 {
		t.Errorf("status %+v", s)
	}
	c := condition(s)
	if c.Status != metav1.ConditionFalse || c.Reason != policy.SyncFailedReason || c.Message != msg || c.ObservedGeneration != 1 {
		t.Errorf("condition %+v", c)
	}
	if !f.hasEvent("Warning CalculateExpectedPodCountFailed Failed to calculate the number of expected pods: " + msg) {
		t.Error("no CalculateExpectedPodCountFailed Event")
	}
	p.Status = s
	f.add(p)
	if w, err := f.sync("pdb"); err != nil || w != nil {
		t.Errorf("second failing sync: wrote %+v, err %v", w, err)
	}
}

// An invalid selector selects nothing and fails the sync.
func TestInvalidSelector(t *testing.T) {
	f := newFixture(t)
	p := pdbMin("pdb", intstr.FromInt32(3))
	p.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "foo", Operator: "illegal", Values: []string{"bar"}}}}
	f.add(p)
	s := f.mustSync("pdb")
	if s.DisruptionsAllowed != 0 || condition(s).Reason != policy.SyncFailedReason {
		t.Errorf("status %+v", s)
	}
	if !f.hasEvent("Warning NoPods Failed to get pods: ") {
		t.Error("no NoPods warning")
	}
}

// Pods without a controller are reported, not counted, when the rule
// needs the controllers' scale.
func TestUnmanagedPods(t *testing.T) {
	f := newFixture(t, rs("rs", "rs-uid", 2), pod("p-0", rsRef), pod("p-1", rsRef), pod("naked"))
	f.add(pdbMax("pdb", intstr.FromInt32(1)))
	s := f.mustSync("pdb")
	if s.ExpectedPods != 2 || s.CurrentHealthy != 3 || s.DisruptionsAllowed != 2 {
		t.Errorf("status %+v", s)
	}
	ev := f.events()
	if len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning UnmanagedPods Pods selected by this PodDisruptionBudget (selector: &LabelSelector{MatchLabels:map[string]string{app: web,},") {
		t.Errorf("events %q", ev)
	}
}

// disruptedPods entries are kept until DeletionTimeout, not counted
// healthy meanwhile, and dropped when their pod is deleting, gone or
// overdue (with a NotDeleted Event); the budget is requeued for the next
// expiry.
func TestDisruptedPods(t *testing.T) {
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(t0.Add(d)) }
	deleting := pod("p-2", rsRef)
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}
	f := newFixture(t, rs("rs", "rs-uid", 4), pod("p-0", rsRef), pod("p-1", rsRef), deleting, pod("p-3", rsRef))
	p := pdbMin("pdb", intstr.FromInt32(1))
	p.Status.DisruptedPods = map[string]metav1.Time{
		"p-0":  at(-time.Minute),                   // kept, expires in 1m
		"p-1":  at(-DeletionTimeout - time.Second), // overdue
		"p-2":  at(-time.Minute),                   // deleting
		"gone": at(-time.Minute),
		"p-3":  at(-30 * time.Second), // kept, expires in 90s
	}
	f.add(p)
	s := f.mustSync("pdb")
	if len(s.DisruptedPods) != 2 || !s.DisruptedPods["p-0"].Time.Equal(t0.Add(-time.Minute)) || s.DisruptedPods["p-3"].Time.IsZero() {
		t.Errorf("disruptedPods %v", s.DisruptedPods)
	}
	if s.CurrentHealthy != 1 || s.ExpectedPods != 4 || s.DisruptionsAllowed != 0 {
		t.Errorf("status %+v: want only p-1 healthy", s)
	}
	if ev := f.events(); len(ev) != 1 || ev[0] != "Warning NotDeleted Pod was expected by PDB ns/ns to be deleted but it wasn't" {
		t.Errorf("events %q", ev)
	}
	if f.c.queue.Len() != 0 {
		t.Fatal("requeued at once")
	}
	f.clock.Step(time.Minute - time.Millisecond)
	if f.c.queue.Len() != 0 {
		t.Fatal("requeued before the first expiry")
	}
	f.clock.Step(2 * time.Millisecond)
	waitQueueLen(t, f, 1)
}

func waitQueueLen(t *testing.T, f *fixture, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for f.c.queue.Len() != n {
		if time.Now().After(deadline) {
			t.Fatalf("queue length %d, want %d", f.c.queue.Len(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestCheckDisruptedAndCountHealthy(t *testing.T) {
	now := t0
	p0, p1 := pod("a"), pod("b")
	cur := map[string]metav1.Time{"a": metav1.NewTime(now.Add(-DeletionTimeout)), "b": metav1.NewTime(now.Add(-DeletionTimeout - time.Nanosecond))}
	d := checkDisrupted(cur, []*v1.Pod{p0, p1}, now)
	// At exactly DeletionTimeout an entry is kept, yet its pod counts as
	// healthy again (upstream's comparisons).
	if _, ok := d.pods["a"]; !ok || len(d.expired) != 1 || d.expired[0] != p1 || d.recheck == nil || !d.recheck.Equal(now) {
		t.Errorf("checkDisrupted = %+v", d)
	}
	if n := countHealthy([]*v1.Pod{p0, p1}, d.pods, now); n != 2 {
		t.Errorf("healthy %d, want 2", n)
	}
	if d := checkDisrupted(nil, []*v1.Pod{p0}, now); d.pods == nil || len(d.pods) != 0 || d.recheck != nil {
		t.Errorf("checkDisrupted(nil) = %+v", d)
	}
}
