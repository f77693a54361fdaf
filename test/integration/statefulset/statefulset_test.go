package statefulset

import (
	"slices"
	"strings"
	"testing"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/test/integration/framework"
)

// TestOrderedReady: pods and their claims come one at a time, each after
// its predecessor is Running and Ready, and go in reverse order.
func TestOrderedReady(t *testing.T) {
	e := setup(t)
	e.createSet("web", 3, withClaim)
	e.waitPodNames("web-0")
	framework.Consistently(t, time.Second, "only web-0 while it is pending", func() bool { return e.podNames() == "web-0" })

	e.kubeletOn.Store(true)
	e.waitPodNames("web-0,web-1,web-2")
	set := e.waitSet("web", "ready", func(s *apps.StatefulSet) bool { return s.Status.ReadyReplicas == 3 })
	revs := e.revisions()
	if len(revs) != 1 || revs[0].Revision != 1 {
		t.Fatalf("revisions %v", revs)
	}
	st := set.Status
	if st.Replicas != 3 || st.AvailableReplicas != 3 || st.CurrentReplicas != 3 || st.UpdatedReplicas != 3 ||
		st.CurrentRevision != revs[0].Name || st.UpdateRevision != revs[0].Name || ptr.Deref(st.CollisionCount, -1) != 0 ||
		st.ObservedGeneration != set.Generation {
		t.Errorf("status %+v", st)
	}
	for i, p := range e.pods() {
		name := "web-" + string(rune('0'+i))
		if p.Spec.Hostname != name || p.Spec.Subdomain != "web" || p.Labels[apps.StatefulSetPodNameLabel] != name ||
			p.Labels[apps.PodIndexLabel] != name[4:] || p.Labels[apps.StatefulSetRevisionLabel] != revs[0].Name ||
			p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != "data-"+name {
			t.Errorf("pod %s: %+v %+v", p.Name, p.Labels, p.Spec)
		}
	}
	claims := e.claims()
	if len(claims) != 3 || claims[2].Name != "data-web-2" || claims[2].Labels["app"] != "web" || len(claims[2].OwnerReferences) != 0 {
		t.Errorf("claims %+v", claims)
	}
	created := e.waitEvents("web", "SuccessfulCreate", 6)
	var msgs []string
	for _, ev := range created {
		msgs = append(msgs, ev.Message)
	}
	for _, want := range []string{"Create Pod web-1 in StatefulSet web successful", "Create Claim data-web-1 Pod web-1 in StatefulSet web success"} {
		if !slices.Contains(msgs, want) {
			t.Errorf("no Event %q in %q", want, msgs)
		}
	}

	e.updateSet("web", func(s *apps.StatefulSet) { s.Spec.Replicas = ptr.To[int32](1) })
	e.waitPodNames("web-0")
	e.waitSet("web", "scaled down", func(s *apps.StatefulSet) bool { return s.Status.Replicas == 1 })
	if len(e.claims()) != 3 {
		t.Errorf("claims deleted under the Retain policy")
	}
	deleted := e.waitEvents("web", "SuccessfulDelete", 2)
	sort := func(evs []v1.Event) []string {
		slices.SortFunc(evs, func(a, b v1.Event) int { return a.FirstTimestamp.Compare(b.FirstTimestamp.Time) })
		var out []string
		for _, ev := range evs {
			out = append(out, ev.Message)
		}
		return out
	}
	if got := sort(deleted); got[0] != "Delete Pod web-2 in StatefulSet web successful" {
		t.Errorf("deletions %q: web-2 first", got)
	}
	if n := e.podCreates.Load(); n != 3 {
		t.Errorf("%d pod creations, want 3", n)
	}
}

// TestParallelRollingUpdateAndRollback: a Parallel set rolls the pods
// above its partition, two at a time, and a rollback reuses the first
// revision with a new revision number.
func TestParallelRollingUpdateAndRollback(t *testing.T) {
	e := setup(t)
	e.kubeletOn.Store(true)
	e.createSet("web", 4, parallel, func(s *apps.StatefulSet) {
		s.Spec.UpdateStrategy.RollingUpdate = &apps.RollingUpdateStatefulSetStrategy{
			Partition: ptr.To[int32](2), MaxUnavailable: ptr.To(intstr.FromInt32(2)),
		}
	})
	e.waitSet("web", "ready", func(s *apps.StatefulSet) bool { return s.Status.ReadyReplicas == 4 })
	first := e.revisions()[0].Name

	e.updateSet("web", func(s *apps.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "registry.example/web:2" })
	set := e.waitSet("web", "partly updated", func(s *apps.StatefulSet) bool {
		return s.Status.UpdatedReplicas == 2 && s.Status.ReadyReplicas == 4 && s.Status.UpdateRevision != first
	})
	second := set.Status.UpdateRevision
	if set.Status.CurrentRevision != first || set.Status.CurrentReplicas != 2 {
		t.Errorf("status %+v", set.Status)
	}
	var got []string
	for _, p := range e.pods() {
		got = append(got, p.Labels[apps.StatefulSetRevisionLabel])
	}
	if !slices.Equal(got, []string{first, first, second, second}) {
		t.Errorf("pod revisions %v", got)
	}

	// kubectl rollout undo: the first template back.
	e.updateSet("web", func(s *apps.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "registry.example/web:1" })
	e.waitSet("web", "rolled back", func(s *apps.StatefulSet) bool {
		return s.Status.UpdateRevision == first && s.Status.UpdatedReplicas == 4 && s.Status.ReadyReplicas == 4 && s.Status.CurrentRevision == first
	})
	revs := e.revisions()
	if len(revs) != 2 || revs[1].Name != first || revs[1].Revision != 3 || revs[0].Name != second {
		t.Errorf("revisions after the rollback: %s=%d %s=%d", revs[0].Name, revs[0].Revision, revs[1].Name, revs[1].Revision)
	}
}

// TestRetentionPolicy: claims of pods in range belong to the set, a
// scaled-down pod's claim to the pod.
func TestRetentionPolicy(t *testing.T) {
	e := setup(t)
	e.kubeletOn.Store(true)
	e.createSet("web", 2, withClaim, parallel, func(s *apps.StatefulSet) {
		s.Spec.PersistentVolumeClaimRetentionPolicy = &apps.StatefulSetPersistentVolumeClaimRetentionPolicy{
			WhenDeleted: apps.DeletePersistentVolumeClaimRetentionPolicyType,
			WhenScaled:  apps.DeletePersistentVolumeClaimRetentionPolicyType,
		}
	})
	set := e.waitSet("web", "ready", func(s *apps.StatefulSet) bool { return s.Status.ReadyReplicas == 2 })
	framework.Eventually(t, timeout, func() (bool, error) {
		claims := e.claims()
		return len(claims) == 2 && ownedBy(claims[0], set.UID) && ownedBy(claims[1], set.UID), nil
	})
	web1 := e.pods()[1]
	e.updateSet("web", func(s *apps.StatefulSet) { s.Spec.Replicas = ptr.To[int32](1) })
	e.waitPodNames("web-0")
	claims := e.claims()
	if !ownedBy(claims[1], web1.UID) || ownedBy(claims[1], set.UID) || !ownedBy(claims[0], set.UID) {
		t.Errorf("claims after scale-down: %v / %v", claims[0].OwnerReferences, claims[1].OwnerReferences)
	}
}

func ownedBy(c v1.PersistentVolumeClaim, uid types.UID) bool {
	for _, ref := range c.OwnerReferences {
		if ref.UID == uid && ptr.Deref(ref.Controller, false) && ptr.Deref(ref.BlockOwnerDeletion, false) {
			return true
		}
	}
	return false
}

// TestPodCreationRefused: pods that admission refuses give FailedCreate
// Events and are retried with backoff, not in a hot loop; once admitted,
// each is created once.
func TestPodCreationRefused(t *testing.T) {
	e := setup(t)
	quota := &v1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "pods", Namespace: e.ns},
		Spec:       v1.ResourceQuotaSpec{Hard: v1.ResourceList{v1.ResourcePods: resource.MustParse("0")}},
	}
	quota, err := e.client.CoreV1().ResourceQuotas(e.ns).Create(e.ctx, quota, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// No resourcequota-controller here: publish the quota's status ourselves.
	quota.Status = v1.ResourceQuotaStatus{Hard: quota.Spec.Hard, Used: v1.ResourceList{v1.ResourcePods: resource.MustParse("0")}}
	if quota, err = e.client.CoreV1().ResourceQuotas(e.ns).UpdateStatus(e.ctx, quota, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.kubeletOn.Store(true)
	e.createSet("web", 2, parallel)
	ev := e.waitEvents("web", "FailedCreate", 1)[0]
	if ev.Type != v1.EventTypeWarning || !strings.HasPrefix(ev.Message, "Create Pod web-") || !strings.Contains(ev.Message, "exceeded quota") {
		t.Errorf("event %s %q", ev.Type, ev.Message)
	}
	framework.Consistently(t, 3*time.Second, "few pod creation attempts (backoff, not a hot loop)", func() bool {
		return e.podCreates.Load() <= 20
	})

	quota.Spec.Hard[v1.ResourcePods] = resource.MustParse("10")
	if quota, err = e.client.CoreV1().ResourceQuotas(e.ns).Update(e.ctx, quota, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	quota.Status.Hard = quota.Spec.Hard
	if _, err := e.client.CoreV1().ResourceQuotas(e.ns).UpdateStatus(e.ctx, quota, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Retries back off exponentially; nudge the set instead of waiting.
	e.updateSet("web", func(s *apps.StatefulSet) { s.Labels = map[string]string{"nudge": "1"} })
	e.waitSet("web", "ready", func(s *apps.StatefulSet) bool { return s.Status.ReadyReplicas == 2 })
	e.waitPodNames("web-0,web-1")
}

// TestRestartKeepsPods: a new controller (fresh informers, as after a
// restart or a takeover from upstream) finds its revision and pods as
// they are: no new revision, no pod replaced.
func TestRestartKeepsPods(t *testing.T) {
	e := setup(t)
	e.kubeletOn.Store(true)
	e.createSet("web", 2, withClaim)
	e.waitSet("web", "ready", func(s *apps.StatefulSet) bool { return s.Status.ReadyReplicas == 2 })
	before := e.pods()
	e.stop()
	e.startController()
	e.updateSet("web", func(s *apps.StatefulSet) { s.Labels = map[string]string{"nudge": "1"} })
	framework.Consistently(t, 2*time.Second, "pods and revisions unchanged", func() bool {
		after := e.pods()
		return len(e.revisions()) == 1 && len(after) == 2 && after[0].UID == before[0].UID && after[1].UID == before[1].UID
	})
}
