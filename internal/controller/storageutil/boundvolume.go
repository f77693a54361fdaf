package storageutil

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/component-helpers/storage/ephemeral"
)

// ClaimName returns the name of the claim a pod volume refers to (a
// persistentVolumeClaim source's claimName, "<pod>-<volume>" for a generic
// ephemeral volume) and whether it refers to one at all.
func ClaimName(pod *v1.Pod, vol *v1.Volume) (string, bool) {
	switch {
	case vol.PersistentVolumeClaim != nil:
		return vol.PersistentVolumeClaim.ClaimName, true
	case vol.Ephemeral != nil:
		return ephemeral.VolumeClaimName(pod, vol), true
	}
	return "", false
}

// BoundVolume resolves the claim a pod volume refers to (see ClaimName)
// through the listers to the PersistentVolume bound to it, with upstream's
// checks (the claim Bound with a volumeName, a generic ephemeral volume's
// claim owned by the pod, the volume's claimRef naming the claim's UID).
// The returned volume is the lister's: never mutate it. An error means the
// volume cannot be resolved yet; its messages are upstream's.
func BoundVolume(pod *v1.Pod, vol *v1.Volume, pvcs corelisters.PersistentVolumeClaimLister, pvs corelisters.PersistentVolumeLister) (*v1.PersistentVolume, error) {
	claimName, ok := ClaimName(pod, vol)
	if !ok {
		return nil, fmt.Errorf("volume %q of pod %s/%s does not refer to a claim", vol.Name, pod.Namespace, pod.Name)
	}
	pvc, err := pvcs.PersistentVolumeClaims(pod.Namespace).Get(claimName)
	if err != nil {
		return nil, fmt.Errorf("failed to find PVC %s/%s in PVCInformer cache: %w", pod.Namespace, claimName, err)
	}
	if pvc.Status.Phase != v1.ClaimBound || pvc.Spec.VolumeName == "" {
		return nil, fmt.Errorf("PVC %s/%s has non-bound phase (%q) or empty pvc.Spec.VolumeName (%q)",
			pod.Namespace, claimName, pvc.Status.Phase, pvc.Spec.VolumeName)
	}
	if vol.Ephemeral != nil {
		if err := ephemeral.VolumeIsForPod(pod, pvc); err != nil {
			return nil, err
		}
	}
	pv, err := pvs.Get(pvc.Spec.VolumeName)
	if err != nil {
		return nil, fmt.Errorf("failed to find PV %q in PVInformer cache: %w", pvc.Spec.VolumeName, err)
	}
	if pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != pvc.UID {
		return nil, fmt.Errorf("PV %q is not bound to claim %s/%s", pv.Name, pod.Namespace, claimName)
	}
	return pv, nil
}
