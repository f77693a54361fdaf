package resourcepoolstatusrequest

import (
	"context"
	"fmt"
	"time"

	resourcev1alpha3 "k8s.io/api/resource/v1alpha3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// incompleteError is the retry of a request that found a pool whose
// driver has not published all its slices yet. After maxRetries the
// request is dropped without a status, as upstream does, until it
// changes again or expires.
type incompleteError struct{ request string }

func (e incompleteError) Error() string {
	return fmt.Sprintf("request %s: incomplete pools detected, requeueing", e.request)
}

// ExpectedRetry: the driver is expected to publish the missing slices.
func (incompleteError) ExpectedRetry() {}

// sync answers a request that has no status yet: it computes the status
// from the caches and writes it once. A request whose status is set is
// never recomputed.
func (c *Controller) sync(ctx context.Context, name string) error {
	logger := klog.FromContext(ctx)
	start := c.clock.Now()
	request, err := c.requests.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if request.Status != nil {
		logger.V(4).Info("Request already processed, skipping", "request", name)
		return nil
	}
	driver := request.Spec.Driver
	logger.V(2).Info("Processing ResourcePoolStatusRequest", "request", name, "driver", driver)

	status := c.calculate(ctx, request)
	for _, p := range status.Pools {
		if p.ValidationError != nil && isIncomplete(*p.ValidationError) {
			return incompleteError{request: name}
		}
	}
	clone := request.DeepCopy()
	clone.Status = &status
	_, err = c.client.ResourceV1alpha3().ResourcePoolStatusRequests().UpdateStatus(ctx, clone, metav1.UpdateOptions{})
	requestDuration.WithLabelValues(driver).Observe(c.clock.Since(start).Seconds())
	requestsProcessed.WithLabelValues(driver).Inc()
	if err != nil {
		requestErrors.WithLabelValues(driver).Inc()
		return fmt.Errorf("failed to update status for request %s: %w", name, err)
	}
	logger.V(2).Info("Successfully processed ResourcePoolStatusRequest", "request", name, "poolCount", len(status.Pools))
	return nil
}

// calculate computes the request's status from the caches: the matching
// pools, sorted by driver and pool name and cut to spec.limit, with a
// Complete condition; or, if a cache cannot be listed, a Failed one.
func (c *Controller) calculate(ctx context.Context, request *resourcev1alpha3.ResourcePoolStatusRequest) resourcev1alpha3.ResourcePoolStatusRequestStatus {
	in, err := c.gather(request)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Failed to gather pool data", "request", request.Name)
		return failedStatus(err.Error(), c.clock.Now())
	}
	pools := in.poolStatuses(request.Spec.DefaultPartitionTypeAttribute)
	count := int32(len(pools))
	limit := resourcev1alpha3.ResourcePoolStatusRequestLimitDefault
	if request.Spec.Limit != nil {
		limit = *request.Spec.Limit
	}
	if count > limit {
		pools = pools[:limit]
	}
	flagged := 0
	for _, p := range pools {
		if p.ValidationError != nil {
			flagged++
		}
	}
	message := fmt.Sprintf("Calculated status for %d pools", len(pools))
	if flagged > 0 {
		message = fmt.Sprintf("Calculated status for %d pools (%d incomplete)", len(pools), flagged)
	}
	klog.FromContext(ctx).V(4).Info("Calculated pool status", "request", request.Name, "poolCount", count, "returned", len(pools))
	return resourcev1alpha3.ResourcePoolStatusRequestStatus{
		PoolCount: &count,
		Pools:     pools,
		Conditions: []metav1.Condition{{
			Type:               resourcev1alpha3.ResourcePoolStatusRequestConditionComplete,
			Status:             metav1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(c.clock.Now()),
			Reason:             "CalculationComplete",
			Message:            message,
		}},
	}
}

// failedStatus is the status of a request that could not be computed.
func failedStatus(message string, now time.Time) resourcev1alpha3.ResourcePoolStatusRequestStatus {
	zero := int32(0)
	return resourcev1alpha3.ResourcePoolStatusRequestStatus{
		PoolCount: &zero,
		Conditions: []metav1.Condition{{
			Type:               resourcev1alpha3.ResourcePoolStatusRequestConditionFailed,
			Status:             metav1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(now),
			Reason:             "CalculationFailed",
			Message:            message,
		}},
	}
}
