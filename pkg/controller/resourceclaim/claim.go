package resourceclaim

import (
	"context"
	"fmt"
	"slices"

	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// syncClaim drops the reservations of pods (and PodGroups) that are gone,
// replaced or done; deallocates a claim whose last reservation went and
// then removes the resource.kubernetes.io/delete-protection finalizer; lets
// a deleted unreserved claim go; and deletes an unreserved claim generated
// for a pod that will not run.
func (c *Controller) syncClaim(ctx context.Context, namespace, name string) error {
	logger := klog.FromContext(ctx).WithValues("claim", klog.KRef(namespace, name))
	ctx = klog.NewContext(ctx, logger)
	claim, err := c.claims.ResourceClaims(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		logger.V(5).Info("Nothing to do for claim, it is gone")
		return nil
	}
	if err != nil {
		return err
	}
	remaining := make([]resourceapi.ResourceClaimConsumerReference, 0, len(claim.Status.ReservedFor))
	for _, ref := range claim.Status.ReservedFor {
		keep, err := c.keepReservation(ctx, namespace, ref)
		if err != nil {
			return err
		}
		if keep {
			remaining = append(remaining, ref)
		}
	}
	hasFinalizer := slices.Contains(claim.Finalizers, resourceapi.Finalizer)
	logger.V(5).Info("Claim reserved for counts", "currentCount", len(claim.Status.ReservedFor), "updatedCount", len(remaining), "builtinController", hasFinalizer)
	switch {
	case len(remaining) < len(claim.Status.ReservedFor):
		if err := c.release(ctx, claim, remaining); err != nil {
			return err
		}
	case hasFinalizer && claim.DeletionTimestamp != nil && len(remaining) == 0:
		if err := c.letGo(ctx, claim); err != nil {
			return err
		}
	}
	if len(remaining) == 0 {
		return c.deleteUnused(ctx, claim)
	}
	return nil
}

// keepReservation decides one status.reservedFor entry. A pod or PodGroup
// seen deleted, replaced by another of the same name, or (a pod) done
// loses it; one the cache does not know is looked up on the API server,
// since the scheduler may be reserving for a pod this cache has not seen
// yet. Consumers of other kinds keep theirs.
func (c *Controller) keepReservation(ctx context.Context, namespace string, ref resourceapi.ResourceClaimConsumerReference) (bool, error) {
	logger := klog.FromContext(ctx)
	switch {
	case ref.APIGroup == "" && ref.Resource == "pods":
		if c.wasDeleted(ref.UID) {
			return false, nil
		}
		pod, err := c.pods.Pods(namespace).Get(ref.Name)
		switch {
		case apierrors.IsNotFound(err):
			live, err := c.client.CoreV1().Pods(namespace).Get(ctx, ref.Name, metav1.GetOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return false, err
			}
			if err != nil || live.UID != ref.UID {
				logger.V(6).Info("Remove reservation because pod is gone or got replaced", "pod", klog.KRef(namespace, ref.Name))
				return false, nil
			}
		case err != nil:
			return false, err
		case pod.UID != ref.UID:
			logger.V(6).Info("Remove reservation because pod got replaced with new instance", "pod", klog.KObj(pod))
			return false, nil
		case podDone(pod):
			logger.V(6).Info("Remove reservation because pod will not run anymore", "pod", klog.KObj(pod))
			return false, nil
		}
		return true, nil
	case c.features.WorkloadResourceClaims && isGroupConsumer(ref):
		if c.wasDeleted(ref.UID) {
			return false, nil
		}
		group, err := c.podGroups.PodGroups(namespace).Get(ref.Name)
		switch {
		case apierrors.IsNotFound(err):
			live, err := c.client.SchedulingV1beta1().PodGroups(namespace).Get(ctx, ref.Name, metav1.GetOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return false, err
			}
			if err != nil || live.UID != ref.UID {
				logger.V(6).Info("Remove reservation because PodGroup is gone or got replaced", "podgroup", klog.KRef(namespace, ref.Name))
				return false, nil
			}
		case err != nil:
			return false, err
		case group.UID != ref.UID:
			logger.V(6).Info("Remove reservation because PodGroup got replaced with new instance", "podgroup", klog.KObj(group))
			return false, nil
		}
		return true, nil
	}
	return true, nil
}

// release writes the remaining reservations (an update, so that it fails
// if the claim changed meanwhile). When none remain the allocation goes
// with them, so that a later consumer is not tied to the node chosen for
// the last one, and then the finalizer that guarded it.
func (c *Controller) release(ctx context.Context, claim *resourceapi.ResourceClaim, remaining []resourceapi.ResourceClaimConsumerReference) error {
	logger := klog.FromContext(ctx)
	claim = claim.DeepCopy()
	claim.Status.ReservedFor = remaining
	if len(remaining) == 0 && slices.Contains(claim.Finalizers, resourceapi.Finalizer) {
		claim.Status.Allocation = nil
	}
	claim, err := c.client.ResourceV1().ResourceClaims(claim.Namespace).UpdateStatus(ctx, claim, metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	logger.V(5).Info("Removed consumers", "currentCount", len(claim.Status.ReservedFor), "allocated", claim.Status.Allocation != nil)
	if i := slices.Index(claim.Finalizers, resourceapi.Finalizer); i >= 0 && claim.Status.Allocation == nil {
		claim.Finalizers = slices.Delete(claim.Finalizers, i, i+1)
		if _, err := c.client.ResourceV1().ResourceClaims(claim.Namespace).Update(ctx, claim, metav1.UpdateOptions{}); err != nil {
			return err
		}
		logger.V(5).Info("Removed finalizer after removing consumers")
	}
	return nil
}

// letGo clears the allocation of a deleted, unreserved claim (one
// allocated and never or no longer used) and removes the finalizer that
// holds its deletion.
func (c *Controller) letGo(ctx context.Context, claim *resourceapi.ResourceClaim) error {
	logger := klog.FromContext(ctx)
	claim = claim.DeepCopy()
	if claim.Status.Allocation != nil {
		claim.Status.Allocation = nil
		var err error
		if claim, err = c.client.ResourceV1().ResourceClaims(claim.Namespace).UpdateStatus(ctx, claim, metav1.UpdateOptions{}); err != nil {
			return err
		}
		logger.V(5).Info("Removed allocation because not needed")
	}
	if i := slices.Index(claim.Finalizers, resourceapi.Finalizer); i >= 0 {
		claim.Finalizers = slices.Delete(claim.Finalizers, i, i+1)
	}
	if _, err := c.client.ResourceV1().ResourceClaims(claim.Namespace).Update(ctx, claim, metav1.UpdateOptions{}); err != nil {
		return err
	}
	logger.V(5).Info("Removed finalizer because not needed")
	return nil
}

// deleteUnused deletes an unreserved claim generated for a pod that was
// replaced or will not run; the garbage collector would, but only once
// the pod itself is deleted. A pod the cache does not know is left to the
// garbage collector.
func (c *Controller) deleteUnused(ctx context.Context, claim *resourceapi.ResourceClaim) error {
	logger := klog.FromContext(ctx)
	podName, podUID := owningPod(claim)
	if podName == "" {
		logger.V(5).Info("Claim not generated for a pod")
		return nil
	}
	pod, err := c.pods.Pods(claim.Namespace).Get(podName)
	switch {
	case apierrors.IsNotFound(err):
		logger.V(5).Info("Pod for claim not found", "pod", klog.KRef(claim.Namespace, podName))
		return nil
	case err != nil:
		return fmt.Errorf("lookup pod: %v", err)
	case pod.UID != podUID || podDone(pod):
		if claim.DeletionTimestamp != nil {
			return nil // already on its way
		}
		if err := c.client.ResourceV1().ResourceClaims(claim.Namespace).Delete(ctx, claim.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete unused generated claim %s: %w", klog.KObj(claim), err)
		}
		logger.V(5).Info("Deleted unused generated claim", "pod", klog.KObj(pod))
	}
	return nil
}

// owningPod returns the pod that controls the claim, if a pod does.
func owningPod(claim *resourceapi.ResourceClaim) (string, types.UID) {
	for _, o := range claim.OwnerReferences {
		if ptr.Deref(o.Controller, false) && o.APIVersion == "v1" && o.Kind == "Pod" {
			return o.Name, o.UID
		}
	}
	return "", ""
}
