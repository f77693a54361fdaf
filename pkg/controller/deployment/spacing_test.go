package deployment

import (
	"testing"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestProgressOnly(t *testing.T) {
	t0 := time.Unix(1000, 0)
	base := func() *apps.Deployment {
		return &apps.Deployment{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"deployment.kubernetes.io/revision": "2"}},
			Status: apps.DeploymentStatus{
				ObservedGeneration: 3,
				Replicas:           10,
				UpdatedReplicas:    4,
				Conditions: []apps.DeploymentCondition{
					newCondition(apps.DeploymentAvailable, v1.ConditionTrue, ReasonMinimumReplicasAvailable, "Deployment has minimum availability.", t0),
					newCondition(apps.DeploymentProgressing, v1.ConditionTrue, ReasonReplicaSetUpdated, `ReplicaSet "web-1" is progressing.`, t0),
				},
			},
		}
	}
	for name, tc := range map[string]struct {
		change func(d *apps.Deployment)
		want   bool
	}{
		"counters": {func(d *apps.Deployment) { d.Status.UpdatedReplicas = 6; d.Status.AvailableReplicas = 5 }, true},
		"progress moves lastUpdateTime": {func(d *apps.Deployment) {
			d.Status.UpdatedReplicas = 6
			d.Status.Conditions[1].LastUpdateTime = metav1.NewTime(t0.Add(time.Second))
		}, true},
		"observedGeneration":  {func(d *apps.Deployment) { d.Status.ObservedGeneration = 4 }, false},
		"collisionCount":      {func(d *apps.Deployment) { d.Status.CollisionCount = ptr.To(int32(1)) }, false},
		"annotation":          {func(d *apps.Deployment) { d.Annotations["deployment.kubernetes.io/revision"] = "3" }, false},
		"condition reason":    {func(d *apps.Deployment) { d.Status.Conditions[1].Reason = ReasonNewRSAvailable }, false},
		"condition status":    {func(d *apps.Deployment) { d.Status.Conditions[0].Status = v1.ConditionFalse }, false},
		"condition message":   {func(d *apps.Deployment) { d.Status.Conditions[1].Message = "x" }, false},
		"condition removed":   {func(d *apps.Deployment) { d.Status.Conditions = d.Status.Conditions[:1] }, false},
		"condition reordered": {func(d *apps.Deployment) { c := d.Status.Conditions; c[0], c[1] = c[1], c[0] }, false},
		"transition time": {func(d *apps.Deployment) {
			d.Status.Conditions[1].LastTransitionTime = metav1.NewTime(t0.Add(time.Second))
		}, false},
	} {
		t.Run(name, func(t *testing.T) {
			stored, next := base(), base()
			tc.change(next)
			if got := progressOnly(stored, next); got != tc.want {
				t.Errorf("progressOnly = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSettled(t *testing.T) {
	mk := func(replicas, updated, ready, available, terminating int32) *apps.Deployment {
		return &apps.Deployment{
			ObjectMeta: metav1.ObjectMeta{Generation: 2},
			Spec:       apps.DeploymentSpec{Replicas: ptr.To(int32(10))},
			Status: apps.DeploymentStatus{
				ObservedGeneration: 2, Replicas: replicas, UpdatedReplicas: updated,
				ReadyReplicas: ready, AvailableReplicas: available,
				UnavailableReplicas: 10 - available, TerminatingReplicas: ptr.To(terminating),
			},
		}
	}
	for name, tc := range map[string]struct {
		stored, next *apps.Deployment
		want         bool
	}{
		"intermediate":                  {mk(10, 4, 8, 8, 2), mk(10, 6, 9, 9, 1), false},
		"first complete":                {mk(10, 10, 9, 9, 3), mk(10, 10, 10, 10, 3), true},
		"complete, old pods terminate":  {mk(10, 10, 10, 10, 3), mk(10, 10, 10, 10, 2), false},
		"complete, last pod terminated": {mk(10, 10, 10, 10, 1), mk(10, 10, 10, 10, 0), true},
		"scaling up, not there yet":     {mk(5, 5, 5, 5, 0), mk(8, 8, 6, 6, 0), false},
	} {
		t.Run(name, func(t *testing.T) {
			if got := settled(tc.stored, tc.next); got != tc.want {
				t.Errorf("settled = %v, want %v", got, tc.want)
			}
		})
	}
}
