package endpointslice

import (
	"context"
	"errors"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/controller/endpointutil"
	"github.com/kcm-dev/kcm/internal/controller/labelindex"
)

// errStaleCache says the slice cache has not caught up with the
// controller's own writes; the Service is retried with backoff.
const errStaleCache = controller.StaleCache("EndpointSlice informer cache is out of date")

// sync reconciles one Service's slices and counts the outcome.
func (c *Controller) sync(ctx context.Context, key string) error {
	err := c.syncService(ctx, key)
	result := "success"
	if errors.Is(err, errStaleCache) {
		result = "stale"
	} else if err != nil {
		result = "error"
	}
	syncs.WithLabelValues(result).Inc()
	return err
}

// syncService reads the Service, its pods and its slices from the caches
// and reconciles the slices. Services of type ExternalName and Services
// without a selector get no slices from this controller (the latter's are
// written by their users, or mirrored from their Endpoints).
func (c *Controller) syncService(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return controller.Permanent(err)
	}
	svc, err := c.services.Services(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		c.triggerTime.Delete(namespace, name)
		c.reconciler.metrics.deleteService(types.NamespacedName{Namespace: namespace, Name: name})
		c.tracker.DeleteService(namespace, name)
		return nil
	}
	if err != nil {
		return err
	}
	if svc.Spec.Type == v1.ServiceTypeExternalName || svc.Spec.Selector == nil {
		return nil
	}
	logger.V(5).Info("About to update endpoint slices for service", "key", key)

	pods, err := labelindex.Select[*v1.Pod](c.podIndex, namespace, labels.Set(svc.Spec.Selector).AsSelectorPreValidated())
	if err != nil {
		c.recorder.Eventf(svc, v1.EventTypeWarning, "FailedToListPods", "Error listing Pods for Service %s/%s: %v", namespace, name, err)
		return err
	}
	slices, err := endpointutil.SlicesOfService(c.sliceIndex, namespace, name, ManagedBy)
	if err != nil {
		c.recorder.Eventf(svc, v1.EventTypeWarning, "FailedToListEndpointSlices", "Error listing Endpoint Slices for Service %s/%s: %v", namespace, name, err)
		return err
	}
	slices = withoutDeleting(slices)
	if c.tracker.Stale(namespace, name, slices) {
		return errStaleCache
	}
	// Computed on every sync, so that the tracker stays current even when
	// nothing is written.
	triggerTime := c.triggerTime.Compute(svc, pods)
	if err := c.reconciler.reconcile(ctx, logger, svc, pods, slices, triggerTime); err != nil {
		c.recorder.Eventf(svc, v1.EventTypeWarning, "FailedToUpdateEndpointSlices", "Error updating Endpoint Slices for Service %s/%s: %v", namespace, name, err)
		return err
	}
	return nil
}

// withoutDeleting drops slices being deleted, which the controller neither
// updates nor counts.
func withoutDeleting(slices []*discovery.EndpointSlice) []*discovery.EndpointSlice {
	out := slices[:0]
	for _, s := range slices {
		if s.DeletionTimestamp == nil {
			out = append(out, s)
		}
	}
	return out
}
