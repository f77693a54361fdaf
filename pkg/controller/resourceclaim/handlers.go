package resourceclaim

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	schedulingapi "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	"k8s.io/klog/v2"
)

// Informer handlers only decide what to enqueue, reading listers; the
// decisions are upstream's.

// podChanged queues, for a pod with claims: the claims whose reservations
// it may release (it is gone, finished, or deleted before it was
// scheduled), and the pod itself when a claim must be created or
// reserved for it.
func (c *Controller) podChanged(logger klog.Logger, obj any, deleted bool) {
	pod, ok := objectOf(obj).(*v1.Pod)
	if !ok {
		return
	}
	// A claim the scheduler made for extended resources is recorded
	// only in the status; it is released like the others, whatever the
	// DRAExtendedResource gate says now.
	extended := pod.Status.ExtendedResourceClaimStatus
	if len(pod.Spec.ResourceClaims) == 0 && extended == nil {
		return
	}
	if deleted {
		c.deleted.Add(pod.UID, nil)
	}
	if !podNeedsClaims(pod, deleted) {
		for i := range pod.Spec.ResourceClaims {
			if name, _, err := resourceclaim.Name(pod, &pod.Spec.ResourceClaims[i]); err == nil && name != nil {
				c.queue.Add(claimKeyPrefix + pod.Namespace + "/" + *name)
			}
		}
		if extended != nil {
			c.queue.Add(claimKeyPrefix + pod.Namespace + "/" + extended.ResourceClaimName)
		}
	}
	if needs, reason := c.podNeedsWork(pod); needs {
		logger.V(6).Info("Enqueueing pod", "pod", klog.KObj(pod), "reason", reason)
		c.queue.Add(podKeyPrefix + pod.Namespace + "/" + pod.Name)
	}
}

// podNeedsClaims reports whether the pod may still run and so keeps its
// reservations.
func podNeedsClaims(pod *v1.Pod, deleted bool) bool {
	switch {
	case deleted, podTerminal(pod):
		return false
	case pod.DeletionTimestamp != nil && pod.Spec.NodeName == "":
		return false
	}
	return true
}

// podNeedsWork reports whether a live pod has a claim to create from a
// template or an allocated claim to reserve (it is bound), and why.
func (c *Controller) podNeedsWork(pod *v1.Pod) (bool, string) {
	if pod.DeletionTimestamp != nil {
		return false, "pod is deleted"
	}
	for i := range pod.Spec.ResourceClaims {
		podClaim := &pod.Spec.ResourceClaims[i]
		name, checkOwner, err := resourceclaim.Name(pod, podClaim)
		if err != nil {
			// Not created yet (or an API this code does not know): the
			// sync reports what it cannot do.
			return true, err.Error()
		}
		if name == nil {
			continue
		}
		claim, err := c.claims.ResourceClaims(pod.Namespace).Get(*name)
		if apierrors.IsNotFound(err) {
			if podClaim.ResourceClaimTemplateName == nil {
				continue // the user creates it
			}
			group, err := c.podGroupOf(pod)
			if err != nil {
				return true, "ResourceClaim might have to be created from template: " + err.Error()
			}
			bindTo, err := resourceclaim.BindTo(pod, group, podClaim)
			if err != nil || isGroupConsumer(bindTo) {
				continue // not the pod's to create
			}
			return true, "must create ResourceClaim from template"
		}
		if err != nil {
			return true, fmt.Sprintf("internal error while checking for claim: %v", err)
		}
		if checkOwner && resourceclaim.IsForPod(pod, claim, c.features.WorkloadResourceClaims) != nil {
			continue // a colliding claim: nothing until it goes
		}
		if pod.Spec.NodeName != "" && needsReservation(pod, claim, c.features.WorkloadResourceClaims) {
			return true, fmt.Sprintf("need to reserve claim %s for pod", klog.KObj(claim))
		}
	}
	return false, "nothing to do for any claim"
}

// needsReservation reports whether an allocated claim lacks the pod (or
// its PodGroup) in status.reservedFor.
func needsReservation(pod *v1.Pod, claim *resourceapi.ResourceClaim, acceptGroup bool) bool {
	return claim.Status.Allocation != nil &&
		!resourceclaim.IsReservedForPod(pod, claim, acceptGroup) &&
		resourceclaim.CanBeReserved(claim)
}

// claimChanged queues a live claim (its reservations may name consumers
// that are gone) and every pod and PodGroup that names it.
func (c *Controller) claimChanged(logger klog.Logger, obj any, deleted bool) {
	claim, ok := objectOf(obj).(*resourceapi.ResourceClaim)
	if !ok || claim == nil {
		return
	}
	key := claim.Namespace + "/" + claim.Name
	if !deleted {
		c.queue.Add(claimKeyPrefix + key)
	}
	pods, err := c.podIndexer.ByIndex(podClaimIndex, key)
	if err != nil {
		utilruntime.HandleErrorWithLogger(logger, err, "Listing pods from cache")
		return
	}
	for _, p := range pods {
		c.podChanged(logger, p, false)
	}
	if c.groupIndex == nil {
		return
	}
	groups, err := c.groupIndex.ByIndex(groupClaimIndex, key)
	if err != nil {
		utilruntime.HandleErrorWithLogger(logger, err, "Listing PodGroups from cache")
		return
	}
	for _, g := range groups {
		c.podGroupChanged(logger, g, false)
	}
}

// templateChanged queues the pods and PodGroups that name the template: a
// claim they wait for may now be creatable.
func (c *Controller) templateChanged(logger klog.Logger, obj any) {
	tmpl, ok := objectOf(obj).(*resourceapi.ResourceClaimTemplate)
	if !ok {
		return
	}
	key := tmpl.Namespace + "/" + tmpl.Name
	pods, err := c.podIndexer.ByIndex(podTemplateIndex, key)
	if err != nil {
		utilruntime.HandleErrorWithLogger(logger, err, "Listing pods for claim template", "resourceClaimTemplate", klog.KObj(tmpl))
		return
	}
	for _, p := range pods {
		c.podChanged(logger, p, false)
	}
	if c.groupIndex == nil {
		return
	}
	groups, err := c.groupIndex.ByIndex(groupTemplateIndex, key)
	if err != nil {
		utilruntime.HandleErrorWithLogger(logger, err, "Listing PodGroups for claim template", "resourceClaimTemplate", klog.KObj(tmpl))
		return
	}
	for _, g := range groups {
		c.podGroupChanged(logger, g, false)
	}
}

// podGroupChanged queues, for a PodGroup with claims: the claims whose
// reservations its deletion releases, the group itself when a claim must
// be created for it, and its member pods, whose claim statuses may now
// name the group's claims.
func (c *Controller) podGroupChanged(logger klog.Logger, obj any, deleted bool) {
	group, ok := objectOf(obj).(*schedulingapi.PodGroup)
	if !ok || len(group.Spec.ResourceClaims) == 0 {
		return
	}
	if deleted {
		c.deleted.Add(group.UID, nil)
		for i := range group.Spec.ResourceClaims {
			if name, _, err := resourceclaim.NameFromPodGroup(group, &group.Spec.ResourceClaims[i]); err == nil && name != nil {
				c.queue.Add(claimKeyPrefix + group.Namespace + "/" + *name)
			}
		}
	}
	if c.podGroupNeedsWork(group) {
		c.queue.Add(podGroupKeyPrefix + group.Namespace + "/" + group.Name)
	}
	members, err := c.podIndexer.ByIndex(groupMembersIndex, group.Namespace+"/"+group.Name)
	if err != nil {
		utilruntime.HandleErrorWithLogger(logger, err, "Listing Pods for PodGroup", "podgroup", klog.KObj(group))
		return
	}
	for _, p := range members {
		c.podChanged(logger, p, false)
	}
}

// podGroupNeedsWork reports whether a live PodGroup has a claim to create
// from a template.
func (c *Controller) podGroupNeedsWork(group *schedulingapi.PodGroup) bool {
	if group.DeletionTimestamp != nil {
		return false
	}
	for i := range group.Spec.ResourceClaims {
		groupClaim := &group.Spec.ResourceClaims[i]
		name, _, err := resourceclaim.NameFromPodGroup(group, groupClaim)
		if err != nil {
			return true
		}
		if name == nil {
			continue
		}
		if _, err := c.claims.ResourceClaims(group.Namespace).Get(*name); apierrors.IsNotFound(err) {
			if groupClaim.ResourceClaimTemplateName != nil {
				return true
			}
		} else if err != nil {
			return true
		}
	}
	return false
}
