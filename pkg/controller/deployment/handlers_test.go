package deployment

import (
	"slices"
	"testing"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

func TestHandlers(t *testing.T) {
	rolling := deployment(1)
	other := deployment(1, func(d *apps.Deployment) {
		d.Name, d.UID = "other", "other-uid"
		d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "other"}}
	})
	recreating := deployment(1, recreate, func(d *apps.Deployment) {
		d.Name, d.UID = "re", "re-uid"
		d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "re"}}
	})
	owned := replicaSet(rolling, "web-a", "img:1", 1, old, func(rs *apps.ReplicaSet) { rs.ResourceVersion = "1" })
	orphan := replicaSet(rolling, "web-b", "img:1", 1, old, orphaned)
	stranger := replicaSet(rolling, "web-c", "img:1", 1, old, orphaned, func(rs *apps.ReplicaSet) { rs.Labels = map[string]string{"x": "y"} })
	reRS := replicaSet(recreating, "re-a", "img:1", 1, old)
	deleting := owned.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{}
	moved := owned.DeepCopy()
	moved.ResourceVersion = "2"
	moved.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(other, controllerKind)}
	podOf := func(rs *apps.ReplicaSet) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: ptr.To(true)}}}}
	}

	tests := []struct {
		name  string
		event func(c *Controller, l klog.Logger)
		want  []string
	}{
		{"owned ReplicaSet added", func(c *Controller, l klog.Logger) { c.addReplicaSet(l, owned) }, []string{"ns/web"}},
		{"orphan added: selecting deployments", func(c *Controller, l klog.Logger) { c.addReplicaSet(l, orphan) }, []string{"ns/web"}},
		{"orphan nobody selects", func(c *Controller, l klog.Logger) { c.addReplicaSet(l, stranger) }, nil},
		{"added while being deleted", func(c *Controller, l klog.Logger) { c.addReplicaSet(l, deleting) }, []string{"ns/web"}},
		{"resync", func(c *Controller, l klog.Logger) { c.updateReplicaSet(l, owned, owned) }, nil},
		{"controller changed: both", func(c *Controller, l klog.Logger) { c.updateReplicaSet(l, owned, moved) }, []string{"ns/other", "ns/web"}},
		{"deleted, as tombstone", func(c *Controller, l klog.Logger) {
			c.deleteReplicaSet(l, cache.DeletedFinalStateUnknown{Key: "ns/web-a", Obj: owned})
		}, []string{"ns/web"}},
		{"orphan deleted", func(c *Controller, l klog.Logger) { c.deleteReplicaSet(l, orphan) }, nil},
		{"pod of a Recreate deployment deleted", func(c *Controller, l klog.Logger) { c.deletePod(l, podOf(reRS)) }, []string{"ns/re"}},
		{"pod of a RollingUpdate deployment deleted", func(c *Controller, l klog.Logger) { c.deletePod(l, podOf(owned)) }, nil},
		{"deployment deleted, as tombstone", func(c *Controller, l klog.Logger) {
			c.deleteDeployment(l, cache.DeletedFinalStateUnknown{Key: "ns/web", Obj: rolling})
		}, []string{"ns/web"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, rolling, other, recreating, owned, reRS)
			tc.event(f.c, klog.Background())
			var got []string
			for f.c.queue.Len() > 0 {
				key, _ := f.c.queue.Get()
				got = append(got, key)
				f.c.queue.Done(key)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("enqueued %v, want %v", got, tc.want)
			}
		})
	}
}
