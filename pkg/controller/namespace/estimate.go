package namespace

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// finalizerEstimateSeconds is how long upstream assumes finalizers on
// remaining content need before the namespace is checked again.
const finalizerEstimateSeconds = int64(15)

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// ResourcesRemainingError says that content is still terminating in the
// namespace; Estimate is the number of seconds until it is expected to be
// gone.
type ResourcesRemainingError struct {
	Estimate int64
}

func (e *ResourcesRemainingError) Error() string {
	return fmt.Sprintf("some content remains in the namespace, estimate %d seconds before it is removed", e.Estimate)
}

// requeueDelay is when a namespace with content remaining is synced again:
// half the estimate plus a second, as upstream does.
func requeueDelay(estimate int64) time.Duration {
	return time.Duration(estimate/2+1) * time.Second
}

// estimateGracefulTermination returns how many seconds the instances of gvr
// in ns may still need to terminate gracefully. Only pods have a graceful
// termination; once that much time has passed since the namespace's
// deletion the estimate is 0.
func (d *deleter) estimateGracefulTermination(ctx context.Context, gvr schema.GroupVersionResource, ns string, deletedAt metav1.Time) (int64, error) {
	if gvr.GroupResource() != podsGVR.GroupResource() {
		return 0, nil
	}
	pods, err := d.pods.Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	estimate := podsEstimate(pods.Items)
	if d.clock.Since(deletedAt.Time) >= time.Duration(estimate)*time.Second {
		return 0, nil
	}
	return estimate, nil
}

// podsEstimate is the longest termination grace period among pods that
// have not finished.
func podsEstimate(pods []v1.Pod) int64 {
	estimate := int64(0)
	for i := range pods {
		pod := &pods[i]
		if pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
			continue
		}
		if g := pod.Spec.TerminationGracePeriodSeconds; g != nil && *g > estimate {
			estimate = *g
		}
	}
	return estimate
}
