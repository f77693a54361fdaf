package endpointslicemirroring

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// apply makes the planned writes: creates (none while the Endpoints is
// being deleted), then updates, then deletes, recording each in the
// tracker. The first failure ends the sync, to be retried.
func (c *Controller) apply(ctx context.Context, ep *v1.Endpoints, p plan) error {
	client := c.client.DiscoveryV1().EndpointSlices(ep.Namespace)
	if ep.DeletionTimestamp == nil {
		for _, s := range p.create {
			created, err := client.Create(ctx, s, metav1.CreateOptions{})
			if err != nil {
				// Creates keep failing in a terminating namespace: drop the key.
				if apierrors.HasStatusCause(err, v1.NamespaceTerminatingCause) {
					return nil
				}
				return fmt.Errorf("failed to create EndpointSlice for Endpoints %s/%s: %w", ep.Namespace, ep.Name, err)
			}
			c.tracker.Update(created)
			sliceChanges.WithLabelValues("create").Inc()
		}
	}
	for _, s := range p.update {
		updated, err := client.Update(ctx, s, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("failed to update %s EndpointSlice for Endpoints %s/%s: %w", s.Name, ep.Namespace, ep.Name, err)
		}
		c.tracker.Update(updated)
		sliceChanges.WithLabelValues("update").Inc()
	}
	for _, s := range p.delete {
		if err := c.deleteSlice(ctx, s); err != nil {
			return fmt.Errorf("failed to delete %s EndpointSlice for Endpoints %s/%s: %w", s.Name, ep.Namespace, ep.Name, err)
		}
		c.tracker.ExpectDeletion(s)
		sliceChanges.WithLabelValues("delete").Inc()
	}
	return nil
}

// deleteSlice deletes a slice; one already gone is no error.
func (c *Controller) deleteSlice(ctx context.Context, s *discovery.EndpointSlice) error {
	err := c.client.DiscoveryV1().EndpointSlices(s.Namespace).Delete(ctx, s.Name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		klog.FromContext(ctx).V(4).Info("EndpointSlice already deleted", "endpointSlice", klog.KObj(s))
		return nil
	}
	return err
}
