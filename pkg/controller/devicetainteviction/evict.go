package devicetainteviction

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller/podcontrol"
)

// Upstream's Event reason and messages, and the condition a pod gets
// before it is deleted.
const (
	eventReason        = "DeviceTaintManagerEviction"
	markingForDeletion = "Marking for deletion"
	cancellingDeletion = "Cancelling deletion"

	conditionReason  = "DeletionByDeviceTaintManager"
	conditionMessage = "Device Taint manager: deleting due to NoExecute taint"
)

// syncPod decides whether the pod has to be evicted and when; it evicts
// it when that time has come, comes back then if it has not, and cancels
// a pending eviction the pod no longer needs.
func (c *Controller) syncPod(ctx context.Context, namespace, name string) error {
	logger := klog.LoggerWithValues(klog.FromContext(ctx), "pod", klog.KRef(namespace, name))
	key := namespace + "/" + name
	pod, err := c.pods.Pods(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		// Gone: nothing left to do, and no Event about it.
		c.forget(key)
		return nil
	}
	if err != nil {
		return err
	}
	if c.wasEvicted(pod.UID) {
		c.forget(key)
		return nil
	}
	e, err := c.newEvaluator()
	if err != nil {
		return err
	}
	ev, err := e.podEviction(pod)
	if err != nil {
		return err
	}
	if ev == nil {
		if p, ok := c.cancel(key, pod.UID); ok {
			logger.V(3).Info("Canceled pod eviction", "wasDue", p.when)
			c.recordEvent(pod.Namespace, pod.Name, pod.UID, cancellingDeletion)
		}
		return nil
	}
	c.setPending(key, pendingEviction{uid: pod.UID, when: ev.when})
	// The rules' status reports the pods pending eviction; give more
	// changes a moment to come in before counting.
	c.refreshRules(ev)
	if wait := ev.when.Sub(c.clock.Now()); wait > 0 {
		logger.V(3).Info("Pod eviction scheduled", "eviction", ev, "delay", wait)
		c.queue.AddAfter(podKeyPrefix+key, wait)
		return nil
	}
	return c.evict(ctx, logger, pod, ev)
}

// evict adds the DisruptionTarget condition to the pod and deletes it,
// then counts the eviction. A pod already terminating counts without
// further writes, as upstream; one already gone does not count.
func (c *Controller) evict(ctx context.Context, logger klog.Logger, pod *v1.Pod, ev *eviction) error {
	if pod.DeletionTimestamp == nil {
		err := c.markAndDelete(ctx, pod.Namespace, pod.Name, pod.UID)
		if apierrors.IsNotFound(err) {
			c.done(pod)
			return nil
		}
		if err != nil {
			return err
		}
	}
	c.done(pod)
	latency := c.clock.Since(ev.when)
	logger.V(2).Info("Evicted pod by deleting it", "latency", latency, "reason", ev)
	podDeletionsTotal.Inc()
	podDeletionsLatency.Observe(latency.Seconds())
	c.mu.Lock()
	for _, r := range ev.reasons {
		if r.rule != nil {
			c.ruleEvictions[r.rule.UID]++
		}
	}
	c.mu.Unlock()
	// Not at once: the rule's status is counted from the informers,
	// which have yet to see the deletion.
	c.refreshRules(ev)
	return nil
}

// markAndDelete reads the pod from the API server, adds the
// DisruptionTarget condition unless it is there already, and deletes the
// pod, with its UID as a precondition. A pod replaced by another of the
// same name is NotFound; one already terminating is left alone.
func (c *Controller) markAndDelete(ctx context.Context, namespace, name string, uid types.UID) error {
	pods := c.client.CoreV1().Pods(namespace)
	pod, err := pods.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if pod.UID != uid {
		return apierrors.NewNotFound(v1.Resource("pods"), name)
	}
	if pod.DeletionTimestamp != nil {
		return nil
	}
	c.recordEvent(namespace, name, uid, markingForDeletion)
	status := pod.Status.DeepCopy()
	if podcontrol.SetCondition(status, v1.PodCondition{
		Type:    v1.DisruptionTarget,
		Status:  v1.ConditionTrue,
		Reason:  conditionReason,
		Message: conditionMessage,
	}, metav1.NewTime(c.clock.Now())) {
		patch, err := podcontrol.StatusPatch(pod, status)
		if err != nil {
			return err
		}
		if patch != nil {
			if _, err := pods.Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
				return fmt.Errorf("adding condition %s to pod %s/%s: %w", v1.DisruptionTarget, namespace, name, err)
			}
		}
	}
	return pods.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
}

// refreshRules schedules a status update of each DeviceTaintRule among
// the eviction's reasons, ruleStatusPeriod from now.
func (c *Controller) refreshRules(ev *eviction) {
	for _, r := range ev.reasons {
		if r.rule != nil {
			c.enqueueRule(r.rule.Name, ruleStatusPeriod)
		}
	}
}

// recordEvent records a DeviceTaintManagerEviction Event on the pod,
// referenced with its UID as upstream does.
func (c *Controller) recordEvent(namespace, name string, uid types.UID, message string) {
	ref := &v1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: namespace, Name: name, UID: uid}
	c.recorder.Event(ref, v1.EventTypeNormal, eventReason, message)
}

// setPending records the pod's eviction as decided and not done.
func (c *Controller) setPending(key string, p pendingEviction) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending[key] = p
}

// cancel drops the pod's pending eviction and returns it if it was this
// pod's (not an earlier pod's of the same name).
func (c *Controller) cancel(key string, uid types.UID) (pendingEviction, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.pending[key]
	delete(c.pending, key)
	return p, ok && p.uid == uid
}

// forget drops the pending eviction of a pod that is gone or evicted.
func (c *Controller) forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pending, key)
}

// done records that the pod has been evicted.
func (c *Controller) done(pod *v1.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pending, pod.Namespace+"/"+pod.Name)
	c.evicted.Add(pod.UID, nil)
}

// wasEvicted reports whether this controller evicted the pod.
func (c *Controller) wasEvicted(uid types.UID) bool {
	_, ok := c.evicted.Get(uid)
	return ok
}
