package endpoints

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/controller/labelindex"
)

// syncService makes the Service's Endpoints object list its pods. A
// deleted Service's Endpoints object is deleted; Services of type
// ExternalName and Services without a selector are left alone.
func (c *Controller) syncService(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return controller.Permanent(err)
	}
	start := time.Now()
	defer func() {
		logger.V(4).Info("Finished syncing service endpoints", "service", klog.KRef(namespace, name), "startTime", time.Since(start))
	}()

	svc, err := c.services.Services(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		// The Service is gone (or never was: checkLeftoverEndpoints).
		err = c.client.CoreV1().Endpoints(namespace).Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		c.triggerTime.Delete(namespace, name)
		c.stale.forget(namespace, name)
		return nil
	}
	if err != nil {
		return err
	}
	if svc.Spec.Type == v1.ServiceTypeExternalName || svc.Spec.Selector == nil {
		return nil
	}
	logger.V(5).Info("About to update endpoints for service", "service", klog.KRef(namespace, name))
	pods, err := labelindex.Select[*v1.Pod](c.podIndex, namespace, labels.Set(svc.Spec.Selector).AsSelectorPreValidated())
	if err != nil {
		return err
	}
	// Computed on every sync, so that the tracker stays current even when
	// nothing is written.
	triggerTime := c.triggerTime.Compute(svc, pods)
	subsets := desiredSubsets(logger, svc, pods)

	current, err := c.endpoints.Endpoints(namespace).Get(name)
	switch {
	case apierrors.IsNotFound(err):
		current = &v1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: svc.Name, Labels: svc.Labels}}
	case err != nil:
		return err
	case c.stale.isStale(current):
		return staleCache(current.ResourceVersion, key)
	}
	create := current.ResourceVersion == ""
	if !create && upToDate(current, svc, subsets) {
		logger.V(5).Info("endpoints are equal, skipping update", "service", klog.KObj(svc))
		return nil
	}
	return c.write(ctx, logger, svc, current, desiredEndpoints(svc, current, subsets, triggerTime), create)
}

// upToDate reports whether the Endpoints object already shows subsets (in
// either packing: upstream's hash once changed), the Service's labels and
// a correct over-capacity annotation.
func upToDate(current *v1.Endpoints, svc *v1.Service, subsets []v1.EndpointSubset) bool {
	return (equalIgnoringResourceVersion(current.Subsets, subsets) ||
		equalIgnoringResourceVersion(repackSubsets(current.Subsets), subsets)) &&
		labelsCorrect(current.Labels, svc.Labels) &&
		capacityAnnotationCorrect(current.Annotations, current.Subsets)
}

// desiredEndpoints is current with the subsets (truncated at capacity),
// the Service's labels plus the headless and managed-by ones, and the
// trigger-time and over-capacity annotations.
func desiredEndpoints(svc *v1.Service, current *v1.Endpoints, subsets []v1.EndpointSubset, triggerTime time.Time) *v1.Endpoints {
	// The metadata only: the old subsets are replaced.
	e := &v1.Endpoints{TypeMeta: current.TypeMeta, ObjectMeta: *current.ObjectMeta.DeepCopy(), Subsets: subsets}
	if e.Annotations == nil {
		e.Annotations = map[string]string{}
	}
	if triggerTime.IsZero() {
		delete(e.Annotations, v1.EndpointsLastChangeTriggerTime)
	} else {
		e.Annotations[v1.EndpointsLastChangeTriggerTime] = triggerTime.UTC().Format(time.RFC3339Nano)
	}
	if truncateSubsets(e.Subsets) {
		e.Annotations[v1.EndpointsOverCapacity] = truncated
	} else {
		delete(e.Annotations, v1.EndpointsOverCapacity)
	}
	e.Labels = make(map[string]string, len(svc.Labels)+2)
	for k, v := range svc.Labels {
		e.Labels[k] = v
	}
	if svc.Spec.ClusterIP == v1.ClusterIPNone || svc.Spec.ClusterIP == "" {
		e.Labels[v1.IsHeadlessService] = ""
	} else {
		delete(e.Labels, v1.IsHeadlessService)
	}
	e.Labels[LabelManagedBy] = ControllerName
	return e
}

// write creates or updates the Endpoints object. A create refused because
// the namespace is terminating is dropped; other failures are Events on
// the object and retried. After an update that moved the resourceVersion,
// the old version marks the cache as stale until it has the new one.
func (c *Controller) write(ctx context.Context, logger klog.Logger, svc *v1.Service, current, desired *v1.Endpoints, create bool) error {
	logger.V(4).Info("Update endpoints", "service", klog.KObj(svc))
	var updated *v1.Endpoints
	var err error
	if create {
		_, err = c.client.CoreV1().Endpoints(svc.Namespace).Create(ctx, desired, metav1.CreateOptions{})
	} else {
		updated, err = c.client.CoreV1().Endpoints(svc.Namespace).Update(ctx, desired, metav1.UpdateOptions{})
	}
	if err != nil {
		if create && apierrors.IsForbidden(err) {
			logger.V(5).Info("Forbidden from creating endpoints", "error", err)
			if apierrors.HasStatusCause(err, v1.NamespaceTerminatingCause) {
				return nil
			}
		}
		if create {
			c.recorder.Eventf(desired, v1.EventTypeWarning, "FailedToCreateEndpoint", "Failed to create endpoint for service %v/%v: %v", svc.Namespace, svc.Name, err)
		} else {
			c.recorder.Eventf(desired, v1.EventTypeWarning, "FailedToUpdateEndpoint", "Failed to update endpoint %v/%v: %v", svc.Namespace, svc.Name, err)
		}
		return err
	}
	if updated != nil && updated.ResourceVersion != current.ResourceVersion {
		c.stale.mark(current)
	}
	c.spacer.Wrote(svc.Namespace + "/" + svc.Name)
	return nil
}

// ignoreResourceVersion compares object references without their
// resourceVersion (a pod's changes that do not touch its address).
var ignoreResourceVersion = conversion.EqualitiesOrDie(
	func(a, b v1.ObjectReference) bool {
		a.ResourceVersion, b.ResourceVersion = "", ""
		return a == b
	},
)

// equalIgnoringResourceVersion compares subsets semantically (nil and
// empty lists are equal), target references without resourceVersions.
func equalIgnoringResourceVersion(a, b []v1.EndpointSubset) bool {
	return ignoreResourceVersion.DeepEqual(a, b)
}

// labelsCorrect reports whether the Endpoints' labels are the Service's
// plus the managed-by label (and possibly the headless one).
func labelsCorrect(epLabels, svcLabels map[string]string) bool {
	if epLabels[LabelManagedBy] != ControllerName {
		return false
	}
	skipped := 0
	for k, v := range epLabels {
		if k == v1.IsHeadlessService || k == LabelManagedBy {
			skipped++
		} else if sv, ok := svcLabels[k]; !ok || sv != v {
			return false
		}
	}
	return len(svcLabels) == len(epLabels)-skipped
}
