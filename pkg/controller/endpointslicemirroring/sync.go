package endpointslicemirroring

import (
	"context"
	"fmt"
	"time"

	discovery "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/controller/endpointutil"
)

// errStaleCache is returned, and the key retried, while the slice cache
// has not yet seen the controller's own writes.
const errStaleCache = controller.StaleCache("EndpointSlice informer cache is out of date")

// syncEndpoints brings the mirrored slices of one Endpoints key in line:
// deleted when the Endpoints, or its selector-less Service, is gone or not
// to be mirrored; otherwise created, updated or deleted to hold the
// Endpoints' addresses.
func (c *Controller) syncEndpoints(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	start := time.Now()
	defer func() {
		syncDuration.WithLabelValues().Observe(float64(time.Since(start).Milliseconds()) / 1000)
		logger.V(4).Info("Finished syncing EndpointSlices for Endpoints", "key", key, "elapsedTime", time.Since(start))
	}()

	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	nn := types.NamespacedName{Namespace: namespace, Name: name}
	ep, err := c.endpointsLister.Endpoints(namespace).Get(name)
	switch {
	case apierrors.IsNotFound(err):
		logger.V(4).Info("Endpoints not found, cleaning up any mirrored EndpointSlices", "endpoints", klog.KRef(namespace, name))
		return c.deleteMirroredSlices(ctx, nn)
	case err != nil:
		return err
	}
	if !shouldMirror(ep) {
		logger.V(4).Info("Endpoints should not be mirrored, cleaning up any mirrored EndpointSlices", "endpoints", klog.KRef(namespace, name))
		return c.deleteMirroredSlices(ctx, nn)
	}
	svc, err := c.serviceLister.Services(namespace).Get(name)
	switch {
	case apierrors.IsNotFound(err):
		logger.V(4).Info("Service not found, cleaning up any mirrored EndpointSlices", "service", klog.KRef(namespace, name))
		return c.deleteMirroredSlices(ctx, nn)
	case err != nil:
		return err
	}
	if svc.Spec.Selector != nil {
		logger.V(4).Info("Service now has selector, cleaning up any mirrored EndpointSlices", "service", klog.KRef(namespace, name))
		return c.deleteMirroredSlices(ctx, nn)
	}

	slices, err := c.mirroredSlices(nn)
	if err != nil {
		return err
	}
	if c.tracker.Stale(nn.Namespace, nn.Name, slices) {
		return errStaleCache
	}
	return c.reconcile(ctx, ep, slices)
}

// mirroredSlices lists the cached slices this controller manages for the
// Endpoints named nn.
func (c *Controller) mirroredSlices(nn types.NamespacedName) ([]*discovery.EndpointSlice, error) {
	return endpointutil.SlicesOfService(c.sliceIndexer, nn.Namespace, nn.Name, ControllerName)
}

// deleteMirroredSlices deletes every slice mirrored for nn and forgets
// them. A slice already gone counts as deleted.
func (c *Controller) deleteMirroredSlices(ctx context.Context, nn types.NamespacedName) error {
	c.tracker.DeleteService(nn.Namespace, nn.Name)
	slices, err := c.mirroredSlices(nn)
	if err != nil {
		return err
	}
	c.metrics.deleteEndpoints(nn)
	var errs []error
	for _, s := range slices {
		if err := c.deleteSlice(ctx, s); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("error(s) deleting %d/%d EndpointSlices for %s/%s Endpoints, including: %w",
			len(errs), len(slices), nn.Namespace, nn.Name, errs[0])
	}
	return nil
}
