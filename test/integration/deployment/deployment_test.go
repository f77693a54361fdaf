package deployment

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controller/deployment"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

func TestMain(m *testing.M) { framework.Main(m) }

func setImage(img string) func(*apps.Deployment) {
	return func(d *apps.Deployment) { d.Spec.Template.Spec.Containers[0].Image = img }
}

func TestCreateAndComplete(t *testing.T) {
	e := setup(t)
	d := e.createDeployment("web", 3, func(d *apps.Deployment) {
		d.Annotations = map[string]string{"kubernetes.io/change-cause": "created by the test"}
	})
	name := rsName(d)
	rs := e.waitRS(name, "created", func(*apps.ReplicaSet) bool { return true })

	hash := name[len("web-"):]
	wantLabels := map[string]string{"app": "web", apps.DefaultDeploymentUniqueLabelKey: hash}
	if !maps.Equal(rs.Labels, wantLabels) || !maps.Equal(rs.Spec.Selector.MatchLabels, wantLabels) || !maps.Equal(rs.Spec.Template.Labels, wantLabels) {
		t.Errorf("labels %v, selector %v, template labels %v; want %v", rs.Labels, rs.Spec.Selector.MatchLabels, rs.Spec.Template.Labels, wantLabels)
	}
	wantAnnotations := map[string]string{
		"kubernetes.io/change-cause":         "created by the test",
		deployment.RevisionAnnotation:        "1",
		deployment.DesiredReplicasAnnotation: "3",
		deployment.MaxReplicasAnnotation:     "4", // default maxSurge 25% of 3, rounded up
	}
	if !maps.Equal(rs.Annotations, wantAnnotations) {
		t.Errorf("annotations %v, want %v", rs.Annotations, wantAnnotations)
	}
	wantRef := []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: d.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	if !reflect.DeepEqual(rs.OwnerReferences, wantRef) {
		t.Errorf("ownerReferences %+v", rs.OwnerReferences)
	}
	if *rs.Spec.Replicas != 3 {
		t.Errorf("replicas %d", *rs.Spec.Replicas)
	}

	got := e.waitComplete("web")
	if got.Annotations[deployment.RevisionAnnotation] != "1" {
		t.Errorf("deployment revision %q", got.Annotations[deployment.RevisionAnnotation])
	}
	want := apps.DeploymentStatus{ObservedGeneration: got.Generation, Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 3,
		AvailableReplicas: 3, TerminatingReplicas: ptr.To[int32](0)}
	st := got.Status
	st.Conditions = nil
	if !reflect.DeepEqual(st, want) {
		t.Errorf("status %+v, want %+v", st, want)
	}
	if c := condition(got, apps.DeploymentAvailable); c == nil || c.Status != v1.ConditionTrue ||
		c.Reason != deployment.ReasonMinimumReplicasAvailable || c.Message != "Deployment has minimum availability." {
		t.Errorf("Available %+v", c)
	}
	if c := condition(got, apps.DeploymentProgressing); c.Status != v1.ConditionTrue || c.Message != fmt.Sprintf("ReplicaSet %q has successfully progressed.", name) {
		t.Errorf("Progressing %+v", c)
	}
	e.waitEvent("web", "ScalingReplicaSet", fmt.Sprintf("Scaled up replica set %s from 0 to 3", name))

	// Once complete, nothing more is written.
	before := e.writes.Load()
	framework.Consistently(t, 2*time.Second, "no writes in steady state", func() bool { return e.writes.Load() == before })
}

func TestScale(t *testing.T) {
	e := setup(t)
	d := e.createDeployment("web", 2)
	e.waitComplete("web")
	e.updateDeployment("web", func(d *apps.Deployment) { d.Spec.Replicas = ptr.To[int32](5) })
	got := e.waitComplete("web")
	rs := e.replicaSets(got)[rsName(d)]
	if rs == nil || *rs.Spec.Replicas != 5 || rs.Annotations[deployment.DesiredReplicasAnnotation] != "5" ||
		rs.Annotations[deployment.MaxReplicasAnnotation] != "7" {
		t.Fatalf("replica set after scaling: %+v", rs)
	}
	e.waitEvent("web", "ScalingReplicaSet", fmt.Sprintf("Scaled up replica set %s from 2 to 5", rs.Name))

	e.updateDeployment("web", func(d *apps.Deployment) { d.Spec.Replicas = ptr.To[int32](1) })
	e.waitComplete("web")
	e.waitEvent("web", "ScalingReplicaSet", fmt.Sprintf("Scaled down replica set %s from 5 to 1", rs.Name))
}

// watchReplicaSets records the total spec.replicas of the namespace's
// ReplicaSets after each change, until stopped.
func (e *env) watchReplicaSets() (stop func() []int32) {
	e.t.Helper()
	w, err := e.client.AppsV1().ReplicaSets(e.ns).Watch(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var mu sync.Mutex
	sizes := map[string]int32{}
	var totals []int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			rs, ok := ev.Object.(*apps.ReplicaSet)
			if !ok {
				continue
			}
			mu.Lock()
			if ev.Type == watch.Deleted {
				delete(sizes, rs.Name)
			} else {
				sizes[rs.Name] = *rs.Spec.Replicas
			}
			var total int32
			for _, n := range sizes {
				total += n
			}
			totals = append(totals, total)
			mu.Unlock()
		}
	}()
	return func() []int32 {
		w.Stop()
		<-done
		return totals
	}
}

func TestRollingUpdate(t *testing.T) {
	e := setup(t)
	d := e.createDeployment("web", 4, func(d *apps.Deployment) {
		d.Spec.Strategy.RollingUpdate = &apps.RollingUpdateDeployment{
			MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(0))}
	})
	e.waitComplete("web")
	oldName := rsName(d)

	stop := e.watchReplicaSets()
	updated := e.updateDeployment("web", setImage("registry.example/web:2"))
	newName := rsName(updated)
	got := e.waitComplete("web")
	totals := stop()
	// maxSurge 1: never more than 5 replicas wanted at once.
	if m := slices.Max(totals); m > 5 {
		t.Errorf("total replicas reached %d, maxSurge allows 5 (%v)", m, totals)
	}
	rss := e.replicaSets(got)
	if len(rss) != 2 || *rss[oldName].Spec.Replicas != 0 || *rss[newName].Spec.Replicas != 4 {
		t.Fatalf("replica sets %v", rss)
	}
	if rss[oldName].Annotations[deployment.RevisionAnnotation] != "1" || rss[newName].Annotations[deployment.RevisionAnnotation] != "2" ||
		got.Annotations[deployment.RevisionAnnotation] != "2" {
		t.Errorf("revisions: old %s new %s deployment %s", rss[oldName].Annotations[deployment.RevisionAnnotation],
			rss[newName].Annotations[deployment.RevisionAnnotation], got.Annotations[deployment.RevisionAnnotation])
	}
	e.waitEvent("web", "ScalingReplicaSet", fmt.Sprintf("Scaled down replica set %s from 1 to 0", oldName))

	// A rollback as kubectl does it: the old template, copied back, reuses
	// the old ReplicaSet under a new revision.
	back := rss[oldName].Spec.Template.DeepCopy()
	delete(back.Labels, apps.DefaultDeploymentUniqueLabelKey)
	e.updateDeployment("web", func(d *apps.Deployment) { d.Spec.Template = *back })
	got = e.waitComplete("web")
	rss = e.replicaSets(got)
	if len(rss) != 2 || *rss[oldName].Spec.Replicas != 4 || rss[oldName].Annotations[deployment.RevisionAnnotation] != "3" ||
		rss[oldName].Annotations[deployment.RevisionHistoryAnnotation] != "1" || got.Annotations[deployment.RevisionAnnotation] != "3" {
		t.Errorf("after rollback: deployment %v, replica sets %v", got.Annotations, rss)
	}
}

func TestProportionalScalingMidRollout(t *testing.T) {
	e := setup(t)
	d := e.createDeployment("web", 10, func(d *apps.Deployment) {
		d.Spec.Strategy.RollingUpdate = &apps.RollingUpdateDeployment{
			MaxSurge: ptr.To(intstr.FromInt32(3)), MaxUnavailable: ptr.To(intstr.FromInt32(2))}
	})
	e.waitComplete("web")
	oldName := rsName(d)
	// New pods never become ready: the rollout stalls at 8 old + 5 new.
	updated := e.updateDeployment("web", setImage(brokenImage))
	newName := rsName(updated)
	e.waitRS(oldName, "scaled to 8", func(rs *apps.ReplicaSet) bool { return *rs.Spec.Replicas == 8 })
	e.waitRS(newName, "scaled to 5", func(rs *apps.ReplicaSet) bool { return *rs.Spec.Replicas == 5 })

	// 10 -> 20: 13 become 23, in proportion 8:5.
	e.updateDeployment("web", func(d *apps.Deployment) { d.Spec.Replicas = ptr.To[int32](20) })
	old := e.waitRS(oldName, "scaled proportionally", func(rs *apps.ReplicaSet) bool { return *rs.Spec.Replicas != 8 })
	nw := e.waitRS(newName, "scaled proportionally", func(rs *apps.ReplicaSet) bool { return *rs.Spec.Replicas != 5 })
	if *old.Spec.Replicas != 14 || *nw.Spec.Replicas != 9 {
		t.Errorf("old %d new %d, want 14 and 9", *old.Spec.Replicas, *nw.Spec.Replicas)
	}
	if old.Annotations[deployment.MaxReplicasAnnotation] != "23" || nw.Annotations[deployment.DesiredReplicasAnnotation] != "20" {
		t.Errorf("annotations old %v new %v", old.Annotations, nw.Annotations)
	}
}

func TestPauseAndResume(t *testing.T) {
	e := setup(t)
	d := e.createDeployment("web", 2, func(d *apps.Deployment) { d.Spec.Paused = true })
	e.waitDeployment("web", "paused condition", func(d *apps.Deployment) bool {
		c := condition(d, apps.DeploymentProgressing)
		return c != nil && c.Status == v1.ConditionUnknown && c.Reason == deployment.ReasonDeploymentPaused && c.Message == "Deployment is paused"
	})
	framework.Consistently(t, time.Second, "no ReplicaSet while paused", func() bool { return len(e.replicaSets(d)) == 0 })

	e.updateDeployment("web", func(d *apps.Deployment) { d.Spec.Paused = false })
	e.waitComplete("web")

	// Paused mid-way: a template change waits for the resume.
	e.updateDeployment("web", func(d *apps.Deployment) { d.Spec.Paused = true })
	updated := e.updateDeployment("web", setImage("registry.example/web:2"))
	e.waitDeployment("web", "paused", func(d *apps.Deployment) bool {
		c := condition(d, apps.DeploymentProgressing)
		return d.Status.ObservedGeneration == d.Generation && c != nil && c.Reason == deployment.ReasonDeploymentPaused
	})
	framework.Consistently(t, time.Second, "no new ReplicaSet while paused", func() bool { return e.replicaSets(d)[rsName(updated)] == nil })
	e.updateDeployment("web", func(d *apps.Deployment) { d.Spec.Paused = false })
	got := e.waitComplete("web")
	if e.replicaSets(got)[rsName(updated)] == nil {
		t.Error("no new ReplicaSet after the resume")
	}
}

func TestRecreate(t *testing.T) {
	e := setup(t)
	d := e.createDeployment("web", 2, func(d *apps.Deployment) {
		d.Spec.Strategy = apps.DeploymentStrategy{Type: apps.RecreateDeploymentStrategyType}
	})
	e.waitComplete("web")
	oldName := rsName(d)

	w, err := e.client.AppsV1().ReplicaSets(e.ns).Watch(e.ctx, metav1.ListOptions{ResourceVersion: e.replicaSets(d)[oldName].ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	updated := e.updateDeployment("web", setImage("registry.example/web:2"))
	newName := rsName(updated)
	e.waitComplete("web")
	// The old ReplicaSet reported no pods before the new one appeared.
	oldGone := false
	for ev := range w.ResultChan() {
		rs := ev.Object.(*apps.ReplicaSet)
		switch rs.Name {
		case oldName:
			oldGone = oldGone || (*rs.Spec.Replicas == 0 && rs.Status.Replicas == 0)
		case newName:
			if !oldGone {
				t.Fatalf("new ReplicaSet %s (%s) before the old one was empty", newName, ev.Type)
			}
			return
		}
	}
}

func TestProgressDeadlineExceeded(t *testing.T) {
	e := setup(t)
	e.ready.Store(false)
	e.createDeployment("web", 2, func(d *apps.Deployment) { d.Spec.ProgressDeadlineSeconds = ptr.To[int32](2) })
	got := e.waitDeployment("web", "deadline exceeded", func(d *apps.Deployment) bool {
		c := condition(d, apps.DeploymentProgressing)
		return c != nil && c.Reason == deployment.ReasonProgressDeadlineExceeded
	})
	c := condition(got, apps.DeploymentProgressing)
	if c.Status != v1.ConditionFalse || c.Message != fmt.Sprintf("ReplicaSet %q has timed out progressing.", rsName(got)) {
		t.Errorf("Progressing %+v", c)
	}
	if a := condition(got, apps.DeploymentAvailable); a == nil || a.Status != v1.ConditionFalse || a.Reason != deployment.ReasonMinimumReplicasUnavailable {
		t.Errorf("Available %+v", a)
	}
	// Pods becoming ready after all: the rollout completes.
	e.ready.Store(true)
	e.waitComplete("web")
}

func TestAdoptsOrphanReplicaSet(t *testing.T) {
	e := setup(t)
	template := v1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "registry.example/web:1"}}},
	}
	orphan, err := e.client.AppsV1().ReplicaSets(e.ns).Create(e.ctx, &apps.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "orphan", Namespace: e.ns, Labels: podLabels},
		Spec:       apps.ReplicaSetSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: podLabels}, Template: template},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := e.createDeployment("web", 2)
	adopted := e.waitRS("orphan", "adopted", func(rs *apps.ReplicaSet) bool { return metav1.IsControlledBy(rs, d) })
	if adopted.UID != orphan.UID {
		t.Error("a different ReplicaSet")
	}
	got := e.waitComplete("web")
	if rss := e.replicaSets(got); len(rss) != 1 || rss["orphan"] == nil || rss["orphan"].Annotations[deployment.RevisionAnnotation] != "1" {
		t.Errorf("replica sets %v", rss)
	}
	if _, err := e.client.AppsV1().ReplicaSets(e.ns).Get(e.ctx, rsName(got), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a new ReplicaSet was created beside the adopted one: %v", err)
	}

	// Its labels no longer matching, it is released.
	e.updateRS("orphan", func(rs *apps.ReplicaSet) { rs.Labels = map[string]string{"app": "other"} })
	e.waitRS("orphan", "released", func(rs *apps.ReplicaSet) bool { return metav1.GetControllerOf(rs) == nil })
}

func (e *env) updateRS(name string, mutate func(*apps.ReplicaSet)) {
	e.t.Helper()
	framework.Eventually(e.t, timeout, func() (bool, error) {
		rs, err := e.client.AppsV1().ReplicaSets(e.ns).Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		mutate(rs)
		_, err = e.client.AppsV1().ReplicaSets(e.ns).Update(e.ctx, rs, metav1.UpdateOptions{})
		return err == nil, nil
	})
}

func TestRevisionHistoryLimit(t *testing.T) {
	e := setup(t)
	d := e.createDeployment("web", 1, func(d *apps.Deployment) { d.Spec.RevisionHistoryLimit = ptr.To[int32](1) })
	e.waitComplete("web")
	var names []string
	names = append(names, rsName(d))
	for i := 2; i <= 4; i++ {
		updated := e.updateDeployment("web", setImage(fmt.Sprintf("registry.example/web:%d", i)))
		names = append(names, rsName(updated))
		e.waitComplete("web")
	}
	// The current one and one old one stay.
	framework.Eventually(t, timeout, func() (bool, error) {
		rss := e.replicaSets(d)
		return len(rss) == 2 && rss[names[3]] != nil && rss[names[2]] != nil, nil
	})
}
