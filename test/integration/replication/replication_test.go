package replication

import (
	"reflect"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/test/integration/framework"
)

func TestCreatesPodsWithOwnerRefsAndEvents(t *testing.T) {
	e := setup(t)
	rc := e.createRC("web", 2)
	pods := e.waitPods(2)
	wantRef := metav1.OwnerReference{APIVersion: "v1", Kind: "ReplicationController", Name: "web", UID: rc.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	for _, p := range pods {
		if !strings.HasPrefix(p.Name, "web-") || len(p.Name) != len("web-")+5 {
			t.Errorf("pod name %q", p.Name)
		}
		if !reflect.DeepEqual(p.Labels, rc.Spec.Template.Labels) || !reflect.DeepEqual(p.OwnerReferences, []metav1.OwnerReference{wantRef}) {
			t.Errorf("pod %s: labels %v, ownerReferences %+v", p.Name, p.Labels, p.OwnerReferences)
		}
	}
	got := e.waitRC("web", "status", func(rc *v1.ReplicationController) bool {
		return rc.Status.ObservedGeneration == rc.Generation && rc.Status.Replicas == 2
	})
	want := v1.ReplicationControllerStatus{Replicas: 2, FullyLabeledReplicas: 2, ObservedGeneration: got.Generation}
	if !reflect.DeepEqual(got.Status, want) {
		t.Errorf("status = %+v, want %+v", got.Status, want)
	}
	for _, ev := range e.waitEvents("web", "SuccessfulCreate", 2) {
		if ev.Source.Component != "replication-controller" || ev.InvolvedObject.APIVersion != "v1" || ev.InvolvedObject.UID != rc.UID ||
			!strings.HasPrefix(ev.Message, "Created pod: web-") {
			t.Errorf("event %+v", ev)
		}
	}
}

func TestScaleDownAndAvailability(t *testing.T) {
	e := setup(t)
	e.createRC("web", 3, func(rc *v1.ReplicationController) { rc.Spec.MinReadySeconds = 2 })
	pods := e.waitPods(3)
	// Two pods run and are ready; the third, unassigned, goes first.
	e.runReady(pods[0].Name)
	e.runReady(pods[1].Name)
	e.waitRC("web", "ready", func(rc *v1.ReplicationController) bool { return rc.Status.ReadyReplicas == 2 })
	e.waitRC("web", "available", func(rc *v1.ReplicationController) bool { return rc.Status.AvailableReplicas == 2 })

	e.scale("web", 2)
	ev := e.waitEvents("web", "SuccessfulDelete", 1)[0]
	if ev.Message != "Deleted pod: "+pods[2].Name {
		t.Errorf("event %q, want the unassigned pod %s deleted", ev.Message, pods[2].Name)
	}
	e.waitPods(2)
	e.waitRC("web", "scaled", func(rc *v1.ReplicationController) bool {
		return rc.Status.Replicas == 2 && rc.Status.AvailableReplicas == 2
	})
}

func TestAdoptionReleaseAndForeignPods(t *testing.T) {
	e := setup(t)
	e.createPod("orphan", map[string]string{"app": "web"})
	foreign := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "other", UID: types.UID("0000-other"), Controller: ptr.To(true)}
	e.createPod("foreign", map[string]string{"app": "web"}, foreign)
	rc := e.createRC("web", 2)

	ownedBy := func(p *v1.Pod) bool {
		ref := metav1.GetControllerOf(p)
		return ref != nil && ref.UID == rc.UID && ref.Kind == "ReplicationController"
	}
	owned := func() (n int) {
		for _, p := range e.pods() {
			if ownedBy(&p) {
				n++
			}
		}
		return n
	}
	waitFor(t, "orphan adopted", func() bool { return owned() == 2 && len(e.pods()) == 3 })
	p, _ := e.client.CoreV1().Pods(e.ns).Get(e.ctx, "orphan", metav1.GetOptions{})
	if !ownedBy(p) {
		t.Errorf("orphan not adopted: %+v", p.OwnerReferences)
	}

	e.patchPod("orphan", `{"metadata":{"labels":{"app":"gone"}}}`)
	waitFor(t, "released and replaced", func() bool { return owned() == 2 && len(e.pods()) == 3 })
	p, _ = e.client.CoreV1().Pods(e.ns).Get(e.ctx, "orphan", metav1.GetOptions{})
	if len(p.OwnerReferences) != 0 {
		t.Errorf("released pod has %+v", p.OwnerReferences)
	}
	f, _ := e.client.CoreV1().Pods(e.ns).Get(e.ctx, "foreign", metav1.GetOptions{})
	if !reflect.DeepEqual(f.OwnerReferences, []metav1.OwnerReference{foreign}) {
		t.Errorf("foreign pod touched: %+v", f.OwnerReferences)
	}
}

func TestOwnerDeletedWithOrphanPropagation(t *testing.T) {
	e := setup(t)
	e.createRC("web", 2)
	pods := e.waitPods(2)
	if err := e.client.CoreV1().ReplicationControllers(e.ns).Delete(e.ctx, "web", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationOrphan)}); err != nil {
		t.Fatal(err)
	}
	e.waitRC("web", "deleting", func(rc *v1.ReplicationController) bool { return rc.DeletionTimestamp != nil })
	if err := e.client.CoreV1().Pods(e.ns).Delete(e.ctx, pods[0].Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitRC("web", "status", func(rc *v1.ReplicationController) bool { return rc.Status.Replicas == 1 })
	framework.Consistently(t, 2*time.Second, "no replacement", func() bool { return len(e.pods()) == 1 })
}

func TestQuotaFailure(t *testing.T) {
	e := setup(t)
	quota, err := e.client.CoreV1().ResourceQuotas(e.ns).Create(e.ctx, &v1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "pods"},
		Spec:       v1.ResourceQuotaSpec{Hard: v1.ResourceList{v1.ResourcePods: resource.MustParse("1")}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// No resourcequota-controller here: publish the quota's status ourselves.
	quota.Status = v1.ResourceQuotaStatus{Hard: quota.Spec.Hard, Used: v1.ResourceList{v1.ResourcePods: resource.MustParse("0")}}
	if _, err := e.client.CoreV1().ResourceQuotas(e.ns).UpdateStatus(e.ctx, quota, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.createRC("web", 3)
	rc := e.waitRC("web", "ReplicaFailure", func(rc *v1.ReplicationController) bool { return len(rc.Status.Conditions) == 1 })
	cond := rc.Status.Conditions[0]
	if cond.Type != v1.ReplicationControllerReplicaFailure || cond.Reason != "FailedCreate" || !strings.Contains(cond.Message, "exceeded quota") {
		t.Errorf("condition %+v", cond)
	}
	if ev := e.waitEvents("web", "FailedCreate", 1)[0]; ev.Type != v1.EventTypeWarning || !strings.HasPrefix(ev.Message, "Error creating: ") {
		t.Errorf("event %s %q", ev.Type, ev.Message)
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
	e.waitRC("web", "recovered", func(rc *v1.ReplicationController) bool {
		return len(rc.Status.Conditions) == 0 && rc.Status.Replicas == 3
	})
}
