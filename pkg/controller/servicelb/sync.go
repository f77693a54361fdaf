package servicelb

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"
)

// sync reconciles one Service with its load balancer.
func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	svc, err := c.services.Services(namespace).Get(name)
	switch {
	case apierrors.IsNotFound(err):
		return c.syncDeleted(ctx, key)
	case err != nil:
		return err
	}
	svc = svc.DeepCopy()

	c.mu.Lock()
	prev := c.known[key]
	c.mu.Unlock()
	if prev != nil && prev.UID != svc.UID {
		// Deleted and recreated under the same name between two syncs.
		if err := c.deleteLoadBalancer(ctx, prev); err != nil {
			return err
		}
	}
	c.mu.Lock()
	c.known[key] = svc
	c.mu.Unlock()

	deleted, err := c.reconcile(ctx, key, svc)
	if err != nil {
		c.recorder.Eventf(svc, v1.EventTypeWarning, "SyncLoadBalancerFailed", "Error syncing load balancer: %v", err)
		return err
	}
	if deleted {
		c.forget(key)
	}
	return nil
}

// syncDeleted cleans up after a Service deleted without the finalizer
// (created before the controller saw it, or the finalizer removed by hand).
func (c *Controller) syncDeleted(ctx context.Context, key string) error {
	c.mu.Lock()
	prev := c.known[key]
	c.mu.Unlock()
	if prev == nil {
		return nil
	}
	klog.FromContext(ctx).V(2).Info("Service has been deleted, cleaning up its load balancer", "service", key)
	if err := c.deleteLoadBalancer(ctx, prev); err != nil {
		return err
	}
	c.forget(key)
	return nil
}

func (c *Controller) forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.known, key)
	delete(c.lastNodes, key)
}

// reconcile ensures or deletes the Service's load balancer, then writes
// its status; it reports whether the load balancer is gone.
func (c *Controller) reconcile(ctx context.Context, key string, svc *v1.Service) (deleted bool, err error) {
	logger := klog.FromContext(ctx)
	previous := svc.Status.LoadBalancer.DeepCopy()
	var status *v1.LoadBalancerStatus

	if !wantsLoadBalancer(svc) || needsCleanup(svc) {
		deleted, status = true, &v1.LoadBalancerStatus{}
		_, exists, err := c.balancer.GetLoadBalancer(ctx, c.clusterName, svc)
		if err != nil {
			return deleted, fmt.Errorf("failed to check if load balancer exists before cleanup: %v", err)
		}
		if exists {
			logger.V(2).Info("Deleting existing load balancer", "service", key)
			c.recorder.Event(svc, v1.EventTypeNormal, "DeletingLoadBalancer", "Deleting load balancer")
			if err := c.balancer.EnsureLoadBalancerDeleted(ctx, c.clusterName, svc); err != nil && err != cloudprovider.ImplementedElsewhere {
				return deleted, fmt.Errorf("failed to delete load balancer: %v", err)
			}
		}
		if err := c.removeFinalizer(ctx, svc); err != nil {
			return deleted, fmt.Errorf("failed to remove load balancer cleanup finalizer: %v", err)
		}
		c.recorder.Event(svc, v1.EventTypeNormal, "DeletedLoadBalancer", "Deleted load balancer")
	} else {
		logger.V(2).Info("Ensuring load balancer", "service", key)
		c.recorder.Event(svc, v1.EventTypeNormal, "EnsuringLoadBalancer", "Ensuring load balancer")
		if err := c.addFinalizer(ctx, svc); err != nil {
			return deleted, fmt.Errorf("failed to add load balancer cleanup finalizer: %v", err)
		}
		status, err = c.ensure(ctx, key, svc)
		if err == cloudprovider.ImplementedElsewhere {
			logger.V(4).Info("Load balancer implemented by a different controller, ignoring", "service", key)
			return deleted, nil
		}
		if err != nil {
			return deleted, fmt.Errorf("failed to ensure load balancer: %w", err)
		}
		if status == nil {
			return deleted, fmt.Errorf("service status returned by EnsureLoadBalancer is nil")
		}
		c.recorder.Event(svc, v1.EventTypeNormal, "EnsuredLoadBalancer", "Ensured load balancer")
	}

	if apiequality.Semantic.DeepEqual(previous.Ingress, status.Ingress) {
		return deleted, nil
	}
	if err := c.patchStatus(ctx, svc, status); err != nil && !apierrors.IsNotFound(err) {
		return deleted, fmt.Errorf("failed to update load balancer status: %v", err)
	}
	return deleted, nil
}

func (c *Controller) ensure(ctx context.Context, key string, svc *v1.Service) (*v1.LoadBalancerStatus, error) {
	nodes, err := c.nodeSet()
	if err != nil {
		return nil, err
	}
	if len(nodes) == 0 {
		c.recorder.Event(svc, v1.EventTypeWarning, "UnAvailableLoadBalancer", "There are no available nodes for LoadBalancer")
	}
	c.setLastNodes(key, nodes)
	return c.balancer.EnsureLoadBalancer(ctx, c.clusterName, svc, nodes)
}

// deleteLoadBalancer deletes the load balancer of a Service that is gone
// (or was replaced by another of the same name).
func (c *Controller) deleteLoadBalancer(ctx context.Context, svc *v1.Service) error {
	if !wantsLoadBalancer(svc) {
		return nil
	}
	c.recorder.Event(svc, v1.EventTypeNormal, "DeletingLoadBalancer", "Deleting load balancer")
	if err := c.balancer.EnsureLoadBalancerDeleted(ctx, c.clusterName, svc); err != nil {
		c.recorder.Eventf(svc, v1.EventTypeWarning, "DeleteLoadBalancerFailed", "Error deleting load balancer: %v", err)
		return err
	}
	c.recorder.Event(svc, v1.EventTypeNormal, "DeletedLoadBalancer", "Deleted load balancer")
	return nil
}
