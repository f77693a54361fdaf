package podautoscaler

import (
	"context"
	"errors"
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// sync reconciles one HPA and, unless it is gone, puts its key back for
// the next sync period, whatever the outcome (the worker loop's retry of
// an error waits the same period).
func (c *Controller) sync(ctx context.Context, key string) error {
	deleted, err := c.syncKey(ctx, key)
	if !deleted {
		c.queue.AddRateLimited(key)
	}
	return err
}

func (c *Controller) syncKey(ctx context.Context, key string) (deleted bool, err error) {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return true, err
	}
	nn := types.NamespacedName{Namespace: namespace, Name: name}
	if err := c.consistency.EnsureReady(nn); err != nil {
		var stale *staleError
		if errors.As(err, &stale) {
			observeStaleSkip(stale.Resource)
		}
		return false, err
	}
	hpa, err := c.hpaLister.HorizontalPodAutoscalers(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		c.consistency.Clear(nn, "")
		klog.FromContext(ctx).Info("Horizontal Pod Autoscaler has been deleted", "HPA", klog.KRef(namespace, name))
		c.history.forget(key)
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return false, c.reconcile(ctx, hpa, key)
}

// reconcile is one sync of an existing HPA: read the target's scale,
// decide the desired count, scale, write the status. The cached hpa is
// not modified.
func (c *Controller) reconcile(ctx context.Context, cached *autoscalingv2.HorizontalPodAutoscaler, key string) (err error) {
	action := actionNone
	start := c.clock.Now()
	defer func() { observeReconciliation(action, err, c.clock.Since(start)) }()

	hpa := cached.DeepCopy()
	oldStatus := hpa.Status.DeepCopy()
	s := &syncState{hpa: hpa, key: key, oldStatus: oldStatus,
		reference: fmt.Sprintf("%s/%s/%s", hpa.Spec.ScaleTargetRef.Kind, hpa.Namespace, hpa.Spec.ScaleTargetRef.Name)}

	if err := c.readScale(ctx, s); err != nil {
		return err
	}
	c.history.recordInitial(key, s.current, c.clock.Now())
	retErr, err := c.decide(ctx, s)
	if err != nil {
		return err
	}
	if s.rescale {
		if err := c.rescale(ctx, s); err != nil {
			return err
		}
		action = actionScaleDown
		if s.desired > s.current {
			action = actionScaleUp
		}
	} else {
		klog.FromContext(ctx).V(4).Info("Decided not to scale", "scaleTarget", s.reference, "desiredReplicas", s.desired, "lastScaleTime", lastScaleTime(hpa))
		s.desired = s.current
	}
	c.setStatus(hpa, s.current, s.desired, s.metricStatuses, s.rescale)
	observeDesiredReplicas(hpa.Namespace, hpa.Name, s.desired)
	if err := c.updateStatusIfNeeded(ctx, oldStatus, hpa); err != nil {
		return err
	}
	return retErr
}

func lastScaleTime(hpa *autoscalingv2.HorizontalPodAutoscaler) string {
	if hpa.Status.LastScaleTime == nil {
		return ""
	}
	return hpa.Status.LastScaleTime.String()
}
