package deployment

import (
	"context"
	"maps"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// Reasons of the Deployment conditions, and of the Events about them.
const (
	// Progressing, True.
	ReasonNewReplicaSetCreated = "NewReplicaSetCreated"
	ReasonFoundNewReplicaSet   = "FoundNewReplicaSet"
	ReasonReplicaSetUpdated    = "ReplicaSetUpdated"
	ReasonNewRSAvailable       = "NewReplicaSetAvailable"
	// Progressing, False.
	ReasonReplicaSetCreateError    = "ReplicaSetCreateError"
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
	// Progressing, Unknown.
	ReasonDeploymentPaused  = "DeploymentPaused"
	ReasonDeploymentResumed = "DeploymentResumed"
	// Available.
	ReasonMinimumReplicasAvailable   = "MinimumReplicasAvailable"
	ReasonMinimumReplicasUnavailable = "MinimumReplicasUnavailable"
)

// newCondition returns a condition that transitioned and was updated now.
func newCondition(t apps.DeploymentConditionType, status v1.ConditionStatus, reason, message string, now time.Time) apps.DeploymentCondition {
	ts := metav1.NewTime(now)
	return apps.DeploymentCondition{
		Type:               t,
		Status:             status,
		LastUpdateTime:     ts,
		LastTransitionTime: ts,
		Reason:             reason,
		Message:            message,
	}
}

// getCondition returns a copy of the condition of type t, or nil.
func getCondition(status apps.DeploymentStatus, t apps.DeploymentConditionType) *apps.DeploymentCondition {
	for i := range status.Conditions {
		if status.Conditions[i].Type == t {
			c := status.Conditions[i]
			return &c
		}
	}
	return nil
}

// setCondition puts cond in status, last. A condition of the same status
// and reason is left alone (message and times included); one of the same
// status but another reason keeps its lastTransitionTime.
func setCondition(status *apps.DeploymentStatus, cond apps.DeploymentCondition) {
	cur := getCondition(*status, cond.Type)
	if cur != nil && cur.Status == cond.Status && cur.Reason == cond.Reason {
		return
	}
	if cur != nil && cur.Status == cond.Status {
		cond.LastTransitionTime = cur.LastTransitionTime
	}
	status.Conditions = append(withoutCondition(status.Conditions, cond.Type), cond)
}

func removeCondition(status *apps.DeploymentStatus, t apps.DeploymentConditionType) {
	status.Conditions = withoutCondition(status.Conditions, t)
}

// withoutCondition returns a new slice, never aliasing conds.
func withoutCondition(conds []apps.DeploymentCondition, t apps.DeploymentConditionType) []apps.DeploymentCondition {
	var out []apps.DeploymentCondition
	for _, c := range conds {
		if c.Type != t {
			out = append(out, c)
		}
	}
	return out
}

// fromReplicaSetCondition turns a ReplicaSet's condition into the
// Deployment's of the same type.
func fromReplicaSetCondition(c apps.ReplicaSetCondition) apps.DeploymentCondition {
	return apps.DeploymentCondition{
		Type:               apps.DeploymentConditionType(c.Type),
		Status:             c.Status,
		LastTransitionTime: c.LastTransitionTime,
		LastUpdateTime:     c.LastTransitionTime,
		Reason:             c.Reason,
		Message:            c.Message,
	}
}

// calculateStatus derives d's status from its ReplicaSets: the counters,
// the Available condition, and d's other conditions as they are.
func calculateStatus(d *apps.Deployment, allRSs []*apps.ReplicaSet, newRS *apps.ReplicaSet, withTerminating bool, now time.Time) apps.DeploymentStatus {
	available := availableReplicas(allRSs)
	// More available than wanted (scaling down) is not negative unavailability.
	unavailable := max(specReplicas(allRSs)-available, 0)
	status := apps.DeploymentStatus{
		ObservedGeneration:  d.Generation,
		Replicas:            statusReplicas(allRSs),
		UpdatedReplicas:     statusReplicas([]*apps.ReplicaSet{newRS}),
		ReadyReplicas:       readyReplicas(allRSs),
		AvailableReplicas:   available,
		UnavailableReplicas: unavailable,
		CollisionCount:      d.Status.CollisionCount,
	}
	if withTerminating {
		status.TerminatingReplicas = terminatingReplicas(allRSs)
	}
	status.Conditions = append(status.Conditions, d.Status.Conditions...)
	if available >= desired(d)-maxUnavailable(d) {
		setCondition(&status, newCondition(apps.DeploymentAvailable, v1.ConditionTrue, ReasonMinimumReplicasAvailable, "Deployment has minimum availability.", now))
	} else {
		setCondition(&status, newCondition(apps.DeploymentAvailable, v1.ConditionFalse, ReasonMinimumReplicasUnavailable, "Deployment does not have minimum availability.", now))
	}
	return status
}

// statusUnchanged compares two statuses semantically: empty and nil lists
// alike, as they serialize.
func statusUnchanged(a, b apps.DeploymentStatus) bool {
	return equality.Semantic.DeepEqual(a, b)
}

// persist writes the working copy's status and annotations through the
// status subresource (which also stores metadata other than labels), if
// they differ from what the API server has. It is the only place a sync
// writes its Deployment's status.
func (c *Controller) persist(ctx context.Context, s *syncState) error {
	if statusUnchanged(s.d.Status, s.stored.Status) && maps.Equal(s.d.Annotations, s.stored.Annotations) {
		return nil
	}
	key := deploymentKey(s.d)
	// Only counters moved, short of the goal: such a write may wait.
	mayWait := progressOnly(s.stored, s.d) && !settled(s.stored, s.d)
	if d := c.statusSpacer.Delay(key); d > 0 && mayWait {
		// Written less than a period ago: write when the period ends,
		// with whatever else changed by then.
		klog.FromContext(ctx).V(4).Info("Delaying deployment status update", "deployment", klog.KObj(s.d), "delay", d)
		c.queue.AddAfter(key, d)
		return nil
	}
	updated, err := c.client.AppsV1().Deployments(s.d.Namespace).UpdateStatus(ctx, s.d, metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	klog.FromContext(ctx).V(4).Info("Updated deployment status", "deployment", klog.KObj(s.d), "resourceVersion", updated.ResourceVersion)
	s.stored = updated
	s.d.ResourceVersion = updated.ResourceVersion
	c.statusSpacer.Wrote(key)
	return nil
}

// settled reports whether next's status is one a Spacer must not hold
// back: the first complete one (what `kubectl rollout status` and
// clients waiting for a scale look for), or one with nothing left in
// motion (complete, every replica ready, none terminating). Only
// intermediate counts are worth gathering.
func settled(stored, next *apps.Deployment) bool {
	st := &next.Status
	if !deploymentComplete(next, st) {
		return false
	}
	if !deploymentComplete(stored, &stored.Status) {
		return true
	}
	return st.ReadyReplicas == desired(next) && st.UnavailableReplicas == 0 &&
		ptr.Deref(st.TerminatingReplicas, 0) == 0
}

// progressOnly reports whether the status of next differs from stored's
// only in its counters and in the lastUpdateTime of its conditions.
func progressOnly(stored, next *apps.Deployment) bool {
	a, b := stored.Status, next.Status
	if a.ObservedGeneration != b.ObservedGeneration || !ptr.Equal(a.CollisionCount, b.CollisionCount) ||
		len(a.Conditions) != len(b.Conditions) || !maps.Equal(stored.Annotations, next.Annotations) {
		return false
	}
	for i := range a.Conditions {
		x, y := a.Conditions[i], b.Conditions[i]
		if x.Type != y.Type || x.Status != y.Status || x.Reason != y.Reason || x.Message != y.Message ||
			!x.LastTransitionTime.Equal(&y.LastTransitionTime) {
			return false
		}
	}
	return true
}
