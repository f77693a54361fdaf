package persistentvolume

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/klog/v2"
)

// reclaimVolume applies a released volume's reclaim policy: Retain keeps
// it Released, Delete and Recycle start an operation (one at a time per
// volume, backed off after failures), anything else fails the volume.
// Volumes migrated to a CSI driver are the driver's.
func (c *Controller) reclaimVolume(ctx context.Context, pv *v1.PersistentVolume) error {
	logger := klog.FromContext(ctx)
	if pv.Annotations[storagehelpers.AnnMigratedTo] != "" {
		return nil
	}
	switch pv.Spec.PersistentVolumeReclaimPolicy {
	case v1.PersistentVolumeReclaimRetain:
		logger.V(4).Info("ReclaimVolume: policy is Retain, nothing to do", "volumeName", pv.Name)
	case v1.PersistentVolumeReclaimRecycle:
		c.ops.run(logger, fmt.Sprintf("recycle-%s[%s]", pv.Name, pv.UID), func() error {
			c.recycleVolume(ctx, pv)
			return nil
		})
	case v1.PersistentVolumeReclaimDelete:
		if _, ours := c.deleted.Load(pv.UID); ours && pv.DeletionTimestamp != nil &&
			!slices.Contains(pv.Finalizers, storagehelpers.PVDeletionInTreeProtectionFinalizer) {
			// This controller deleted it; other finalizers hold it.
			// Deleting again would repeat the plugin's work and the API
			// call. With its own finalizer back (a sync re-added it while
			// the deletion ran, as upstream's does), only another
			// deletion removes it.
			logger.V(4).Info("Volume is already being deleted", "volumeName", pv.Name)
			return nil
		}
		// The deletion's duration is observed when the volume is gone
		// (syncVolumeKey); a failed attempt counts an error.
		c.opTimes.start(pv.Name, c.deleterName(pv), opNameDelete)
		c.ops.run(logger, fmt.Sprintf("delete-%s[%s]", pv.Name, pv.UID), func() error {
			err := c.deleteVolume(ctx, pv)
			if err != nil {
				c.opTimes.failed(pv.Name)
			}
			return err
		})
	default:
		_, err := c.updateVolumePhaseWithEvent(ctx, pv, v1.VolumeFailed, v1.EventTypeWarning, reasonUnknownReclaimPolicy, "Volume has unrecognized PersistentVolumeReclaimPolicy")
		return err
	}
	return nil
}

// findDeleter reports whether the hostPath plugin deletes the volume. No
// error and false: an external deleter does (a provisioner outside
// kubernetes.io/, a CSI or migrated volume). An error: nobody can, and
// the volume fails.
func findDeleter(pv *v1.PersistentVolume) (bool, error) {
	if provisioner := pv.Annotations[storagehelpers.AnnDynamicallyProvisioned]; provisioner != "" {
		switch {
		case provisioner == hostPathPluginName:
			return true, nil
		case provisioner == nfsPluginName:
			return false, errors.New("no deletable volume plugin matched")
		case !strings.HasPrefix(provisioner, "kubernetes.io/"):
			return false, nil
		}
		return false, fmt.Errorf("no volume plugin matched name: %s", provisioner)
	}
	if metav1.HasAnnotation(pv.ObjectMeta, storagehelpers.AnnMigratedTo) || pv.Spec.CSI != nil {
		return false, nil
	}
	switch {
	case pv.Spec.HostPath != nil:
		return true, nil
	case pv.Spec.NFS != nil:
		return false, fmt.Errorf("error getting deleter volume plugin for volume %q: no deletable volume plugin matched", pv.Name)
	}
	return false, fmt.Errorf("error getting deleter volume plugin for volume %q: no volume plugin matched", pv.Name)
}

// deleteVolume deletes a released volume with Delete: the hostPath
// plugin removes its directory and the controller the object; an external
// deleter is left to do both. Failures fail the volume with an Event.
func (c *Controller) deleteVolume(ctx context.Context, pv *v1.PersistentVolume) error {
	logger := klog.FromContext(ctx)
	hostPath, err := findDeleter(pv)
	if err != nil {
		if _, err := c.updateVolumePhaseWithEvent(ctx, pv, v1.VolumeFailed, v1.EventTypeWarning, reasonVolumeFailedDelete, err.Error()); err != nil {
			return err
		}
	}
	if !hostPath {
		logger.V(3).Info("External deleter for volume requested, ignoring", "volumeName", pv.Name)
		return nil
	}
	// Read the volume again: the decision must be made on its newest state.
	fresh, err := c.client.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{})
	if err != nil {
		logger.V(3).Info("Error reading persistent volume", "volumeName", pv.Name, "err", err)
		return nil
	}
	if released, err := c.isVolumeReleased(fresh); err != nil || !released {
		return nil
	}
	if err := c.deleteWithPlugin(ctx, pv, fresh); err != nil {
		logger.V(3).Info("Deletion of volume failed", "volumeName", pv.Name, "err", err)
		if _, uerr := c.updateVolumePhaseWithEvent(ctx, pv, v1.VolumeFailed, v1.EventTypeWarning, reasonVolumeFailedDelete, err.Error()); uerr != nil {
			return uerr
		}
		return err
	}
	if err := c.client.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{}); err != nil {
		logger.V(3).Info("Failed to delete volume from database", "volumeName", pv.Name, "err", err)
		return nil
	}
	c.deleted.Store(pv.UID, struct{}{})
	return nil
}

// deleteWithPlugin removes the hostPath directory, then the in-tree
// deletion-protection finalizer. read is the volume as the API server
// returned it just before, or nil: the finalizer is then decided on a
// fresh read (upstream always reads again; the deletion path has just read
// the volume and passes that copy, which saves a GET per deleted volume).
func (c *Controller) deleteWithPlugin(ctx context.Context, pv, read *v1.PersistentVolume) error {
	start := time.Now()
	err := c.hostPath.delete(pv)
	// Upstream times the deleter's Delete only: a volume without a
	// hostPath source fails before, when the deleter is made.
	if pv.Spec.HostPath != nil {
		observeStorageOperation(hostPathPluginName, opNameVolumeDelete, start, err)
	}
	if err != nil {
		return err
	}
	klog.FromContext(ctx).V(2).Info("Volume deleted", "volumeName", pv.Name)
	return c.removeInTreeFinalizer(ctx, pv.Name, read)
}

// removeInTreeFinalizer removes the in-tree deletion-protection finalizer
// from the volume, starting from read when it is not nil. A copy gone stale
// (a conflict) is read again once.
func (c *Controller) removeInTreeFinalizer(ctx context.Context, name string, read *v1.PersistentVolume) error {
	for retried := false; ; retried = true {
		if read == nil {
			fresh, err := c.client.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			read = fresh
		}
		if !slices.Contains(read.Finalizers, storagehelpers.PVDeletionInTreeProtectionFinalizer) {
			return nil
		}
		clone := read.DeepCopy()
		clone.Finalizers = slices.DeleteFunc(clone.Finalizers, func(f string) bool { return f == storagehelpers.PVDeletionInTreeProtectionFinalizer })
		_, err := c.updateVolume(ctx, clone)
		if err == nil {
			return nil
		}
		if retried || !apierrors.IsConflict(err) {
			return fmt.Errorf("persistent volume controller can't update finalizer: %w", err)
		}
		read = nil
	}
}

// isVolumeReleased reports whether the volume's claim is gone (or bound
// to another volume), in the controller's view.
func (c *Controller) isVolumeReleased(pv *v1.PersistentVolume) (bool, error) {
	if pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID == "" {
		return false, nil
	}
	claim, found, err := c.getClaim(claimRefKey(pv.Spec.ClaimRef))
	if err != nil {
		return false, err
	}
	if found && claim.UID == pv.Spec.ClaimRef.UID {
		return claim.Spec.VolumeName != "" && claim.Spec.VolumeName != pv.Name, nil
	}
	return true, nil
}

// recycleVolume scrubs a released volume with Recycle through a recycler
// pod and makes it Available again. Failures fail the volume.
func (c *Controller) recycleVolume(ctx context.Context, pv *v1.PersistentVolume) {
	logger := klog.FromContext(ctx)
	fresh, err := c.client.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{})
	if err != nil {
		logger.V(3).Info("Error reading persistent volume", "volumeName", pv.Name, "err", err)
		return
	}
	if released, err := c.isVolumeReleased(fresh); err != nil || !released {
		return
	}
	users, err := c.volumeUsers(fresh)
	if err != nil {
		logger.V(3).Info("Can't recycle volume", "volumeName", pv.Name, "err", err)
		return
	}
	_, claimCached, err := c.getClaim(claimRefKey(pv.Spec.ClaimRef))
	if err != nil {
		return
	}
	if len(users) > 0 && !claimCached {
		c.recorder.Event(pv, v1.EventTypeNormal, reasonVolumeFailedRecycle, fmt.Sprintf("Volume is used by pods: %s", strings.Join(users, ",")))
		return
	}
	pv = fresh
	if pv.Spec.HostPath == nil && pv.Spec.NFS == nil {
		if _, err := c.updateVolumePhaseWithEvent(ctx, pv, v1.VolumeFailed, v1.EventTypeWarning, reasonVolumeFailedRecycle, "No recycler plugin found for the volume!"); err != nil {
			logger.V(4).Info("RecycleVolumeOperation: failed to mark volume as failed", "volumeName", pv.Name, "err", err)
		}
		return
	}
	record := func(eventType, message string) {
		c.recorder.Eventf(pv, eventType, reasonRecyclerPod, "Recycler pod: %s", message)
	}
	if err := c.recycler.recycle(ctx, pv, record); err != nil {
		if _, err := c.updateVolumePhaseWithEvent(ctx, pv, v1.VolumeFailed, v1.EventTypeWarning, reasonVolumeFailedRecycle, fmt.Sprintf("Recycle failed: %s", err)); err != nil {
			logger.V(4).Info("RecycleVolumeOperation: failed to mark volume as failed", "volumeName", pv.Name, "err", err)
		}
		return
	}
	logger.V(2).Info("Volume recycled", "volumeName", pv.Name)
	c.recorder.Event(pv, v1.EventTypeNormal, reasonVolumeRecycled, "Volume recycled")
	if err := c.unbindVolume(ctx, pv); err != nil {
		logger.V(3).Info("RecycleVolumeOperation: failed to make recycled volume 'Available', we will recycle the volume again", "volumeName", pv.Name, "err", err)
	}
}
