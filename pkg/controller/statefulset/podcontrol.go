package statefulset

import (
	"context"
	"fmt"
	"strings"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
)

// Writes of pods and claims, with upstream's Events: reason
// Successful<Verb> or Failed<Verb> on the set, e.g. "Create Pod web-0 in
// StatefulSet web successful".

// createPod creates the pod's missing claims, then the pod, then sets the
// claims' owner references as far as possible. An AlreadyExists error is
// returned without an Event.
func (c *Controller) createPod(ctx context.Context, set *apps.StatefulSet, pod *v1.Pod) error {
	if err := c.createClaims(ctx, set, pod); err != nil {
		c.podEvent("create", set, pod, err)
		return err
	}
	created, err := c.client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return err
	}
	if err == nil {
		c.recordWrite(set, podResource, created.ResourceVersion)
		c.creations.add(setKey(set), created, c.clock.Now())
	}
	// Upstream passes the pod as built (without a UID) here.
	if err := c.updateClaimsForRetention(ctx, set, pod); err != nil {
		c.podEvent("update", set, pod, err)
		return err
	}
	c.podEvent("create", set, pod, err)
	return err
}

// updatePod restores the pod's identity and storage and its claims' owner
// references, retrying conflicts from the cache. An Event is recorded only
// if the pod itself needed an update.
func (c *Controller) updatePod(ctx context.Context, set *apps.StatefulSet, pod *v1.Pod) error {
	attempted := false
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		consistent := true
		if !identityMatches(set, pod) {
			updateIdentity(set, pod)
			consistent = false
		}
		if !storageMatches(set, pod) {
			updateStorage(set, pod)
			consistent = false
			if err := c.createClaims(ctx, set, pod); err != nil {
				c.podEvent("update", set, pod, err)
				return err
			}
		}
		match, err := c.claimsMatchRetention(ctx, set, pod)
		if err != nil {
			c.podEvent("update", set, pod, err)
			return err
		}
		if !match {
			if err := c.updateClaimsForRetention(ctx, set, pod); err != nil {
				c.podEvent("update", set, pod, err)
				return err
			}
			consistent = false
		}
		if consistent {
			return nil
		}
		attempted = true
		updated, updateErr := c.client.CoreV1().Pods(pod.Namespace).Update(ctx, pod, metav1.UpdateOptions{})
		if updateErr == nil {
			c.recordWrite(set, podResource, updated.ResourceVersion)
			return nil
		}
		if cached, err := c.podLister.Pods(set.Namespace).Get(pod.Name); err == nil {
			pod = cached.DeepCopy()
		} else {
			utilruntime.HandleErrorWithContext(ctx, err, "Error getting updated Pod from lister", "pod", klog.KRef(set.Namespace, pod.Name))
		}
		return updateErr
	})
	if attempted {
		c.podEvent("update", set, pod, err)
	}
	return err
}

// deletePod deletes the pod; one already gone counts as deleted.
func (c *Controller) deletePod(ctx context.Context, set *apps.StatefulSet, pod *v1.Pod) error {
	err := c.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		c.podEvent("delete", set, pod, err)
		return err
	}
	c.podEvent("delete", set, pod, nil)
	return nil
}

// createClaims creates the pod's claims that the cache does not hold; a
// claim being deleted is an error (the pod must wait for its successor).
func (c *Controller) createClaims(ctx context.Context, set *apps.StatefulSet, pod *v1.Pod) error {
	var errs []error
	for _, claim := range claimsFor(set, pod) {
		existing, err := c.claimLister.PersistentVolumeClaims(claim.Namespace).Get(claim.Name)
		switch {
		case apierrors.IsNotFound(err):
			created, err := c.client.CoreV1().PersistentVolumeClaims(claim.Namespace).Create(ctx, &claim, metav1.CreateOptions{})
			if err != nil {
				errs = append(errs, fmt.Errorf("failed to create PVC %s: %w", claim.Name, err))
			} else {
				c.recordWrite(set, claimResource, created.ResourceVersion)
			}
			if err == nil || !apierrors.IsAlreadyExists(err) {
				c.claimEvent("create", set, pod, &claim, err)
			}
		case err != nil:
			errs = append(errs, fmt.Errorf("failed to retrieve PVC %s: %w", claim.Name, err))
			c.claimEvent("create", set, pod, &claim, err)
		case existing.DeletionTimestamp != nil:
			errs = append(errs, fmt.Errorf("pvc %s is being deleted", claim.Name))
		}
	}
	return utilerrors.NewAggregate(errs)
}

// createMissingClaims creates a pending pod's missing claims and sets
// their owner references.
func (c *Controller) createMissingClaims(ctx context.Context, set *apps.StatefulSet, pod *v1.Pod) error {
	if err := c.createClaims(ctx, set, pod); err != nil {
		return err
	}
	if err := c.updateClaimsForRetention(ctx, set, pod); err != nil {
		c.podEvent("update", set, pod, err)
		return err
	}
	return nil
}

// claimsMatchRetention reports whether the pod's cached claims carry the
// owner references the retention policy wants. Missing claims match.
func (c *Controller) claimsMatchRetention(ctx context.Context, set *apps.StatefulSet, pod *v1.Pod) (bool, error) {
	logger := klog.FromContext(ctx)
	ordinal := ordinalOf(pod)
	for i := range set.Spec.VolumeClaimTemplates {
		name := claimName(set, &set.Spec.VolumeClaimTemplates[i], ordinal)
		claim, err := c.claimLister.PersistentVolumeClaims(set.Namespace).Get(name)
		switch {
		case apierrors.IsNotFound(err):
			logger.V(4).Info("Expected claim missing, continuing to pick up in next iteration", "PVC", klog.KRef(set.Namespace, name))
		case err != nil:
			return false, fmt.Errorf("Could not retrieve claim %s for %s when checking PVC deletion policy: %w", name, pod.Name, err)
		case !claimOwnerUpToDate(logger, claim, set, pod):
			return false, nil
		}
	}
	return true, nil
}

// updateClaimsForRetention writes the owner references the retention
// policy wants on the pod's cached claims that lack them.
func (c *Controller) updateClaimsForRetention(ctx context.Context, set *apps.StatefulSet, pod *v1.Pod) error {
	logger := klog.FromContext(ctx)
	ordinal := ordinalOf(pod)
	for i := range set.Spec.VolumeClaimTemplates {
		name := claimName(set, &set.Spec.VolumeClaimTemplates[i], ordinal)
		claim, err := c.claimLister.PersistentVolumeClaims(set.Namespace).Get(name)
		switch {
		case apierrors.IsNotFound(err):
			logger.V(4).Info("Expected claim missing, continuing to pick up in next iteration", "PVC", klog.KRef(set.Namespace, name))
			continue
		case err != nil:
			return fmt.Errorf("Could not retrieve claim %s not found for %s when checking PVC deletion policy: %w", name, pod.Name, err)
		}
		if hasUnexpectedController(claim, set, pod) {
			c.recorder.Event(set, v1.EventTypeWarning, "ConflictingController", fmt.Sprintf(
				"PersistentVolumeClaim %s has a conflicting OwnerReference that acts as a manging controller, the retention policy is ignored for this claim", name))
		}
		if claimOwnerUpToDate(logger, claim, set, pod) {
			continue
		}
		claim = claim.DeepCopy()
		setClaimOwnerRefs(logger, claim, set, pod)
		updated, err := c.client.CoreV1().PersistentVolumeClaims(claim.Namespace).Update(ctx, claim, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("could not update claim %s for delete policy ownerRefs: %w", name, err)
		}
		c.recordWrite(set, claimResource, updated.ResourceVersion)
	}
	return nil
}

// claimIsStale reports whether, under a Delete-when-scaled policy, one of
// the pod's claims still belongs to an earlier pod of its name: the
// garbage collector is about to delete it, and the pod must wait.
func (c *Controller) claimIsStale(set *apps.StatefulSet, pod *v1.Pod) (bool, error) {
	if retentionPolicy(set).WhenScaled == retain {
		return false, nil
	}
	for _, claim := range claimsFor(set, pod) {
		existing, err := c.claimLister.PersistentVolumeClaims(claim.Namespace).Get(claim.Name)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return false, err
		case hasStaleOwnerRef(existing, pod, podKind):
			return true, nil
		}
	}
	return false, nil
}

// title is verb with its first letter upper-cased, as in Event reasons.
func title(verb string) string {
	return strings.ToUpper(verb[:1]) + verb[1:]
}

func (c *Controller) podEvent(verb string, set *apps.StatefulSet, pod *v1.Pod, err error) {
	if err == nil {
		c.recorder.Event(set, v1.EventTypeNormal, "Successful"+title(verb),
			fmt.Sprintf("%s Pod %s in StatefulSet %s successful", title(verb), pod.Name, set.Name))
		return
	}
	c.recorder.Event(set, v1.EventTypeWarning, "Failed"+title(verb),
		fmt.Sprintf("%s Pod %s in StatefulSet %s failed error: %s", title(verb), pod.Name, set.Name, err))
}

func (c *Controller) claimEvent(verb string, set *apps.StatefulSet, pod *v1.Pod, claim *v1.PersistentVolumeClaim, err error) {
	if err == nil {
		c.recorder.Event(set, v1.EventTypeNormal, "Successful"+title(verb),
			fmt.Sprintf("%s Claim %s Pod %s in StatefulSet %s success", title(verb), claim.Name, pod.Name, set.Name))
		return
	}
	c.recorder.Event(set, v1.EventTypeWarning, "Failed"+title(verb),
		fmt.Sprintf("%s Claim %s for Pod %s in StatefulSet %s failed error: %s", title(verb), claim.Name, pod.Name, set.Name, err))
}
