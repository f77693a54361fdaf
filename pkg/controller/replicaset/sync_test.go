package replicaset

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/pkg/features"
)

func TestSyncCreatesAtMostBurstReplicasAndWaitsForThem(t *testing.T) {
	rs := newRS(1200)
	f := newFixture(t, rs)
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	if got := f.pods.CreateCalls(); got != BurstReplicas {
		t.Fatalf("created %d pods in one sync, want %d", got, BurstReplicas)
	}
	ref := f.pods.ControllerRefs[0]
	want := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "rs-uid", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	if !reflect.DeepEqual(ref, want) {
		t.Errorf("controllerRef = %+v", ref)
	}
	if add, _, _ := f.c.expectations.GetExpectations("ns/web"); add != BurstReplicas {
		t.Errorf("expecting %d creations, want %d", add, BurstReplicas)
	}
	// The informer has not seen the pods: the next sync must not create more.
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	if got := f.pods.CreateCalls(); got != BurstReplicas {
		t.Errorf("created %d pods before the first ones were observed", got)
	}
	// Expectations expire after 5 minutes.
	f.clock.Step(5*time.Minute + time.Second)
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	if got := f.pods.CreateCalls(); got != 2*BurstReplicas {
		t.Errorf("created %d pods after the expectations expired, want %d", got, 2*BurstReplicas)
	}
}

func TestSlowStartFailure(t *testing.T) {
	rs := newRS(10)
	f := newFixture(t, rs)
	f.pods.CreateLimit = 3 // batches 1 and 2 succeed, the batch of 4 fails
	err := f.sync(t)
	if err == nil || !strings.Contains(err.Error(), "limit 3 already reached") {
		t.Fatalf("err = %v", err)
	}
	if got := f.pods.CreateCalls(); got != 7 {
		t.Errorf("%d create calls, want 1+2+4", got)
	}
	// Only the 3 successful creations are still expected.
	if add, _, _ := f.c.expectations.GetExpectations("ns/web"); add != 3 {
		t.Errorf("expecting %d creations, want 3", add)
	}
	updates := f.statusUpdates()
	if len(updates) != 1 {
		t.Fatalf("%d status updates, want 1", len(updates))
	}
	cond := getCondition(updates[0].Status, apps.ReplicaSetReplicaFailure)
	if cond == nil || cond.Reason != "FailedCreate" || cond.Status != v1.ConditionTrue || cond.Message != err.Error() ||
		!cond.LastTransitionTime.Equal(&metav1.Time{Time: t0}) {
		t.Errorf("ReplicaFailure condition = %+v", cond)
	}
}

func TestNamespaceTerminatingIsNotAFailure(t *testing.T) {
	f := newFixture(t, newRS(3))
	f.pods.Err = &apierrors.StatusError{ErrStatus: metav1.Status{Code: 403, Reason: metav1.StatusReasonForbidden,
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: v1.NamespaceTerminatingCause}}}}}
	if err := f.sync(t); err != nil {
		t.Fatalf("err = %v", err)
	}
	if got := f.pods.CreateCalls(); got != 3 {
		t.Errorf("%d create calls, want 3", got)
	}
}

func TestScaleDownDeletesRankedVictims(t *testing.T) {
	rs := newRS(2)
	pods := []runtime.Object{
		newPod("ready-old", ownedBy(rs), running("n1"), readyFor(10*time.Hour)),
		newPod("unassigned", ownedBy(rs), phase(v1.PodPending)),
		newPod("not-ready", ownedBy(rs), running("n1")),
		newPod("ready-new", ownedBy(rs), running("n1"), readyFor(time.Minute)),
		newPod("ready-cheap", ownedBy(rs), running("n1"), readyFor(10*time.Hour), costly(-1)),
	}
	f := newFixture(t, append(pods, rs)...)
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	got := slices.Sorted(slices.Values(f.pods.Deleted))
	want := []string{"not-ready", "ready-cheap", "unassigned"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("deleted %v, want %v", got, want)
	}
	uids := f.c.expectations.GetUIDs("ns/web")
	if uids.Len() != 3 || !uids.Has("ns/not-ready") {
		t.Errorf("expected deletions %v", uids)
	}
	// Deleting all: no ranking needed, all go.
	f2 := newFixture(t, append(pods, newRS(0))...)
	if err := f2.sync(t); err != nil {
		t.Fatal(err)
	}
	if len(f2.pods.Deleted) != 5 {
		t.Errorf("deleted %v, want all", f2.pods.Deleted)
	}
}

func TestDeleteFailures(t *testing.T) {
	rs := newRS(0)
	f := newFixture(t, rs, newPod("gone", ownedBy(rs)), newPod("stuck", ownedBy(rs)), newPod("ok", ownedBy(rs)))
	f.pods.DeleteErr = func(name string) error {
		switch name {
		case "gone":
			return apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, name)
		case "stuck":
			return errors.New("unable to delete pods: boom")
		}
		return nil
	}
	err := f.sync(t)
	if err == nil || err.Error() != "unable to delete pods: boom" {
		t.Fatalf("err = %v", err)
	}
	// Failed and already-gone pods are not waited for; "ok" is.
	if uids := f.c.expectations.GetUIDs("ns/web"); uids.Len() != 1 || !uids.Has("ns/ok") {
		t.Errorf("still expecting %v", uids)
	}
	updates := f.statusUpdates()
	if len(updates) != 1 {
		t.Fatalf("%d status updates", len(updates))
	}
	if cond := getCondition(updates[0].Status, apps.ReplicaSetReplicaFailure); cond == nil || cond.Reason != "FailedDelete" {
		t.Errorf("condition %+v", cond)
	}
}

func TestClaimingThroughSync(t *testing.T) {
	rs := newRS(2)
	tests := []struct {
		name        string
		rs          *apps.ReplicaSet
		pods        []runtime.Object
		freshRS     *apps.ReplicaSet // what the uncached GET returns; rs if nil
		wantPatches int
		wantCreates int
		wantDeletes int
		wantErr     bool
	}{
		{name: "orphans adopted", rs: rs, pods: []runtime.Object{newPod("a"), newPod("b")}, wantPatches: 2},
		{name: "unselected orphan ignored", rs: rs, pods: []runtime.Object{newPod("a", labelled(map[string]string{"app": "x"}))}, wantCreates: 2},
		{name: "someone else's pods untouched", rs: newRS(0), pods: []runtime.Object{newPod("a", ownedByOther)}},
		{name: "own pod released on label change", rs: rs,
			pods:        []runtime.Object{newPod("a", ownedBy(rs), labelled(map[string]string{"app": "x"})), newPod("b", ownedBy(rs)), newPod("c", ownedBy(rs))},
			wantPatches: 1},
		{name: "no adoption when the fresh read shows a deletion", rs: rs, pods: []runtime.Object{newPod("a")},
			freshRS: newRS(2, rsDeleting), wantErr: true},
		{name: "no adoption when the fresh read shows another object", rs: rs, pods: []runtime.Object{newPod("a")},
			freshRS: func() *apps.ReplicaSet { r := newRS(2); r.UID = "new-uid"; return r }(), wantErr: true},
		{name: "owner being deleted: nothing adopted, released, created or deleted", rs: newRS(5, rsDeleting),
			pods: []runtime.Object{newPod("a"), newPod("b", ownedBy(rs), labelled(map[string]string{"app": "x"}))}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, append(tc.pods, tc.rs)...)
			if tc.freshRS != nil {
				f.client.PrependReactor("get", "replicasets", func(clienttesting.Action) (bool, runtime.Object, error) {
					return true, tc.freshRS, nil
				})
			}
			err := f.sync(t)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if len(f.pods.Patches) != tc.wantPatches || f.pods.CreateCalls() != tc.wantCreates || len(f.pods.Deleted) != tc.wantDeletes {
				t.Errorf("%d patches, %d creates, %d deletes; want %d, %d, %d",
					len(f.pods.Patches), f.pods.CreateCalls(), len(f.pods.Deleted), tc.wantPatches, tc.wantCreates, tc.wantDeletes)
			}
		})
	}
}

func TestSyncWritesStatusOnlyWhenChanged(t *testing.T) {
	rs := newRS(1)
	pod := newPod("a", ownedBy(rs), running("n"), readyFor(time.Hour))
	f := newFixture(t, rs, pod)
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	updates := f.statusUpdates()
	if len(updates) != 1 {
		t.Fatalf("%d status updates, want 1", len(updates))
	}
	want := apps.ReplicaSetStatus{Replicas: 1, FullyLabeledReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
		TerminatingReplicas: ptr.To[int32](0), ObservedGeneration: 1}
	if !reflect.DeepEqual(updates[0].Status, want) {
		t.Errorf("status = %+v, want %+v", updates[0].Status, want)
	}

	// The cache catches up: nothing to write any more.
	f2 := newFixture(t, newRS(1, withStatus(want)), pod)
	if err := f2.sync(t); err != nil {
		t.Fatal(err)
	}
	if n := len(f2.client.Actions()); n != 0 {
		t.Errorf("steady state made %d API calls: %v", n, f2.client.Actions())
	}
}

func TestStatusUpdateRetriesOnceOnFreshObject(t *testing.T) {
	tests := []struct {
		name      string
		failures  int
		wantCalls int
		wantErr   bool
	}{
		{name: "first try", failures: 0, wantCalls: 1},
		{name: "retry succeeds", failures: 1, wantCalls: 2},
		{name: "retry fails", failures: 2, wantCalls: 2, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, newRS(0))
			calls := 0
			f.client.PrependReactor("update", "replicasets", func(a clienttesting.Action) (bool, runtime.Object, error) {
				calls++
				if calls <= tc.failures {
					return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "replicasets"}, "web", errors.New("stale"))
				}
				return false, nil, nil
			})
			err := f.sync(t)
			if (err != nil) != tc.wantErr || calls != tc.wantCalls {
				t.Errorf("err = %v after %d calls; want error %v after %d", err, calls, tc.wantErr, tc.wantCalls)
			}
		})
	}
}

func TestCalculateStatus(t *testing.T) {
	failure := apps.ReplicaSetCondition{Type: apps.ReplicaSetReplicaFailure, Status: v1.ConditionTrue, Reason: "FailedCreate", Message: "old"}
	boom := errors.New("boom")
	tests := []struct {
		name        string
		rs          *apps.ReplicaSet
		active      []*v1.Pod
		terminating []*v1.Pod
		manageErr   error
		noTerm      bool
		want        apps.ReplicaSetStatus
	}{
		{name: "counts", rs: newRS(4, withMinReady(10)),
			active: []*v1.Pod{
				newPod("a"),
				newPod("b", labelled(selected)),
				newPod("c", readyFor(5*time.Second)),
				newPod("d", readyFor(10*time.Second)),
			},
			terminating: []*v1.Pod{newPod("e", terminating)},
			want:        apps.ReplicaSetStatus{Replicas: 4, FullyLabeledReplicas: 3, ReadyReplicas: 2, AvailableReplicas: 1, TerminatingReplicas: ptr.To[int32](1)}},
		{name: "no terminatingReplicas without the gate", rs: newRS(0), noTerm: true,
			want: apps.ReplicaSetStatus{}},
		{name: "create failure", rs: newRS(1), manageErr: boom,
			want: apps.ReplicaSetStatus{TerminatingReplicas: ptr.To[int32](0), Conditions: []apps.ReplicaSetCondition{
				{Type: apps.ReplicaSetReplicaFailure, Status: v1.ConditionTrue, Reason: "FailedCreate", Message: "boom", LastTransitionTime: metav1.NewTime(t0)}}}},
		{name: "delete failure", rs: newRS(0), active: []*v1.Pod{newPod("a")}, manageErr: boom,
			want: apps.ReplicaSetStatus{Replicas: 1, FullyLabeledReplicas: 1, TerminatingReplicas: ptr.To[int32](0), Conditions: []apps.ReplicaSetCondition{
				{Type: apps.ReplicaSetReplicaFailure, Status: v1.ConditionTrue, Reason: "FailedDelete", Message: "boom", LastTransitionTime: metav1.NewTime(t0)}}}},
		{name: "existing failure kept as is", rs: newRS(1, withStatus(apps.ReplicaSetStatus{Conditions: []apps.ReplicaSetCondition{failure}})), manageErr: boom,
			want: apps.ReplicaSetStatus{TerminatingReplicas: ptr.To[int32](0), Conditions: []apps.ReplicaSetCondition{failure}}},
		{name: "failure cleared", rs: newRS(1, withStatus(apps.ReplicaSetStatus{Conditions: []apps.ReplicaSetCondition{failure}})),
			want: apps.ReplicaSetStatus{TerminatingReplicas: ptr.To[int32](0)}},
		{name: "observedGeneration untouched", rs: newRS(0, withStatus(apps.ReplicaSetStatus{ObservedGeneration: 7, TerminatingReplicas: ptr.To[int32](3)})),
			want: apps.ReplicaSetStatus{ObservedGeneration: 7, TerminatingReplicas: ptr.To[int32](0)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &Controller{terminatingReplicas: !tc.noTerm}
			before := tc.rs.DeepCopy()
			got := c.calculateStatus(tc.rs, tc.active, tc.terminating, tc.manageErr, t0)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("status = %+v\nwant     %+v", got, tc.want)
			}
			if !reflect.DeepEqual(tc.rs, before) {
				t.Error("calculateStatus modified the ReplicaSet")
			}
		})
	}
}

func TestNextAvailabilityCheck(t *testing.T) {
	tests := []struct {
		name   string
		rs     *apps.ReplicaSet
		pods   []*v1.Pod
		want   time.Duration
		wantOK bool
	}{
		{name: "no minReadySeconds", rs: newRS(1, withStatus(apps.ReplicaSetStatus{ReadyReplicas: 1}))},
		{name: "all available", rs: newRS(1, withMinReady(10), withStatus(apps.ReplicaSetStatus{ReadyReplicas: 1, AvailableReplicas: 1}))},
		{name: "pod becomes available", rs: newRS(1, withMinReady(10), withStatus(apps.ReplicaSetStatus{ReadyReplicas: 1})),
			pods: []*v1.Pod{newPod("a", readyFor(4*time.Second))}, want: 6 * time.Second, wantOK: true},
		{name: "fallback to minReadySeconds", rs: newRS(1, withMinReady(10), withStatus(apps.ReplicaSetStatus{ReadyReplicas: 1})),
			want: 10 * time.Second, wantOK: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			got, ok := f.c.nextAvailabilityCheck(tc.rs, tc.pods, t0)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("= %v, %v; want %v, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestPodsToDeleteRanksByColocation(t *testing.T) {
	// Both pods are alike but for their node; n2 also runs two pods of a
	// sibling ReplicaSet, so the pod there goes first.
	a := newPod("a", running("n1"), readyFor(time.Hour))
	b := newPod("b", running("n2"), readyFor(time.Hour))
	related := []*v1.Pod{a, b, newPod("s1", running("n2")), newPod("s2", running("n2")), newPod("s3", running("n1"), terminating)}
	got := podsToDelete([]*v1.Pod{a, b}, related, 1, t0, true)
	if len(got) != 1 || got[0].Name != "b" {
		t.Errorf("victim %v, want b", got[0].Name)
	}
}

func TestRelatedPods(t *testing.T) {
	deployRef := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "d-uid", Controller: ptr.To(true)}
	rs := newRS(1)
	rs.OwnerReferences = []metav1.OwnerReference{deployRef}
	sibling := newRS(1)
	sibling.Name, sibling.UID = "web-2", "rs2-uid"
	sibling.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "v": "2"}}
	sibling.OwnerReferences = []metav1.OwnerReference{deployRef}
	f := newFixture(t, rs, sibling, newPod("a"), newPod("b", labelled(map[string]string{"app": "web", "v": "2"})), newPod("c", labelled(map[string]string{"app": "x"})))
	got := f.c.relatedPods(klog.Background(), rs)
	names := []string{}
	for _, p := range got {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	if !reflect.DeepEqual(names, []string{"a", "b"}) {
		t.Errorf("related pods %v, want [a b] (b once)", names)
	}
	if got := f.c.relatedPods(klog.Background(), newRS(1)); got != nil {
		t.Errorf("a ReplicaSet without controller has related pods %v", got)
	}
}

func TestHandlersMaintainExpectations(t *testing.T) {
	rs := newRS(3, withMinReady(30))
	f := newFixture(t, rs)
	logger := klog.Background()
	f.c.expectations.ExpectCreations(logger, "ns/web", 1)
	f.c.expectations.ExpectDeletions(logger, "ns/web", []string{"ns/old"})

	f.c.addPod(logger, newPod("new", ownedBy(rs)))
	old := newPod("old", ownedBy(rs))
	gone := newPod("old", ownedBy(rs), terminating)
	gone.ResourceVersion = "2"
	f.c.updatePod(logger, old, gone)
	if !f.c.expectations.SatisfiedExpectations(logger, "ns/web") {
		add, del, _ := f.c.expectations.GetExpectations("ns/web")
		t.Errorf("expectations not met after the creation and deletion were observed: add=%d del=%d", add, del)
	}
	if n := f.c.queue.Len(); n != 1 {
		t.Errorf("queue length %d, want 1 (one key)", n)
	}

	// Pods of other owners, unknown owners and resyncs wake nobody.
	f.c.queue.Get()
	f.c.queue.Done("ns/web")
	f.c.addPod(logger, newPod("x", ownedByOther))
	f.c.updatePod(logger, old, old)
	f.c.deletePod(logger, newPod("y", labelled(selected)))
	if n := f.c.queue.Len(); n != 0 {
		t.Errorf("queue length %d, want 0", n)
	}

	// An orphan wakes every owner that selects it.
	f.c.addPod(logger, newPod("orphan"))
	if n := f.c.queue.Len(); n != 1 {
		t.Errorf("orphan: queue length %d, want 1", n)
	}

	// Deleting the owner forgets its expectations.
	f.c.expectations.ExpectCreations(logger, "ns/web", 5)
	f.c.deleteOwner(logger, rs)
	if _, _, ok := f.c.expectations.GetExpectations("ns/web"); ok {
		t.Error("expectations kept after the owner was deleted")
	}
}

func TestSyncOfDeletedOwner(t *testing.T) {
	f := newFixture(t)
	f.c.expectations.ExpectCreations(klog.Background(), "ns/web", 5)
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := f.c.expectations.GetExpectations("ns/web"); ok {
		t.Error("expectations kept for a deleted owner")
	}
	if err := f.c.sync(t.Context(), "a/b/c"); err == nil {
		t.Error("no error for a malformed key")
	}
}

func TestEventTarget(t *testing.T) {
	f := newFixture(t)
	got := f.c.eventTarget(newRS(1))
	want := &v1.ObjectReference{Kind: "ReplicaSet", APIVersion: "apps/v1", Namespace: "ns", Name: "web", UID: "rs-uid", ResourceVersion: "10"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("eventTarget = %+v", got)
	}
}

func TestGateDefaults(t *testing.T) {
	for gate, want := range map[featuregate.Feature]bool{
		features.DeploymentReplicaSetTerminatingReplicas: true,
		features.StaleControllerConsistencyReplicaSet:    true,
		features.PodDeletionCost:                         true,
	} {
		if got := features.Enabled(nil, gate); got != want {
			t.Errorf("%s = %v, want %v", gate, got, want)
		}
	}

}

func TestStatusWritesAreSpaced(t *testing.T) {
	rs := newRS(3)
	a := newPod("a", ownedBy(rs), running("n"), readyFor(time.Hour))
	b := newPod("b", ownedBy(rs), running("n"))
	c := newPod("c", ownedBy(rs), running("n"))
	f := newFixture(t, rs, a, b, c)
	f.c.statusSpacer = controller.NewSpacer(time.Second, f.clock)
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	updates := f.statusUpdates()
	if len(updates) != 1 || updates[0].Status.ReadyReplicas != 1 {
		t.Fatalf("first sync: %d status updates, want 1 with one ready pod", len(updates))
	}

	// The write comes back through the informer; right after, pod b
	// becomes ready: its status change waits for the period to end.
	written := updates[0]
	indexer := f.c.owners.Informer().GetIndexer()
	if err := indexer.Update(written); err != nil {
		t.Fatal(err)
	}
	pods := f.c.podIndexer
	bReady := newPod("b", ownedBy(rs), running("n"), readyFor(time.Minute))
	bReady.ResourceVersion = "2"
	if err := pods.Update(bReady); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(300 * time.Millisecond)
	f.client.ClearActions()
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	if n := len(f.statusUpdates()); n != 0 {
		t.Fatalf("a counter change 300ms after a write was written at once (%d updates)", n)
	}
	if f.c.queue.Len() != 0 {
		t.Fatalf("the key was requeued before the period ended")
	}
	f.clock.Step(700 * time.Millisecond)
	deadline := time.Now().Add(5 * time.Second)
	for f.c.queue.Len() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the key was not requeued when the period ended")
		}
		time.Sleep(time.Millisecond)
	}
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	updates = f.statusUpdates()
	if len(updates) != 1 || updates[0].Status.ReadyReplicas != 2 {
		t.Fatalf("after the period: %d status updates, want 1 with two pods ready", len(updates))
	}

	// Right after that write the last pod becomes ready: the status that
	// reaches the goal is written at once.
	if err := indexer.Update(updates[0]); err != nil {
		t.Fatal(err)
	}
	cReady := newPod("c", ownedBy(rs), running("n"), readyFor(time.Minute))
	cReady.ResourceVersion = "2"
	if err := pods.Update(cReady); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(100 * time.Millisecond)
	f.client.ClearActions()
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	updates = f.statusUpdates()
	if len(updates) != 1 || updates[0].Status.ReadyReplicas != 3 {
		t.Fatalf("settled status: %d status updates, want 1 at once with all pods ready", len(updates))
	}
}

func TestProgressOnly(t *testing.T) {
	cur := apps.ReplicaSetStatus{Replicas: 5, FullyLabeledReplicas: 5, ReadyReplicas: 3, AvailableReplicas: 2, ObservedGeneration: 1}
	for name, tc := range map[string]struct {
		change func(s *apps.ReplicaSetStatus)
		gen    int64
		want   bool
	}{
		"more ready and available":  {func(s *apps.ReplicaSetStatus) { s.ReadyReplicas, s.AvailableReplicas = 5, 4 }, 1, true},
		"fewer replicas, same rest": {func(s *apps.ReplicaSetStatus) { s.Replicas = 4 }, 1, true},
		"fewer ready":               {func(s *apps.ReplicaSetStatus) { s.ReadyReplicas = 2 }, 1, false},
		"fewer available":           {func(s *apps.ReplicaSetStatus) { s.AvailableReplicas = 1 }, 1, false},
		"fewer fully labeled":       {func(s *apps.ReplicaSetStatus) { s.FullyLabeledReplicas = 4 }, 1, false},
		"new generation":            {func(s *apps.ReplicaSetStatus) { s.ReadyReplicas = 4 }, 2, false},
		"condition": {func(s *apps.ReplicaSetStatus) {
			s.Conditions = []apps.ReplicaSetCondition{{Type: apps.ReplicaSetReplicaFailure, Status: v1.ConditionTrue}}
		}, 1, false},
	} {
		t.Run(name, func(t *testing.T) {
			rs := newRS(5, withStatus(cur))
			rs.Generation = tc.gen
			next := cur
			tc.change(&next)
			if got := progressOnly(rs, next); got != tc.want {
				t.Errorf("progressOnly = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPodEventsAfterAWriteAreSpacedUnlessASetback(t *testing.T) {
	rs := newRS(2)
	f := newFixture(t, rs)
	f.c.statusSpacer = controller.NewSpacer(time.Second, f.clock)
	logger := klog.Background()
	f.c.statusSpacer.Wrote("ns/web")

	notReady := newPod("a", ownedBy(rs), running("n"))
	ready := newPod("a", ownedBy(rs), running("n"), readyFor(0))
	ready.ResourceVersion = "2"
	f.c.updatePod(logger, notReady, ready)
	if n := f.c.queue.Len(); n != 0 {
		t.Fatalf("a pod becoming ready right after a write woke the owner at once (queue %d)", n)
	}
	// The last pod becoming ready is not spaced: nothing follows it.
	almost := newRS(2, withStatus(apps.ReplicaSetStatus{Replicas: 2, FullyLabeledReplicas: 2, ReadyReplicas: 1, AvailableReplicas: 1}))
	if err := f.c.owners.Informer().GetIndexer().Update(almost); err != nil {
		t.Fatal(err)
	}
	f.c.updatePod(logger, notReady, ready)
	if n := f.c.queue.Len(); n != 1 {
		t.Fatalf("the last pod becoming ready: queue length %d, want the owner at once", n)
	}
	key, _ := f.c.queue.Get()
	f.c.queue.Done(key)
	if err := f.c.owners.Informer().GetIndexer().Update(rs); err != nil {
		t.Fatal(err)
	}

	// The written status lags (a spaced sync has yet to write pod b's
	// readiness), but with a counted the last pod is ready: at once too.
	bReady := newPod("b", ownedBy(rs), running("n"), readyFor(0))
	if err := f.c.podIndexer.Add(bReady); err != nil {
		t.Fatal(err)
	}
	if err := f.c.podIndexer.Add(ready); err != nil {
		t.Fatal(err)
	}
	f.c.updatePod(logger, notReady, ready)
	if n := f.c.queue.Len(); n != 1 {
		t.Fatalf("the last pod becoming ready behind a lagging status: queue length %d, want the owner at once", n)
	}
	key, _ = f.c.queue.Get()
	f.c.queue.Done(key)
	if err := f.c.podIndexer.Delete(bReady); err != nil {
		t.Fatal(err)
	}

	for name, next := range map[string]*v1.Pod{
		"not ready any more": newPod("a", ownedBy(rs), running("n")),
		"failed":             newPod("a", ownedBy(rs), running("n"), readyFor(0), phase(v1.PodFailed)),
		"relabelled":         newPod("a", ownedBy(rs), running("n"), readyFor(0), labelled(map[string]string{"app": "web"})),
	} {
		next.ResourceVersion = "3"
		f.c.updatePod(logger, ready, next)
		if n := f.c.queue.Len(); n != 1 {
			t.Errorf("%s: queue length %d, want the owner at once", name, n)
		}
		key, _ := f.c.queue.Get()
		f.c.queue.Done(key)
	}
}

func TestScalingWritesTheStatusTheCacheWillShow(t *testing.T) {
	rs := newRS(1)
	graceful := func(p *v1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](30) }
	keep := newPod("keep", ownedBy(rs), running("n1"), readyFor(10*time.Hour), graceful)
	older := newPod("older", ownedBy(rs), running("n1"), readyFor(time.Hour), graceful)
	pending := newPod("pending", ownedBy(rs), phase(v1.PodPending), graceful)
	f := newFixture(t, rs, keep, older, pending)
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(slices.Values(f.pods.Deleted)); !reflect.DeepEqual(got, []string{"older", "pending"}) {
		t.Fatalf("deleted %v", got)
	}
	// The unscheduled pod goes at once; the scheduled one terminates.
	updates := f.statusUpdates()
	want := apps.ReplicaSetStatus{Replicas: 1, FullyLabeledReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, TerminatingReplicas: ptr.To[int32](1), ObservedGeneration: 1}
	if len(updates) != 1 || !sameCounts(updates[0].Status, want) {
		t.Fatalf("status updates %v, want one with %+v", updates, want)
	}
	if err := f.c.owners.Informer().GetIndexer().Update(updates[0]); err != nil {
		t.Fatal(err)
	}

	// Before the cache sees the deletions, its counts are behind the
	// status: nothing is written.
	f.client.ClearActions()
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	if n := len(f.statusUpdates()); n != 0 {
		t.Fatalf("%d status updates while the deletions were not observed", n)
	}

	// The cache sees them: the status is what was written.
	logger := klog.Background()
	olderGoing := older.DeepCopy()
	olderGoing.DeletionTimestamp = &metav1.Time{Time: t0}
	olderGoing.ResourceVersion = "2"
	pods := f.c.podIndexer
	if err := pods.Update(olderGoing); err != nil {
		t.Fatal(err)
	}
	f.c.updatePod(logger, older, olderGoing)
	if err := pods.Delete(pending); err != nil {
		t.Fatal(err)
	}
	f.c.deletePod(logger, pending)
	if !f.c.expectations.SatisfiedExpectations(logger, "ns/web") {
		t.Fatal("deletions not observed")
	}
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	if n := len(f.statusUpdates()); n != 0 {
		t.Fatalf("%d status updates once the cache caught up, want none", n)
	}

	// Scaling up writes nothing until the cache has seen every creation:
	// neither the new observedGeneration beside the old counts, nor
	// partial counts. The sync that sees the last creation writes both.
	up := updates[0].DeepCopy()
	up.Spec.Replicas = ptr.To[int32](3)
	up.Generation = 2
	if err := f.c.owners.Informer().GetIndexer().Update(up); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.AppsV1().ReplicaSets("ns").Update(t.Context(), up, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.client.ClearActions()
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	if n := len(f.pods.Templates); n != 2 {
		t.Fatalf("%d creations, want 2", n)
	}
	if updates := f.statusUpdates(); len(updates) != 0 {
		t.Fatalf("status updates %v before the creations were observed", updates)
	}
	for i, name := range []string{"new1", "new2"} {
		created := newPod(name, ownedBy(rs))
		if err := pods.Add(created); err != nil {
			t.Fatal(err)
		}
		f.c.addPod(logger, created)
		f.client.ClearActions()
		if err := f.sync(t); err != nil {
			t.Fatal(err)
		}
		updates = f.statusUpdates()
		if i == 0 {
			if len(updates) != 0 {
				t.Fatalf("status updates %v with one of two creations observed", updates)
			}
			continue
		}
		want = apps.ReplicaSetStatus{Replicas: 3, FullyLabeledReplicas: 3, ReadyReplicas: 1, AvailableReplicas: 1, TerminatingReplicas: ptr.To[int32](1), ObservedGeneration: 2}
		if len(updates) != 1 || !sameCounts(updates[0].Status, want) {
			t.Fatalf("status updates %v, want one with %+v", updates, want)
		}
	}
}

// sameCounts compares statuses without conditions.
func sameCounts(a, b apps.ReplicaSetStatus) bool {
	a.Conditions, b.Conditions = nil, nil
	return reflect.DeepEqual(a, b)
}

func TestLingers(t *testing.T) {
	grace := func(s int64) podOpt { return func(p *v1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr.To(s) } }
	finalizer := func(p *v1.Pod) { p.Finalizers = []string{"example.com/hold"} }
	for name, tc := range map[string]struct {
		pod  *v1.Pod
		want bool
	}{
		"scheduled, graceful":           {newPod("a", running("n"), grace(30)), true},
		"scheduled, no grace period":    {newPod("a", running("n"), grace(0)), false},
		"unscheduled":                   {newPod("a", grace(30)), false},
		"unscheduled with a finalizer":  {newPod("a", grace(0), finalizer), true},
		"scheduled, grace period unset": {newPod("a", running("n")), false},
	} {
		if got := lingers(tc.pod); got != tc.want {
			t.Errorf("%s: lingers = %v, want %v", name, got, tc.want)
		}
	}
}
