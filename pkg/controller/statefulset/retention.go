package statefulset

import (
	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
)

// persistentVolumeClaimRetentionPolicy decides which owner references a
// pod's claims carry, so that the garbage collector deletes them when the
// policy says:
//
//	whenScaled  whenDeleted  owner references
//	Retain      Retain       none
//	Retain      Delete       the set
//	Delete      Retain       the pod, once scaled down (out of range)
//	Delete      Delete       the set while in range, the pod once scaled down
//
// Claims whose references point at an earlier set or pod of the same name
// (another UID), or that another controller controls, are left alone.

const (
	retain = apps.RetainPersistentVolumeClaimRetentionPolicyType
	remove = apps.DeletePersistentVolumeClaimRetentionPolicyType
)

// retentionPolicy returns set's policy, Retain/Retain if unset.
func retentionPolicy(set *apps.StatefulSet) apps.StatefulSetPersistentVolumeClaimRetentionPolicy {
	if p := set.Spec.PersistentVolumeClaimRetentionPolicy; p != nil {
		return *p
	}
	return apps.StatefulSetPersistentVolumeClaimRetentionPolicy{WhenDeleted: retain, WhenScaled: retain}
}

// matchesRef reports whether ref names obj (kind, API version and name,
// whatever the UID).
func matchesRef(ref *metav1.OwnerReference, obj metav1.Object, gvk schema.GroupVersionKind) bool {
	return ref.APIVersion == gvk.GroupVersion().String() && ref.Kind == gvk.Kind && ref.Name == obj.GetName()
}

// hasUnexpectedController reports, unless the policy is Retain/Retain,
// whether the claim has a reference to a set or pod of set's or pod's name
// with another UID, or a controller other than them.
func hasUnexpectedController(claim *v1.PersistentVolumeClaim, set *apps.StatefulSet, pod *v1.Pod) bool {
	policy := retentionPolicy(set)
	if policy.WhenScaled == retain && policy.WhenDeleted == retain {
		return false
	}
	for i := range claim.OwnerReferences {
		ref := &claim.OwnerReferences[i]
		switch {
		case matchesRef(ref, set, controllerKind):
			if ref.UID != set.UID {
				return true
			}
		case matchesRef(ref, pod, podKind):
			if ref.UID != pod.UID {
				return true
			}
		case ref.Controller != nil && *ref.Controller:
			return true
		}
	}
	return false
}

// hasNonControllerOwner reports whether set or pod owns the claim without
// being marked its controller.
func hasNonControllerOwner(claim *v1.PersistentVolumeClaim, set *apps.StatefulSet, pod *v1.Pod) bool {
	for _, ref := range claim.OwnerReferences {
		if (ref.UID == set.UID || ref.UID == pod.UID) && (ref.Controller == nil || !*ref.Controller) {
			return true
		}
	}
	return false
}

// hasOwnerRef reports whether target has a reference with owner's UID.
func hasOwnerRef(target, owner metav1.Object) bool {
	for _, ref := range target.GetOwnerReferences() {
		if ref.UID == owner.GetUID() {
			return true
		}
	}
	return false
}

// hasStaleOwnerRef reports whether the first of the claim's references
// naming obj has another UID (an earlier object of that name).
func hasStaleOwnerRef(claim *v1.PersistentVolumeClaim, obj metav1.Object, gvk schema.GroupVersionKind) bool {
	for i := range claim.OwnerReferences {
		if matchesRef(&claim.OwnerReferences[i], obj, gvk) {
			return claim.OwnerReferences[i].UID != obj.GetUID()
		}
	}
	return false
}

// claimOwnerUpToDate reports whether the claim's references are what the
// policy wants (or are left alone: stale, or another controller's).
func claimOwnerUpToDate(logger klog.Logger, claim *v1.PersistentVolumeClaim, set *apps.StatefulSet, pod *v1.Pod) bool {
	if hasStaleOwnerRef(claim, set, controllerKind) || hasStaleOwnerRef(claim, pod, podKind) {
		return true
	}
	if hasUnexpectedController(claim, set, pod) {
		// Our own references must go; nothing is added next to another
		// controller.
		return !hasOwnerRef(claim, set) && !hasOwnerRef(claim, pod)
	}
	if hasNonControllerOwner(claim, set, pod) {
		return false
	}
	wantSet, wantPod := wantedOwners(logger, set, pod)
	return hasOwnerRef(claim, set) == wantSet && hasOwnerRef(claim, pod) == wantPod
}

// wantedOwners returns whether the policy wants the set and the pod as
// owners of the pod's claims. An unknown policy counts as Retain/Retain.
func wantedOwners(logger klog.Logger, set *apps.StatefulSet, pod *v1.Pod) (wantSet, wantPod bool) {
	policy := retentionPolicy(set)
	scaledDown := !inOrdinalRange(pod, set)
	switch {
	case policy.WhenScaled == retain && policy.WhenDeleted == retain:
		return false, false
	case policy.WhenScaled == retain && policy.WhenDeleted == remove:
		return true, false
	case policy.WhenScaled == remove && policy.WhenDeleted == retain:
		return false, scaledDown
	case policy.WhenScaled == remove && policy.WhenDeleted == remove:
		return !scaledDown, scaledDown
	}
	logger.Error(nil, "Unknown policy, treating as Retain", "policy", set.Spec.PersistentVolumeClaimRetentionPolicy)
	return false, false
}

// setClaimOwnerRefs rewrites the claim's references to set and pod as the
// policy wants, or removes them if another controller controls the claim.
func setClaimOwnerRefs(logger klog.Logger, claim *v1.PersistentVolumeClaim, set *apps.StatefulSet, pod *v1.Pod) {
	unexpected := hasUnexpectedController(claim, set, pod)
	refs := []metav1.OwnerReference{}
	for _, ref := range claim.OwnerReferences {
		if !matchesRef(&ref, set, controllerKind) && !matchesRef(&ref, pod, podKind) {
			refs = append(refs, ref)
		}
	}
	if !unexpected {
		wantSet, wantPod := wantedOwners(logger, set, pod)
		// The order is upstream's: the pod's reference first.
		if wantPod {
			refs = addControllerRef(refs, pod, podKind)
		}
		if wantSet {
			refs = addControllerRef(refs, set, controllerKind)
		}
	}
	claim.OwnerReferences = refs
}

// addControllerRef appends owner as controller unless a reference with its
// UID is there.
func addControllerRef(refs []metav1.OwnerReference, owner metav1.Object, gvk schema.GroupVersionKind) []metav1.OwnerReference {
	for _, ref := range refs {
		if ref.UID == owner.GetUID() {
			return refs
		}
	}
	return append(refs, *metav1.NewControllerRef(owner, gvk))
}
