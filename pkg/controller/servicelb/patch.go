package servicelb

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/klog/v2"
)

func (c *Controller) addFinalizer(ctx context.Context, svc *v1.Service) error {
	if hasFinalizer(svc) {
		return nil
	}
	updated := svc.DeepCopy()
	updated.Finalizers = append(updated.Finalizers, Finalizer)
	klog.FromContext(ctx).V(2).Info("Adding finalizer to service", "service", klog.KObj(svc))
	return c.patch(ctx, svc, updated)
}

func (c *Controller) removeFinalizer(ctx context.Context, svc *v1.Service) error {
	if !hasFinalizer(svc) {
		return nil
	}
	updated := svc.DeepCopy()
	updated.Finalizers = slices.DeleteFunc(updated.Finalizers, func(f string) bool { return f == Finalizer })
	klog.FromContext(ctx).V(2).Info("Removing finalizer from service", "service", klog.KObj(svc))
	return c.patch(ctx, svc, updated)
}

func (c *Controller) patchStatus(ctx context.Context, svc *v1.Service, status *v1.LoadBalancerStatus) error {
	updated := svc.DeepCopy()
	updated.Status.LoadBalancer = *status
	klog.FromContext(ctx).V(2).Info("Patching status for service", "service", klog.KObj(svc))
	return c.patch(ctx, svc, updated)
}

// patch writes the difference between old and updated as upstream does: a
// two-way strategic merge patch on the status subresource, which takes
// status and metadata (the finalizer) but not spec.
func (c *Controller) patch(ctx context.Context, old, updated *v1.Service) error {
	oldData, err := json.Marshal(old)
	if err != nil {
		return fmt.Errorf("failed to marshal service %s/%s: %w", old.Namespace, old.Name, err)
	}
	newData, err := json.Marshal(updated)
	if err != nil {
		return fmt.Errorf("failed to marshal service %s/%s: %w", old.Namespace, old.Name, err)
	}
	data, err := strategicpatch.CreateTwoWayMergePatch(oldData, newData, v1.Service{})
	if err != nil {
		return fmt.Errorf("failed to CreateTwoWayMergePatch for svc %s/%s: %w", old.Namespace, old.Name, err)
	}
	_, err = c.client.CoreV1().Services(old.Namespace).Patch(ctx, old.Name, types.StrategicMergePatchType, data, metav1.PatchOptions{}, "status")
	return err
}
