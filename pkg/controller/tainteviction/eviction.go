package tainteviction

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller/podcontrol"
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
	patch, err := disruptionTargetPatch(pod, metav1.NewTime(c.clock.Now()))
	if err != nil {
		return err
	}
	if patch != nil {
		if _, err := pods.Patch(ctx, ref.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
			return fmt.Errorf("adding condition %s to pod %s: %w", v1.DisruptionTarget, ref, err)
		}
	}
	return pods.Delete(ctx, ref.Name, metav1.DeleteOptions{})
}

// disruptionTargetPatch is the status patch that sets the pod's
// DisruptionTarget condition as upstream does (in place or appended; a
// condition whose status stays keeps its lastTransitionTime), or nil when
// the pod carries it already (observedGeneration aside, as upstream).
func disruptionTargetPatch(pod *v1.Pod, now metav1.Time) ([]byte, error) {
	status := pod.Status.DeepCopy()
	if !podcontrol.SetCondition(status, v1.PodCondition{
		Type:               v1.DisruptionTarget,
		ObservedGeneration: pod.Generation,
		Status:             v1.ConditionTrue,
		Reason:             conditionReason,
		Message:            conditionMessage,
	}, now) {
		return nil, nil
	}
	return podcontrol.StatusPatch(pod, status)
}

// recordEvent records a TaintManagerEviction Event on the pod, referenced by
// name as upstream does (no UID).
func (c *Controller) recordEvent(ref cache.ObjectName, format string) {
	obj := &v1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: ref.Namespace, Name: ref.Name}
	c.recorder.Eventf(obj, v1.EventTypeNormal, eventReason, format, ref.String())
}
