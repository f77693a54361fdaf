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
	corev1apply "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/features"
)

// reasonFailedCreation is upstream's Warning Event reason for a claim the
// controller could not provide.
const reasonFailedCreation = "FailedResourceClaimCreation"

// syncPod creates the pod's missing claims from their templates, records
// the new ones in status.resourceClaimStatuses and, once the pod is bound,
// reserves its allocated claims for it (a pod bound without the
// scheduler has nobody else to do that).
func (c *Controller) syncPod(ctx context.Context, namespace, name string) error {
	logger := klog.FromContext(ctx).WithValues("pod", klog.KRef(namespace, name))
	ctx = klog.NewContext(ctx, logger)
	pod, err := c.pods.Pods(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		logger.V(5).Info("Nothing to do for pod, it is gone")
		return nil
	}
	if err != nil {
		return err
	}
	if pod.DeletionTimestamp != nil {
		logger.V(5).Info("Nothing to do for pod, it is marked for deletion")
		return nil
	}
	group, err := c.podGroupOf(pod)
	if err != nil {
		return fmt.Errorf("get PodGroup for Pod %s/%s: %w", namespace, name, err)
	}

	created := map[string]string{}
	for _, podClaim := range pod.Spec.ResourceClaims {
		if err := c.ensurePodClaim(ctx, pod, group, podClaim, created); err != nil {
			c.recorder.Event(pod, v1.EventTypeWarning, reasonFailedCreation, fmt.Sprintf("PodResourceClaim %s: %v", podClaim.Name, err))
			return fmt.Errorf("pod %s/%s, PodResourceClaim %s: %w", namespace, name, podClaim.Name, err)
		}
	}
	if len(created) > 0 {
		if err := c.applyPodClaimStatuses(ctx, pod, created); err != nil {
			return err
		}
	}
	if pod.Spec.NodeName == "" {
		logger.V(5).Info("Nothing to do for pod, scheduler will deal with it")
		return nil
	}
	return c.reserveForPod(ctx, pod, group)
}

// ensurePodClaim makes sure the claim of one pod claim exists: one
// recorded in the pod's status and controlled by it is kept; otherwise a
// claim the pod controls with the pod claim's annotation (created by an
// earlier sync whose status write failed) is adopted, or a new one is
// created from the template. The name of an adopted or new claim goes to
// created.
func (c *Controller) ensurePodClaim(ctx context.Context, pod *v1.Pod, group *schedulingapi.PodGroup, podClaim v1.PodResourceClaim, created map[string]string) error {
	logger := klog.FromContext(ctx)
	name, checkOwner, err := resourceclaim.Name(pod, &podClaim)
	switch {
	case errors.Is(err, resourceclaim.ErrClaimNotFound):
	case err != nil:
		return fmt.Errorf("checking for claim before creating it: %v", err)
	case name == nil:
		return nil
	case *name != "":
		exists, err := c.claimExists(ctx, pod.Namespace, *name, func(claim *resourceapi.ResourceClaim) bool {
			if !checkOwner {
				return true
			}
			if err := resourceclaim.IsForPod(pod, claim, c.features.WorkloadResourceClaims); err != nil {
				logger.Error(err, "Claim that was created for the pod is no longer owned by the pod, creating a new one", "podClaim", podClaim.Name, "resourceClaim", *name)
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
	if podClaim.ResourceClaimTemplateName == nil {
		return nil
	}
	bindTo, err := resourceclaim.BindTo(pod, group, &podClaim)
	if err != nil {
		return err
	}
	var claim *resourceapi.ResourceClaim
	if isGroupConsumer(bindTo) {
		if !c.features.WorkloadResourceClaims {
			return permanent{fmt.Errorf("claim %s is a PodGroup claim but the %s feature is disabled", podClaim.Name, features.DRAWorkloadResourceClaims)}
		}
		// The PodGroup's own sync creates it; the pod records it once
		// it exists.
		claim, err = c.findCreated(claimGroupOwnerIndex, group.Namespace+"/"+string(group.UID), podClaim.Name)
		if err != nil {
			return fmt.Errorf("finding ResourceClaim for claim %s in PodGroup %s/%s failed: %w", podClaim.Name, group.Namespace, group.Name, err)
		}
	} else {
		claim, err = c.findCreated(claimPodOwnerIndex, pod.Namespace+"/"+string(pod.UID), podClaim.Name)
		if err != nil {
			return fmt.Errorf("finding ResourceClaim for claim %s in pod %s/%s failed: %w", podClaim.Name, pod.Namespace, pod.Name, err)
		}
		if claim == nil {
			owner := metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: ptr.To(true)}
			if claim, err = c.createFromTemplate(ctx, pod.Namespace, *podClaim.ResourceClaimTemplateName, podClaim.Name, owner); err != nil {
				return err
			}
		}
	}
	if claim != nil {
		created[podClaim.Name] = claim.Name
	}
	return nil
}

// applyPodClaimStatuses applies status.resourceClaimStatuses: the entries
// the pod has that name a claim, and the new ones, sorted by name, with
// server-side apply under upstream's field manager.
func (c *Controller) applyPodClaimStatuses(ctx context.Context, pod *v1.Pod, created map[string]string) error {
	merged := map[string]string{}
	for _, s := range pod.Status.ResourceClaimStatuses {
		if s.ResourceClaimName != nil {
			merged[s.Name] = *s.ResourceClaimName
		}
	}
	maps.Copy(merged, created)
	statuses := make([]*corev1apply.PodResourceClaimStatusApplyConfiguration, 0, len(merged))
	for _, name := range slices.Sorted(maps.Keys(merged)) {
		statuses = append(statuses, corev1apply.PodResourceClaimStatus().WithName(name).WithResourceClaimName(merged[name]))
	}
	apply := corev1apply.Pod(pod.Name, pod.Namespace).WithStatus(corev1apply.PodStatus().WithResourceClaimStatuses(statuses...))
	if _, err := c.client.CoreV1().Pods(pod.Namespace).ApplyStatus(ctx, apply, metav1.ApplyOptions{FieldManager: fieldManager, Force: true}); err != nil {
		return fmt.Errorf("update pod %s/%s ResourceClaimStatuses: %v", pod.Namespace, pod.Name, err)
	}
	return nil
}

// reserveForPod adds the bound pod (or its PodGroup, for a group's claim)
// to status.reservedFor of each allocated claim that lacks it.
func (c *Controller) reserveForPod(ctx context.Context, pod *v1.Pod, group *schedulingapi.PodGroup) error {
	logger := klog.FromContext(ctx)
	for i := range pod.Spec.ResourceClaims {
		podClaim := &pod.Spec.ResourceClaims[i]
		name, checkOwner, err := resourceclaim.Name(pod, podClaim)
		if err != nil {
			return err
		}
		if name == nil {
			continue
		}
		claim, err := c.claims.ResourceClaims(pod.Namespace).Get(*name)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("retrieve claim: %v", err)
		}
		if checkOwner {
			if err := resourceclaim.IsForPod(pod, claim, c.features.WorkloadResourceClaims); err != nil {
				return err
			}
		}
		if !needsReservation(pod, claim, c.features.WorkloadResourceClaims) {
			continue
		}
		bindTo, err := resourceclaim.BindTo(pod, group, podClaim)
		if err != nil {
			return err
		}
		if isGroupConsumer(bindTo) && !c.features.WorkloadResourceClaims {
			logger.V(3).Info("Not reserving PodGroup ResourceClaim because feature is disabled", "feature", features.DRAWorkloadResourceClaims, "resourceClaim", klog.KObj(claim))
			continue
		}
		logger.V(5).Info("Reserve claim", "resourceClaim", klog.KObj(claim), "reservedForResource", bindTo.Resource)
		claim = claim.DeepCopy()
		claim.Status.ReservedFor = append(claim.Status.ReservedFor, bindTo)
		if _, err := c.client.ResourceV1().ResourceClaims(claim.Namespace).UpdateStatus(ctx, claim, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("reserve claim %s: %w", klog.KObj(claim), err)
		}
	}
	return nil
}

// podGroupOf returns the PodGroup the pod belongs to, or nil.
func (c *Controller) podGroupOf(pod *v1.Pod) (*schedulingapi.PodGroup, error) {
	sg := pod.Spec.SchedulingGroup
	if sg == nil || sg.PodGroupName == nil {
		return nil, nil
	}
	if !c.features.GenericWorkload {
		return nil, permanent{fmt.Errorf("Pod is a member of PodGroup %s but %s feature is disabled", *sg.PodGroupName, features.GenericWorkload)} //nolint:staticcheck // upstream's message
	}
	return c.podGroups.PodGroups(pod.Namespace).Get(*sg.PodGroupName)
}

// isGroupConsumer reports whether a consumer reference names a PodGroup.
func isGroupConsumer(ref resourceapi.ResourceClaimConsumerReference) bool {
	return ref.APIGroup == schedulingapi.GroupName && ref.Resource == "podgroups"
}

// podTerminal reports whether the pod has succeeded or failed.
func podTerminal(pod *v1.Pod) bool {
	return pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed
}

// podDone reports whether none of the pod's containers runs or ever will.
func podDone(pod *v1.Pod) bool {
	return podTerminal(pod) || pod.DeletionTimestamp != nil && pod.Spec.NodeName == ""
}
