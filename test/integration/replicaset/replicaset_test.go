package replicaset

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controller/replicaset"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

func TestCreatesPodsWithOwnerRefsAndEvents(t *testing.T) {
	e := setup(t)
	rs := e.createRS("web", 3)
	pods := e.waitPods(3)
	wantRef := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: rs.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	for _, p := range pods {
		if !strings.HasPrefix(p.Name, "web-") || len(p.Name) != len("web-")+5 || p.GenerateName != "web-" {
			t.Errorf("pod name %q (generateName %q), want web-<5 random>", p.Name, p.GenerateName)
		}
		if !reflect.DeepEqual(p.Labels, rs.Spec.Template.Labels) || !reflect.DeepEqual(p.Annotations, rs.Spec.Template.Annotations) {
			t.Errorf("pod %s labels %v annotations %v", p.Name, p.Labels, p.Annotations)
		}
		if !reflect.DeepEqual(p.OwnerReferences, []metav1.OwnerReference{wantRef}) {
			t.Errorf("pod %s ownerReferences %+v", p.Name, p.OwnerReferences)
		}
	}
	got := e.waitRS("web", "status", func(rs *apps.ReplicaSet) bool {
		return rs.Status.ObservedGeneration == rs.Generation && rs.Status.Replicas == 3
	})
	want := apps.ReplicaSetStatus{Replicas: 3, FullyLabeledReplicas: 3, ObservedGeneration: got.Generation, TerminatingReplicas: ptr.To[int32](0)}
	if !reflect.DeepEqual(got.Status, want) {
		t.Errorf("status = %+v, want %+v", got.Status, want)
	}

	events := e.waitEvents("ReplicaSet", "web", "SuccessfulCreate", 3)
	var messages []string
	for _, ev := range events {
		if ev.Source.Component != "replicaset-controller" || ev.Type != v1.EventTypeNormal || ev.InvolvedObject.UID != rs.UID ||
			ev.InvolvedObject.APIVersion != "apps/v1" {
			t.Errorf("event %+v", ev)
		}
		messages = append(messages, ev.Message)
	}
	var wantMessages []string
	for _, p := range pods {
		wantMessages = append(wantMessages, "Created pod: "+p.Name)
	}
	slices.Sort(messages)
	slices.Sort(wantMessages)
	if !reflect.DeepEqual(messages, wantMessages) {
		t.Errorf("event messages %q, want %q", messages, wantMessages)
	}
}

// TestScaleDownVictimOrder scales 4 pods down to 1: the unassigned pod
// goes first, then the one not ready, then of the two ready pods the one
// with the lower pod-deletion-cost.
func TestScaleDownVictimOrder(t *testing.T) {
	e := setup(t)
	e.createRS("web", 4)
	pods := e.waitPods(4)
	unassigned, notReady, cheap, dear := pods[0].Name, pods[1].Name, pods[2].Name, pods[3].Name
	for _, p := range []string{notReady, cheap, dear} {
		e.bind(p, "node-1")
	}
	e.setRunning(notReady, false)
	e.setRunning(cheap, true)
	e.setRunning(dear, true)
	e.patchPod(cheap, `{"metadata":{"annotations":{"controller.kubernetes.io/pod-deletion-cost":"-10"}}}`)
	e.patchPod(dear, `{"metadata":{"annotations":{"controller.kubernetes.io/pod-deletion-cost":"10"}}}`)
	e.waitRS("web", "ready", func(rs *apps.ReplicaSet) bool { return rs.Status.ReadyReplicas == 2 })

	e.scale("web", 1)
	left := e.waitPods(1)
	if left[0].Name != dear {
		t.Fatalf("kept %s, want %s (unassigned %s, not ready %s, cheap %s)", left[0].Name, dear, unassigned, notReady, cheap)
	}
	// Bound pods wait for their kubelet: they stay terminating.
	rs := e.waitRS("web", "terminating", func(rs *apps.ReplicaSet) bool {
		return rs.Status.Replicas == 1 && ptr.Deref(rs.Status.TerminatingReplicas, -1) == 2
	})
	if rs.Status.ReadyReplicas != 1 || rs.Status.AvailableReplicas != 1 {
		t.Errorf("status %+v", rs.Status)
	}
	events := e.waitEvents("ReplicaSet", "web", "SuccessfulDelete", 3)
	var deleted []string
	for _, ev := range events {
		deleted = append(deleted, strings.TrimPrefix(ev.Message, "Deleted pod: "))
	}
	slices.Sort(deleted)
	want := []string{unassigned, notReady, cheap}
	slices.Sort(want)
	if !reflect.DeepEqual(deleted, want) {
		t.Errorf("deleted %v, want %v", deleted, want)
	}

	e.scale("web", 3)
	e.waitPods(3)
	e.waitRS("web", "scaled up", func(rs *apps.ReplicaSet) bool { return rs.Status.Replicas == 3 })
}

func TestAdoptsOrphansAndReleasesOnLabelChange(t *testing.T) {
	e := setup(t)
	e.createPod("orphan-1", map[string]string{"app": "web"})
	e.createPod("orphan-2", map[string]string{"app": "web"})
	e.createPod("unselected", map[string]string{"app": "db"})
	rs := e.createRS("web", 3)

	want := "ReplicaSet/web/" + string(rs.UID)
	settled := func() bool {
		pods := e.pods()
		owned := 0
		for i := range pods {
			if controllerRefOf(&pods[i]) == want {
				owned++
			}
		}
		return len(pods) == 3 && owned == 3
	}
	waitFor(t, "orphans adopted", settled)
	for _, name := range []string{"orphan-1", "orphan-2"} {
		p, _ := e.client.CoreV1().Pods(e.ns).Get(e.ctx, name, metav1.GetOptions{})
		if got := controllerRefOf(p); got != want {
			t.Errorf("%s controlled by %q, want %q", name, got, want)
		}
		if !*p.OwnerReferences[0].BlockOwnerDeletion {
			t.Errorf("%s: blockOwnerDeletion not set", name)
		}
	}
	if got := e.waitRS("web", "adopted", func(rs *apps.ReplicaSet) bool { return rs.Status.Replicas == 3 }); got.Status.FullyLabeledReplicas != 1 {
		t.Errorf("fullyLabeledReplicas = %d, want 1 (the orphans lack tier=front)", got.Status.FullyLabeledReplicas)
	}

	// Relabelled out of the selector: released, and replaced.
	e.patchPod("orphan-1", `{"metadata":{"labels":{"app":"gone"}}}`)
	waitFor(t, "released pod replaced", settled)
	p, _ := e.client.CoreV1().Pods(e.ns).Get(e.ctx, "orphan-1", metav1.GetOptions{})
	if len(p.OwnerReferences) != 0 {
		t.Errorf("released pod still has ownerReferences %+v", p.OwnerReferences)
	}
	u, _ := e.client.CoreV1().Pods(e.ns).Get(e.ctx, "unselected", metav1.GetOptions{})
	if len(u.OwnerReferences) != 0 {
		t.Errorf("unselected pod adopted: %+v", u.OwnerReferences)
	}
}

func TestPodsOfOtherControllersUntouched(t *testing.T) {
	e := setup(t)
	foreign := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "other", UID: types.UID("0000-other"), Controller: ptr.To(true)}
	e.createPod("foreign", map[string]string{"app": "web"}, foreign)
	rs := e.createRS("web", 2)
	// Two pods of its own besides the foreign one.
	waitFor(t, "own pods", func() bool { return len(e.pods()) == 3 })
	e.waitRS("web", "status", func(rs *apps.ReplicaSet) bool { return rs.Status.Replicas == 2 })
	e.scale("web", 0)
	left := e.waitPods(1)
	if left[0].Name != "foreign" || !reflect.DeepEqual(left[0].OwnerReferences, []metav1.OwnerReference{foreign}) {
		t.Errorf("left %s with %+v", left[0].Name, left[0].OwnerReferences)
	}
	e.waitRS("web", "scaled down", func(got *apps.ReplicaSet) bool { return got.Status.Replicas == 0 && got.UID == rs.UID })
}

// TestOwnerDeletedWithOrphanPropagation: while the ReplicaSet waits for the
// garbage collector to orphan its pods, it neither replaces nor releases
// them.
func TestOwnerDeletedWithOrphanPropagation(t *testing.T) {
	e := setup(t)
	e.createRS("web", 2)
	pods := e.waitPods(2)
	if err := e.client.AppsV1().ReplicaSets(e.ns).Delete(e.ctx, "web", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationOrphan)}); err != nil {
		t.Fatal(err)
	}
	e.waitRS("web", "deleting", func(rs *apps.ReplicaSet) bool { return rs.DeletionTimestamp != nil })

	if err := e.client.CoreV1().Pods(e.ns).Delete(e.ctx, pods[0].Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.patchPod(pods[1].Name, `{"metadata":{"labels":{"app":"gone"}}}`)
	// Neither pod counts any more; nothing is created and nothing released.
	e.waitRS("web", "status", func(rs *apps.ReplicaSet) bool { return rs.Status.Replicas == 0 })
	framework.Consistently(t, 2*time.Second, "no replacement", func() bool { return len(e.pods()) == 0 })
	p, _ := e.client.CoreV1().Pods(e.ns).Get(e.ctx, pods[1].Name, metav1.GetOptions{})
	if len(p.OwnerReferences) != 1 {
		t.Errorf("pod released while its owner is being deleted: %+v", p.OwnerReferences)
	}
	if n := e.podCreates.Load(); n != 2 {
		t.Errorf("%d pod creations, want 2", n)
	}

	// Stand in for the garbage collector: orphan the pod, drop the finalizer.
	e.patchPod(pods[1].Name, `{"metadata":{"ownerReferences":null}}`)
	if _, err := e.client.AppsV1().ReplicaSets(e.ns).Patch(e.ctx, "web", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "ReplicaSet gone", func() bool {
		_, err := e.client.AppsV1().ReplicaSets(e.ns).Get(e.ctx, "web", metav1.GetOptions{})
		return err != nil
	})
	if _, err := e.client.CoreV1().Pods(e.ns).Get(e.ctx, pods[1].Name, metav1.GetOptions{}); err != nil {
		t.Errorf("orphaned pod: %v", err)
	}
}

func TestReadyAndAvailableReplicasWithMinReadySeconds(t *testing.T) {
	e := setup(t)
	e.createRS("web", 2, func(rs *apps.ReplicaSet) { rs.Spec.MinReadySeconds = 3 })
	pods := e.waitPods(2)
	start := time.Now()
	for _, p := range pods {
		e.bind(p.Name, "node-1")
		e.setRunning(p.Name, true)
	}
	rs := e.waitRS("web", "ready", func(rs *apps.ReplicaSet) bool { return rs.Status.ReadyReplicas == 2 })
	if rs.Status.AvailableReplicas != 0 && time.Since(start) < 3*time.Second {
		t.Errorf("available before minReadySeconds: %+v", rs.Status)
	}
	// Nothing about the pods changes any more: the controller must wake
	// itself up when they become available.
	e.waitRS("web", "available", func(rs *apps.ReplicaSet) bool { return rs.Status.AvailableReplicas == 2 })
	if d := time.Since(start); d < 2*time.Second {
		t.Errorf("available after %v, before minReadySeconds", d)
	}
}

// TestQuotaFailure: pods beyond a ResourceQuota fail with a FailedCreate
// Event and the ReplicaFailure condition, which clears once the quota is
// raised.
func TestQuotaFailure(t *testing.T) {
	e := setup(t)
	quota := &v1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "pods", Namespace: e.ns},
		Spec:       v1.ResourceQuotaSpec{Hard: v1.ResourceList{v1.ResourcePods: resource.MustParse("2")}},
	}
	quota, err := e.client.CoreV1().ResourceQuotas(e.ns).Create(e.ctx, quota, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// No resourcequota-controller here: publish the quota's status ourselves.
	quota.Status = v1.ResourceQuotaStatus{Hard: quota.Spec.Hard, Used: v1.ResourceList{v1.ResourcePods: resource.MustParse("0")}}
	if _, err := e.client.CoreV1().ResourceQuotas(e.ns).UpdateStatus(e.ctx, quota, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	e.createRS("web", 4)
	rs := e.waitRS("web", "ReplicaFailure", func(rs *apps.ReplicaSet) bool {
		return len(rs.Status.Conditions) == 1 && rs.Status.Replicas == 2
	})
	cond := rs.Status.Conditions[0]
	if cond.Type != apps.ReplicaSetReplicaFailure || cond.Status != v1.ConditionTrue || cond.Reason != "FailedCreate" ||
		!strings.Contains(cond.Message, "exceeded quota: pods") || !strings.HasPrefix(cond.Message, `pods "web-`) {
		t.Errorf("condition %+v", cond)
	}
	ev := e.waitEvents("ReplicaSet", "web", "FailedCreate", 1)[0]
	if ev.Type != v1.EventTypeWarning || !strings.HasPrefix(ev.Message, `Error creating: pods "web-`) || !strings.Contains(ev.Message, "exceeded quota") {
		t.Errorf("event %s %q", ev.Type, ev.Message)
	}
	if len(e.pods()) != 2 {
		t.Errorf("%d pods, want 2", len(e.pods()))
	}

	quota, err = e.client.CoreV1().ResourceQuotas(e.ns).Get(e.ctx, "pods", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	quota.Spec.Hard[v1.ResourcePods] = resource.MustParse("10")
	if quota, err = e.client.CoreV1().ResourceQuotas(e.ns).Update(e.ctx, quota, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	quota.Status.Hard = quota.Spec.Hard
	if _, err := e.client.CoreV1().ResourceQuotas(e.ns).UpdateStatus(e.ctx, quota, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitRS("web", "recovered", func(rs *apps.ReplicaSet) bool {
		return len(rs.Status.Conditions) == 0 && rs.Status.Replicas == 4
	})
	e.waitPods(4)
}

// TestLargeReplicaCount creates 1001 pods, in syncs of at most 500, each
// exactly once, and then goes quiet.
func TestLargeReplicaCount(t *testing.T) {
	e := setup(t)
	const n = 1001
	e.createRS("web", n)
	waitForWithin(t, 3*timeout, "all pods", func() bool { return e.getRS("web").Status.Replicas == n })
	if got := e.podCreates.Load(); got != n {
		t.Errorf("%d pod creations, want %d", got, n)
	}
	// The first sync creates its 500 pods; its status (only a new
	// observedGeneration) waits for them. Usually the second sync creates
	// 500 more and writes the first 500 with them; on a loaded machine the
	// status spacing may let the status go first.
	if got := e.createsBeforeStatus.Load(); got < replicaset.BurstReplicas || got > 2*replicaset.BurstReplicas {
		t.Errorf("%d pod creations before the first status write, want %d to %d", got, replicaset.BurstReplicas, 2*replicaset.BurstReplicas)
	}
	framework.Consistently(t, 2*time.Second, "no more pod creations", func() bool { return e.podCreates.Load() == n })
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitForWithin(t, timeout, what, cond)
}

func waitForWithin(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(d); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%s: not within %v", what, d)
		}
	}
}
