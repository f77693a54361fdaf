package persistentvolume

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/klog/v2"
)

// syncVolume is the volume half of the state machine: a volume without a
// claimRef (or pre-bound by name only) is Available; bound to a claim that
// is bound to it, Bound; bound to a claim that is gone, Released and
// reclaimed; bound to a claim bound elsewhere, unbound (or, dynamically
// provisioned with Delete, reclaimed).
func (c *Controller) syncVolume(ctx context.Context, pv *v1.PersistentVolume) error {
	logger := klog.FromContext(ctx)
	logger.V(4).Info("Synchronizing PersistentVolume", "volumeName", pv.Name, "phase", pv.Status.Phase)
	pv, err := c.updateVolumeMigrationAnnotationsAndFinalizers(ctx, pv)
	if err != nil {
		return err
	}
	if pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID == "" {
		// Unused, or pre-bound to a claim the claim's sync will bind.
		_, err := c.updateVolumePhase(ctx, pv, v1.VolumeAvailable, "")
		return err
	}

	claim, err := c.claimOfVolume(ctx, pv)
	if err != nil {
		return err
	}
	switch {
	case claim == nil:
		// The claim was deleted (or never existed): the volume is released.
		if pv.Status.Phase != v1.VolumeReleased && pv.Status.Phase != v1.VolumeFailed {
			logger.V(2).Info("Volume is released and reclaim policy will be executed", "volumeName", pv.Name, "reclaimPolicy", pv.Spec.PersistentVolumeReclaimPolicy)
			if pv, err = c.updateVolumePhase(ctx, pv, v1.VolumeReleased, ""); err != nil {
				return err
			}
		}
		return c.reclaimVolume(ctx, pv)
	case claim.Spec.VolumeName == "":
		if storagehelpers.CheckVolumeModeMismatches(&claim.Spec, &pv.Spec) {
			c.recorder.Event(pv, v1.EventTypeWarning, reasonVolumeMismatch, fmt.Sprintf("Cannot bind PersistentVolume to requested PersistentVolumeClaim %q due to incompatible volumeMode.", claim.Name))
			c.recorder.Event(claim, v1.EventTypeWarning, reasonVolumeMismatch, fmt.Sprintf("Cannot bind PersistentVolume %q to requested PersistentVolumeClaim due to incompatible volumeMode.", pv.Name))
			return nil
		}
		// Half-bound (by us, or bound and unbound by a user): the
		// claim's sync finishes it.
		c.claimQueue.Add(claimKey(claim))
		return nil
	case claim.Spec.VolumeName == pv.Name:
		_, err := c.updateVolumePhase(ctx, pv, v1.VolumeBound, "")
		return err
	case metav1.HasAnnotation(pv.ObjectMeta, storagehelpers.AnnDynamicallyProvisioned) && pv.Spec.PersistentVolumeReclaimPolicy == v1.PersistentVolumeReclaimDelete:
		// Provisioned for a claim that got bound to another volume: it
		// is nobody's, delete it.
		if pv.Status.Phase != v1.VolumeReleased && pv.Status.Phase != v1.VolumeFailed {
			logger.V(2).Info("Dynamically provisioned volume is released and it will be deleted", "volumeName", pv.Name)
			if pv, err = c.updateVolumePhase(ctx, pv, v1.VolumeReleased, ""); err != nil {
				return err
			}
		}
		return c.reclaimVolume(ctx, pv)
	default:
		// The claim is bound to another volume: roll this one back
		// (to Available; a user's pre-binding keeps its name).
		return c.unbindVolume(ctx, pv)
	}
}

// claimOfVolume returns the claim the volume's claimRef names, with the
// claimRef's UID, or nil. A claim missing from the controller's view is
// looked up in the informer and then the API (unless the volume is
// already Released or Failed), so that a claim created a moment ago does
// not release its volume.
func (c *Controller) claimOfVolume(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolumeClaim, error) {
	ref := pv.Spec.ClaimRef
	claim, found, err := c.getClaim(claimRefKey(ref))
	if err != nil {
		return nil, err
	}
	if !found && pv.Status.Phase != v1.VolumeReleased && pv.Status.Phase != v1.VolumeFailed {
		claim, err = c.claimLister.PersistentVolumeClaims(ref.Namespace).Get(ref.Name)
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, err
		}
		if apierrors.IsNotFound(err) {
			claim, err = c.client.CoreV1().PersistentVolumeClaims(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return nil, err
			}
			if apierrors.IsNotFound(err) {
				claim = nil
			}
		}
	}
	if claim != nil && claim.UID != ref.UID {
		// The cached claim may be an older one of the same name; ask the
		// API server for the newest.
		claim, err = c.client.CoreV1().PersistentVolumeClaims(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, err
		}
		if apierrors.IsNotFound(err) || claim.UID != ref.UID {
			claim = nil
		}
	}
	return claim, nil
}
