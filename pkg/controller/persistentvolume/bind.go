package persistentvolume

import (
	"context"
	"fmt"
	"reflect"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/klog/v2"
)

// annPreResizeCapacity on a volume holds the capacity a claim reports
// while its filesystem has not been resized yet.
const annPreResizeCapacity = "volume.alpha.kubernetes.io/pre-resize-capacity"

// bind completes a binding in upstream's order, each step written only if
// it changes something: the volume's claimRef (the step that cannot
// succeed twice: the update carries the resourceVersion the match was made
// on, so two claims can never both get the volume), the volume's phase,
// the claim's volumeName and annotations, the claim's status.
func (c *Controller) bind(ctx context.Context, pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) error {
	logger := klog.FromContext(ctx)
	logger.V(4).Info("Binding volume to claim", "PVC", klog.KObj(claim), "volumeName", pv.Name)
	pv, err := c.bindVolumeToClaim(ctx, pv, claim)
	if err != nil {
		return err
	}
	if pv, err = c.updateVolumePhase(ctx, pv, v1.VolumeBound, ""); err != nil {
		return err
	}
	if claim, err = c.bindClaimToVolume(ctx, claim, pv); err != nil {
		return err
	}
	_, err = c.updateClaimStatus(ctx, claim, v1.ClaimBound, pv)
	return err
}

func (c *Controller) bindVolumeToClaim(ctx context.Context, pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) (*v1.PersistentVolume, error) {
	clone, dirty, err := storagehelpers.GetBindVolumeToClaim(pv, claim)
	if err != nil || !dirty {
		return pv, err
	}
	klog.FromContext(ctx).V(2).Info("Claim bound to volume", "PVC", klog.KObj(claim), "volumeName", pv.Name)
	return c.updateVolume(ctx, clone)
}

func (c *Controller) bindClaimToVolume(ctx context.Context, claim *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) (*v1.PersistentVolumeClaim, error) {
	clone := claim.DeepCopy()
	dirty := false
	if claim.Spec.VolumeName != pv.Name {
		clone.Spec.VolumeName = pv.Name
		if !metav1.HasAnnotation(clone.ObjectMeta, storagehelpers.AnnBoundByController) {
			metav1.SetMetaDataAnnotation(&clone.ObjectMeta, storagehelpers.AnnBoundByController, "yes")
		}
		dirty = true
	}
	if !metav1.HasAnnotation(clone.ObjectMeta, storagehelpers.AnnBindCompleted) {
		metav1.SetMetaDataAnnotation(&clone.ObjectMeta, storagehelpers.AnnBindCompleted, "yes")
		dirty = true
	}
	if !dirty {
		return claim, nil
	}
	klog.FromContext(ctx).V(2).Info("Volume bound to claim", "PVC", klog.KObj(claim), "volumeName", pv.Name)
	return c.updateClaim(ctx, clone)
}

// unbindVolume rolls a volume's binding back: a binding the controller
// made is removed, a user's pre-binding loses only the claim's UID. The
// volume is Available again.
func (c *Controller) unbindVolume(ctx context.Context, pv *v1.PersistentVolume) error {
	clone := pv.DeepCopy()
	if metav1.HasAnnotation(pv.ObjectMeta, storagehelpers.AnnBoundByController) {
		clone.Spec.ClaimRef = nil
		delete(clone.Annotations, storagehelpers.AnnBoundByController)
		if len(clone.Annotations) == 0 {
			clone.Annotations = nil
		}
	} else {
		clone.Spec.ClaimRef.UID = ""
	}
	updated, err := c.updateVolume(ctx, clone)
	if err != nil {
		return err
	}
	_, err = c.updateVolumePhase(ctx, updated, v1.VolumeAvailable, "")
	return err
}

// updateClaimStatus sets the claim's phase and, from the volume, its
// access modes, capacity and current VolumeAttributesClass; without a
// volume it clears them.
func (c *Controller) updateClaimStatus(ctx context.Context, claim *v1.PersistentVolumeClaim, phase v1.PersistentVolumeClaimPhase, pv *v1.PersistentVolume) (*v1.PersistentVolumeClaim, error) {
	logger := klog.FromContext(ctx)
	clone := claim.DeepCopy()
	dirty := false
	if claim.Status.Phase != phase {
		clone.Status.Phase = phase
		dirty = true
	}
	if pv == nil {
		if claim.Status.AccessModes != nil {
			clone.Status.AccessModes = nil
			dirty = true
		}
		if claim.Status.Capacity != nil {
			clone.Status.Capacity = nil
			dirty = true
		}
		if claim.Status.CurrentVolumeAttributesClassName != nil {
			clone.Status.CurrentVolumeAttributesClassName = nil
			dirty = true
		}
	} else {
		if !reflect.DeepEqual(claim.Status.AccessModes, pv.Spec.AccessModes) {
			clone.Status.AccessModes = pv.Spec.AccessModes
			dirty = true
		}
		// Capacity only on a phase change: later it is the resizer's.
		if claim.Status.Phase != phase {
			volumeCap, ok := pv.Spec.Capacity[v1.ResourceStorage]
			if !ok {
				return nil, fmt.Errorf("PersistentVolume %q is without a storage capacity", pv.Name)
			}
			claimCap, ok := claim.Status.Capacity[v1.ResourceStorage]
			if pre, has := pv.Annotations[annPreResizeCapacity]; has {
				qty, err := resource.ParseQuantity(pre)
				if err != nil {
					logger.Info("Parsing pre-resize-capacity from PV failed", "volumeName", pv.Name, "err", err)
					qty = volumeCap
				}
				if clone.Status.Capacity == nil {
					clone.Status.Capacity = v1.ResourceList{}
				}
				clone.Status.Capacity[v1.ResourceStorage] = qty
				dirty = true
			} else if !ok || volumeCap.Cmp(claimCap) != 0 {
				clone.Status.Capacity = pv.Spec.Capacity
				dirty = true
			}
		}
		if c.vac && claim.Status.Phase == v1.ClaimPending && phase == v1.ClaimBound &&
			!reflect.DeepEqual(claim.Status.CurrentVolumeAttributesClassName, pv.Spec.VolumeAttributesClassName) {
			clone.Status.CurrentVolumeAttributesClassName = pv.Spec.VolumeAttributesClassName
			dirty = true
		}
	}
	if !dirty {
		return claim, nil
	}
	updated, err := c.client.CoreV1().PersistentVolumeClaims(clone.Namespace).UpdateStatus(ctx, clone, metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	if _, err := c.storeClaim(updated); err != nil {
		return nil, err
	}
	if claim.Status.Phase != phase {
		logger.V(2).Info("Claim entered phase", "PVC", klog.KObj(claim), "phase", phase)
	}
	return updated, nil
}

// updateClaimStatusWithEvent changes the claim's phase and records the
// Event, once: nothing happens if the claim is in that phase already.
func (c *Controller) updateClaimStatusWithEvent(ctx context.Context, claim *v1.PersistentVolumeClaim, phase v1.PersistentVolumeClaimPhase, pv *v1.PersistentVolume, eventType, reason, message string) (*v1.PersistentVolumeClaim, error) {
	if claim.Status.Phase == phase {
		return claim, nil
	}
	updated, err := c.updateClaimStatus(ctx, claim, phase, pv)
	if err != nil {
		return nil, err
	}
	c.recorder.Event(updated, eventType, reason, message)
	return updated, nil
}

// updateVolumePhase sets the volume's phase and message if the phase
// differs. The API server stamps lastPhaseTransitionTime.
func (c *Controller) updateVolumePhase(ctx context.Context, pv *v1.PersistentVolume, phase v1.PersistentVolumePhase, message string) (*v1.PersistentVolume, error) {
	if pv.Status.Phase == phase {
		return pv, nil
	}
	clone := pv.DeepCopy()
	clone.Status.Phase = phase
	clone.Status.Message = message
	updated, err := c.client.CoreV1().PersistentVolumes().UpdateStatus(ctx, clone, metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	if _, err := c.storeVolume(updated); err != nil {
		return nil, err
	}
	klog.FromContext(ctx).V(2).Info("Volume entered phase", "volumeName", pv.Name, "phase", phase)
	return updated, nil
}

func (c *Controller) updateVolumePhaseWithEvent(ctx context.Context, pv *v1.PersistentVolume, phase v1.PersistentVolumePhase, eventType, reason, message string) (*v1.PersistentVolume, error) {
	if pv.Status.Phase == phase {
		return pv, nil
	}
	updated, err := c.updateVolumePhase(ctx, pv, phase, message)
	if err != nil {
		return nil, err
	}
	c.recorder.Event(updated, eventType, reason, message)
	return updated, nil
}

// updateVolume writes a volume's metadata and spec and keeps the result.
func (c *Controller) updateVolume(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	updated, err := c.client.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	if _, err := c.storeVolume(updated); err != nil {
		return nil, err
	}
	return updated, nil
}

// updateClaim writes a claim's metadata and spec and keeps the result.
func (c *Controller) updateClaim(ctx context.Context, claim *v1.PersistentVolumeClaim) (*v1.PersistentVolumeClaim, error) {
	updated, err := c.client.CoreV1().PersistentVolumeClaims(claim.Namespace).Update(ctx, claim, metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	if _, err := c.storeClaim(updated); err != nil {
		return nil, err
	}
	return updated, nil
}

// assignDefaultStorageClass gives a claim without any class the default
// StorageClass (the newest, ties by name), retroactively: also to claims
// created before the default existed.
func (c *Controller) assignDefaultStorageClass(ctx context.Context, claim *v1.PersistentVolumeClaim) (bool, error) {
	if storagehelpers.PersistentVolumeClaimHasClass(claim) {
		return false, nil
	}
	class, err := defaultClass(c.classLister)
	if err != nil || class == nil {
		return false, err
	}
	clone := claim.DeepCopy()
	clone.Spec.StorageClassName = &class.Name
	if _, err := c.client.CoreV1().PersistentVolumeClaims(clone.Namespace).Update(ctx, clone, metav1.UpdateOptions{}); err != nil {
		return false, err
	}
	klog.FromContext(ctx).V(4).Info("Successfully assigned StorageClass to PersistentVolumeClaim", "PVC", klog.KObj(claim), "storageClassName", class.Name)
	return true, nil
}
