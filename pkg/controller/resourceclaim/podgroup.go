package resourceclaim

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	schedulingapi "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	schedulingapply "k8s.io/client-go/applyconfigurations/scheduling/v1beta1"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// syncPodGroup creates a PodGroup's missing claims from their templates,
// controlled by the group, and records the new ones in its
// status.resourceClaimStatuses (DRAWorkloadResourceClaims). The group's
// pods then find them there; reservations name the group.
func (c *Controller) syncPodGroup(ctx context.Context, namespace, name string) error {
	logger := klog.FromContext(ctx).WithValues("podgroup", klog.KRef(namespace, name))
	ctx = klog.NewContext(ctx, logger)
	if c.podGroups == nil {
		return nil
	}
	group, err := c.podGroups.PodGroups(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		logger.V(5).Info("Nothing to do for PodGroup, it is gone")
		return nil
	}
	if err != nil {
		return err
	}
	if group.DeletionTimestamp != nil {
		logger.V(5).Info("Nothing to do for PodGroup, it is marked for deletion")
		return nil
	}
	created := map[string]string{}
	for _, groupClaim := range group.Spec.ResourceClaims {
		if err := c.ensureGroupClaim(ctx, group, groupClaim, created); err != nil {
			c.recorder.Event(group, v1.EventTypeWarning, reasonFailedCreation, fmt.Sprintf("PodGroupResourceClaim %s: %v", groupClaim.Name, err))
			return fmt.Errorf("PodGroup %s/%s, PodGroupResourceClaim %s: %w", namespace, name, groupClaim.Name, err)
		}
	}
	if len(created) == 0 {
		return nil
	}
	statuses := make([]*schedulingapply.PodGroupResourceClaimStatusApplyConfiguration, 0, len(created))
	for _, claimName := range slices.Sorted(maps.Keys(created)) {
		statuses = append(statuses, schedulingapply.PodGroupResourceClaimStatus().WithName(claimName).WithResourceClaimName(created[claimName]))
	}
	apply := schedulingapply.PodGroup(name, namespace).WithStatus(schedulingapply.PodGroupStatus().WithResourceClaimStatuses(statuses...))
	if _, err := c.client.SchedulingV1beta1().PodGroups(namespace).ApplyStatus(ctx, apply, metav1.ApplyOptions{FieldManager: fieldManager, Force: true}); err != nil {
		return fmt.Errorf("update PodGroup %s/%s ResourceClaimStatuses: %w", namespace, name, err)
	}
	return nil
}

// ensureGroupClaim is ensurePodClaim for a PodGroup's claim.
func (c *Controller) ensureGroupClaim(ctx context.Context, group *schedulingapi.PodGroup, groupClaim schedulingapi.PodGroupResourceClaim, created map[string]string) error {
	logger := klog.FromContext(ctx)
	name, checkOwner, err := resourceclaim.NameFromPodGroup(group, &groupClaim)
	switch {
	case errors.Is(err, resourceclaim.ErrClaimNotFound):
	case err != nil:
		return fmt.Errorf("checking for claim before creating it: %w", err)
	case name == nil:
		return nil
	case *name != "":
		exists, err := c.claimExists(ctx, group.Namespace, *name, func(claim *resourceapi.ResourceClaim) bool {
			if !checkOwner {
				return true
			}
			if err := resourceclaim.IsForPodGroup(group, claim); err != nil {
				logger.Error(err, "Claim that was created for the PodGroup is no longer owned by the PodGroup, creating a new one", "podGroupClaim", groupClaim.Name, "resourceClaim", *name)
				return false
			}
			return true
		})
		if err != nil {
			return fmt.Errorf("checking claim existence: %w", err)
		}
		if exists {
			return nil
		}
	}
	if groupClaim.ResourceClaimTemplateName == nil {
		return nil
	}
	claim, err := c.findCreated(claimGroupOwnerIndex, group.Namespace+"/"+string(group.UID), groupClaim.Name)
	if err != nil {
		return fmt.Errorf("finding ResourceClaim for claim %s in PodGroup %s/%s failed: %w", groupClaim.Name, group.Namespace, group.Name, err)
	}
	if claim == nil {
		owner := metav1.OwnerReference{
			APIVersion: schedulingapi.SchemeGroupVersion.String(),
			Kind:       "PodGroup",
			Name:       group.Name,
			UID:        group.UID,
			Controller: ptr.To(true),
		}
		if claim, err = c.createFromTemplate(ctx, group.Namespace, *groupClaim.ResourceClaimTemplateName, groupClaim.Name, owner); err != nil {
			return err
		}
	}
	created[groupClaim.Name] = claim.Name
	return nil
}
