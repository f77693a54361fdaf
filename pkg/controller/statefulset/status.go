package statefulset

import (
	"context"
	"reflect"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
)

// Reasons of the Progressing condition of the Recreate strategy.
const (
	recreateInProgressReason = "RecreateInProgress"
	recreateCompletedReason  = "RecreateCompleted"
)

// countReplicas sets status's counters from the pods of lists: replicas
// (created), ready (Running and Ready), available (and ready for
// minReadySeconds), current and updated (created, not terminating, at the
// current or update revision).
func countReplicas(status *apps.StatefulSetStatus, minReadySeconds int32, current, update *apps.ControllerRevision, now time.Time, lists ...[]*v1.Pod) {
	status.Replicas, status.ReadyReplicas, status.AvailableReplicas = 0, 0, 0
	status.CurrentReplicas, status.UpdatedReplicas = 0, 0
	for _, pods := range lists {
		for _, pod := range pods {
			created := isCreated(pod)
			if created {
				status.Replicas++
			}
			if isRunningAndReady(pod) {
				status.ReadyReplicas++
				if isAvailable(pod, minReadySeconds, now) {
					status.AvailableReplicas++
				}
			}
			if created && !isTerminating(pod) {
				rev := podRevision(pod)
				if rev == current.Name {
					status.CurrentReplicas++
				}
				if rev == update.Name {
					status.UpdatedReplicas++
				}
			}
		}
	}
}

// completeUpdate makes the update revision current once every replica
// exists, is ready and is updated (and completes the Recreate strategy's
// Progressing condition).
func (c *Controller) completeUpdate(set *apps.StatefulSet, status *apps.StatefulSetStatus) {
	replicas := *set.Spec.Replicas
	if status.UpdatedReplicas != replicas || status.ReadyReplicas != replicas || status.Replicas != replicas {
		return
	}
	status.CurrentReplicas = status.UpdatedReplicas
	status.CurrentRevision = status.UpdateRevision
	if condition(status, apps.StatefulSetProgressing) != nil &&
		set.Spec.UpdateStrategy.Type == apps.RecreateStatefulSetStrategyType && c.features.recreate {
		setProgressingCondition(status, v1.ConditionFalse, recreateCompletedReason, "All pods recreated successfully")
	}
}

// statusChanged reports whether status differs from set's in what
// upstream compares (not collisionCount), or observes a newer generation.
func statusChanged(set *apps.StatefulSet, status *apps.StatefulSetStatus) bool {
	old := &set.Status
	return status.ObservedGeneration > old.ObservedGeneration ||
		status.Replicas != old.Replicas ||
		status.CurrentReplicas != old.CurrentReplicas ||
		status.ReadyReplicas != old.ReadyReplicas ||
		status.UpdatedReplicas != old.UpdatedReplicas ||
		status.CurrentRevision != old.CurrentRevision ||
		status.AvailableReplicas != old.AvailableReplicas ||
		status.UpdateRevision != old.UpdateRevision ||
		!reflect.DeepEqual(old.Conditions, status.Conditions)
}

// writeStatus completes an update if it is done and writes status if it
// changed, retrying conflicts on the cached set; a write held back
// (spacing.go) is left to a later sync, which it schedules. pods are the
// set's pods in the cache.
func (c *Controller) writeStatus(ctx context.Context, set *apps.StatefulSet, status *apps.StatefulSetStatus, pods []*v1.Pod) error {
	c.completeUpdate(set, status)
	if c.features.maxUnavailable {
		n, err := maxUnavailable(set)
		if err != nil {
			return err
		}
		maxUnavailableGauge.WithLabelValues(set.Namespace, set.Name, string(set.Spec.PodManagementPolicy)).Set(float64(n))
	}
	if !statusChanged(set, status) {
		return nil
	}
	if d := c.statusHold(set, status, pods); d > 0 {
		klog.FromContext(ctx).V(4).Info("Holding status write", "statefulSet", klog.KObj(set), "for", d)
		c.queue.AddAfter(setKey(set), d)
		return nil
	}
	toWrite := set.DeepCopy()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		toWrite.Status = *status
		updated, err := c.client.AppsV1().StatefulSets(toWrite.Namespace).UpdateStatus(ctx, toWrite, metav1.UpdateOptions{})
		if err == nil {
			c.recordWrite(updated, setResource, updated.ResourceVersion)
			c.statusSpacer.Wrote(setKey(set))
			return nil
		}
		if cached, getErr := c.setLister.StatefulSets(set.Namespace).Get(set.Name); getErr == nil {
			toWrite = cached.DeepCopy()
		} else {
			utilruntime.HandleErrorWithContext(ctx, nil, "Error getting updated StatefulSet from lister", "statefulSet", klog.KObj(set))
		}
		return err
	})
	if err == nil {
		klog.FromContext(ctx).V(4).Info("Updated status", "statefulSet", klog.KObj(set), "replicas", status.Replicas,
			"readyReplicas", status.ReadyReplicas, "currentReplicas", status.CurrentReplicas, "updatedReplicas", status.UpdatedReplicas)
	}
	return err
}

// condition returns status's condition of type t, or nil.
func condition(status *apps.StatefulSetStatus, t apps.StatefulSetConditionType) *apps.StatefulSetCondition {
	for i := range status.Conditions {
		if status.Conditions[i].Type == t {
			return &status.Conditions[i]
		}
	}
	return nil
}

// setProgressingCondition sets the Progressing condition, keeping its
// transition time unless its status changes.
func setProgressingCondition(status *apps.StatefulSetStatus, s v1.ConditionStatus, reason, message string) {
	cur := condition(status, apps.StatefulSetProgressing)
	if cur == nil {
		status.Conditions = append(status.Conditions, apps.StatefulSetCondition{
			Type: apps.StatefulSetProgressing, Status: s, LastTransitionTime: metav1.Now(), Reason: reason, Message: message,
		})
		return
	}
	if cur.Status == s && cur.Reason == reason && cur.Message == message {
		return
	}
	if cur.Status != s {
		cur.LastTransitionTime = metav1.Now()
	}
	cur.Status, cur.Reason, cur.Message = s, reason, message
}
