package tainteviction

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// Upstream's Event reason and messages (the argument is namespace/name), the
// condition the pod gets before it is deleted, and the number of attempts.
const (
	eventReason        = "TaintManagerEviction"
	markingForDeletion = "Marking for deletion Pod %s"
	cancellingDeletion = "Cancelling deletion of Pod %s"

	conditionReason  = "DeletionByTaintManager"
	conditionMessage = "Taint manager: deleting due to NoExecute taint"

	evictionAttempts     = 5
	evictionAttemptPause = 10 * time.Millisecond
)

// scheduleEviction schedules the pod's eviction at the given time unless one
// is pending already, which keeps its deadline.
func (c *Controller) scheduleEviction(logger klog.Logger, ref cache.ObjectName, at time.Time) {
	if c.evictions.schedule(ref.String(), at) {
		logger.V(4).Info("Scheduled pod eviction", "pod", ref, "at", at)
	}
}

// cancelEviction cancels the pod's pending eviction, if any, and says so
// in an Event.
func (c *Controller) cancelEviction(logger klog.Logger, ref cache.ObjectName) {
	if c.evictions.cancel(ref.String()) {
		logger.V(2).Info("Cancelled pod eviction", "pod", ref)
		c.recordEvent(ref, cancellingDeletion)
	}
}

// runEviction is the eviction workers' sync: it evicts the pod if its
// eviction is due. Failures are logged and dropped, as upstream does after
// its attempts; the next change to the pod or its node decides again.
func (c *Controller) runEviction(ctx context.Context, key string) error {
	fireAt, due := c.evictions.start(key)
	if !due {
		return nil
	}
	defer c.evictions.finish(key)
	ref, err := cache.ParseObjectName(key)
	if err != nil {
		return err
	}
	logger := klog.FromContext(ctx)
	logger.Info("Deleting pod", "controller", c.name, "pod", ref)
	c.recordEvent(ref, markingForDeletion)
	deleted, err := c.evict(ctx, ref)
	if err != nil {
		logger.Error(err, "Failed to evict pod", "pod", ref)
		return nil
	}
	if deleted {
		podDeletionsTotal.Inc()
		podDeletionsLatency.Observe(c.clock.Since(fireAt).Seconds())
	}
	return nil
}

// evict sets the pod's DisruptionTarget condition and deletes it, trying up
// to evictionAttempts times. It reports false if the pod was gone already.
func (c *Controller) evict(ctx context.Context, ref cache.ObjectName) (bool, error) {
	var err error
	for i := 0; i < evictionAttempts; i++ {
		if i > 0 {
			select {
			case <-ctx.Done():
				return false, ctx.Err()
			case <-time.After(evictionAttemptPause):
			}
		}
		err = c.markAndDelete(ctx, ref)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err == nil {
			return true, nil
		}
	}
	return false, err
}

// markAndDelete reads the pod from the API server (its status must be
// current for the patch), adds the DisruptionTarget condition unless it is
// there already, and deletes the pod.
func (c *Controller) markAndDelete(ctx context.Context, ref cache.ObjectName) error {
	pods := c.client.CoreV1().Pods(ref.Namespace)
	pod, err := pods.Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if cond, changed := disruptionTarget(pod, metav1.NewTime(c.clock.Now())); changed {
		patch, err := conditionPatch(pod, cond)
		if err != nil {
			return err
		}
		if _, err := pods.Patch(ctx, ref.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
			return fmt.Errorf("adding condition %s to pod %s: %w", v1.DisruptionTarget, ref, err)
		}
	}
	return pods.Delete(ctx, ref.Name, metav1.DeleteOptions{})
}

// disruptionTarget returns the DisruptionTarget condition the pod must
// carry, and whether that differs from the one it has. A condition whose
// status does not change keeps its lastTransitionTime.
func disruptionTarget(pod *v1.Pod, now metav1.Time) (v1.PodCondition, bool) {
	want := v1.PodCondition{
		Type:               v1.DisruptionTarget,
		ObservedGeneration: pod.Generation,
		Status:             v1.ConditionTrue,
		LastTransitionTime: now,
		Reason:             conditionReason,
		Message:            conditionMessage,
	}
	for _, have := range pod.Status.Conditions {
		if have.Type != v1.DisruptionTarget {
			continue
		}
		if have.Status == want.Status {
			want.LastTransitionTime = have.LastTransitionTime
		}
		same := have.Status == want.Status && have.Reason == want.Reason && have.Message == want.Message &&
			have.LastProbeTime.Equal(&want.LastProbeTime)
		return want, !same
	}
	return want, true
}

// conditionPatch is the two-way strategic merge patch from the pod's status
// to that status with cond set in place (or appended), carrying the pod's UID
// as a precondition. Being computed from both, it orders the conditions
// ($setElementOrder) as the status update would: a patch of the one
// condition alone would put a new one first.
func conditionPatch(pod *v1.Pod, cond v1.PodCondition) ([]byte, error) {
	status := pod.Status.DeepCopy()
	i := 0
	for ; i < len(status.Conditions); i++ {
		if status.Conditions[i].Type == cond.Type {
			status.Conditions[i] = cond
			break
		}
	}
	if i == len(status.Conditions) {
		status.Conditions = append(status.Conditions, cond)
	}
	oldData, err := json.Marshal(v1.Pod{Status: pod.Status})
	if err != nil {
		return nil, err
	}
	newData, err := json.Marshal(v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: pod.UID}, Status: *status})
	if err != nil {
		return nil, err
	}
	return strategicpatch.CreateTwoWayMergePatch(oldData, newData, v1.Pod{})
}

// recordEvent records a TaintManagerEviction Event on the pod, referenced by
// name as upstream does (no UID).
func (c *Controller) recordEvent(ref cache.ObjectName, format string) {
	obj := &v1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: ref.Namespace, Name: ref.Name}
	c.recorder.Eventf(obj, v1.EventTypeNormal, eventReason, format, ref.String())
}
