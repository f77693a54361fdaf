package resourcepoolstatusrequest

import (
	"context"
	"time"

	resourcev1alpha3 "k8s.io/api/resource/v1alpha3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"
)

// Upstream's retention of requests.
const (
	// cleanupInterval is how often expired requests are looked for.
	cleanupInterval = 10 * time.Minute
	// completedTTL is how long a request is kept after its Complete or
	// Failed condition was set.
	completedTTL = time.Hour
	// pendingTTL is how long a request that never got a status is kept.
	pendingTTL = 24 * time.Hour
)

// cleanup deletes the cached requests that expired by the controller's
// clock, each with its UID as a precondition so that a re-created request
// of the same name stays.
func (c *Controller) cleanup(ctx context.Context) {
	logger := klog.FromContext(ctx)
	now := c.clock.Now()
	requests, err := c.requests.List(labels.Everything())
	if err != nil {
		logger.Error(err, "Failed to list ResourcePoolStatusRequests for cleanup")
		return
	}
	deleted := 0
	for _, r := range requests {
		if !expired(r, now) {
			continue
		}
		err := c.client.ResourceV1alpha3().ResourcePoolStatusRequests().Delete(ctx, r.Name,
			metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &r.UID}})
		if err != nil {
			if !apierrors.IsNotFound(err) {
				logger.Error(err, "Failed to delete expired ResourcePoolStatusRequest", "request", r.Name)
			}
			continue
		}
		deleted++
		logger.V(2).Info("Deleted expired ResourcePoolStatusRequest", "request", r.Name)
	}
	if deleted > 0 {
		logger.Info("Cleanup completed", "deletedCount", deleted)
	}
}

// expired reports whether the request outlived its TTL at now: completedTTL
// from its first Complete or Failed condition's transition (from its
// creation if it has a status without one), pendingTTL from its creation
// if it has no status. A zero timestamp never expires.
func expired(r *resourcev1alpha3.ResourcePoolStatusRequest, now time.Time) bool {
	olderThan := func(t metav1.Time, ttl time.Duration) bool {
		return !t.IsZero() && now.Sub(t.Time) > ttl
	}
	if r.Status == nil {
		return olderThan(r.CreationTimestamp, pendingTTL)
	}
	for _, cond := range r.Status.Conditions {
		if cond.Type == resourcev1alpha3.ResourcePoolStatusRequestConditionComplete ||
			cond.Type == resourcev1alpha3.ResourcePoolStatusRequestConditionFailed {
			return olderThan(cond.LastTransitionTime, completedTTL)
		}
	}
	return olderThan(r.CreationTimestamp, completedTTL)
}
