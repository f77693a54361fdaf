package servicecidr

import (
	"context"
	"encoding/json"
	"slices"

	networking "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	metav1apply "k8s.io/client-go/applyconfigurations/meta/v1"
	networkingapply "k8s.io/client-go/applyconfigurations/networking/v1"
	"k8s.io/klog/v2"
)

// addFinalizer adds the finalizer through a strategic merge patch (which
// appends to the list), unless present.
func (c *Controller) addFinalizer(ctx context.Context, cidr *networking.ServiceCIDR) error {
	if slices.Contains(cidr.Finalizers, Finalizer) {
		return nil
	}
	patch := map[string]any{"metadata": map[string]any{"finalizers": []string{Finalizer}}}
	if err := c.patch(ctx, cidr.Name, patch); err != nil {
		return err
	}
	klog.FromContext(ctx).V(4).Info("Added protection finalizer to ServiceCIDR", "ServiceCIDR", cidr.Name)
	return nil
}

// removeFinalizer removes the finalizer, if present.
func (c *Controller) removeFinalizer(ctx context.Context, cidr *networking.ServiceCIDR) error {
	if !slices.Contains(cidr.Finalizers, Finalizer) {
		return nil
	}
	patch := map[string]any{"metadata": map[string]any{"$deleteFromPrimitiveList/finalizers": []string{Finalizer}}}
	if err := c.patch(ctx, cidr.Name, patch); err != nil {
		return err
	}
	klog.FromContext(ctx).V(4).Info("Removed protection finalizer from ServiceCIDRs", "ServiceCIDR", cidr.Name)
	return nil
}

// patch applies a strategic merge patch; a ServiceCIDR already gone is no
// error.
func (c *Controller) patch(ctx context.Context, name string, patch map[string]any) error {
	data, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	_, err = c.client.NetworkingV1().ServiceCIDRs().Patch(ctx, name, types.StrategicMergePatchType, data, metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// setCondition applies cond, stamped now, as the controller's server-side
// apply of the status, unless a condition of its type already has its
// status, reason and message.
func (c *Controller) setCondition(ctx context.Context, cidr *networking.ServiceCIDR, cond metav1.Condition) error {
	logger := klog.FromContext(ctx)
	if cur := apimeta.FindStatusCondition(cidr.Status.Conditions, cond.Type); cur != nil &&
		cur.Status == cond.Status && cur.Reason == cond.Reason && cur.Message == cond.Message {
		logger.V(4).Info("ServiceCIDR condition already up to date", "ServiceCIDR", cidr.Name, "conditionType", cond.Type)
		return nil
	}
	logger.V(2).Info("Updating ServiceCIDR condition", "ServiceCIDR", cidr.Name, "conditionType", cond.Type,
		"newStatus", cond.Status, "newReason", cond.Reason)
	status := networkingapply.ServiceCIDRStatus().WithConditions(metav1apply.Condition().
		WithType(cond.Type).
		WithStatus(cond.Status).
		WithReason(cond.Reason).
		WithMessage(cond.Message).
		WithLastTransitionTime(metav1.NewTime(c.clock.Now())))
	apply := networkingapply.ServiceCIDR(cidr.Name).WithStatus(status)
	_, err := c.client.NetworkingV1().ServiceCIDRs().ApplyStatus(ctx, apply, metav1.ApplyOptions{FieldManager: ControllerName, Force: true})
	return err
}
