package persistentvolume

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/reference"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/klog/v2"
)

const nfsPluginName = "kubernetes.io/nfs"

// provisionClaim starts provisioning a claim that has a StorageClass and
// no volume: handed to an external provisioner (the claim is annotated
// with its name and an ExternalProvisioning Event says so), or done by the
// hostPath plugin. A class or provisioner that cannot work is a
// ProvisioningFailed Event; the periodic resync retries.
func (c *Controller) provisionClaim(ctx context.Context, claim *v1.PersistentVolumeClaim) error {
	if !c.dynamic {
		return nil
	}
	logger := klog.FromContext(ctx)
	internal, class, err := c.findProvisioner(claim)
	if err != nil {
		c.recorder.Event(claim, v1.EventTypeWarning, reasonProvisioningFailed, err.Error())
		logger.Error(err, "Error finding provisioning plugin for claim", "PVC", klog.KObj(claim))
		return nil
	}
	name := fmt.Sprintf("provision-%s[%s]", claimKey(claim), claim.UID)
	c.ops.run(logger, name, func() error {
		key := claimKey(claim)
		c.opTimes.start(key, provisionerName(internal, class), opNameProvision)
		var err error
		if internal {
			err = c.provisionHostPath(ctx, claim, class)
		} else {
			err = c.provisionExternal(ctx, claim, class)
		}
		if err != nil {
			c.opTimes.failed(key)
		}
		return err
	})
	return nil
}

// findProvisioner returns the claim's class and whether the built-in
// hostPath plugin provisions it. Provisioners outside kubernetes.io/ (and
// migrated in-tree ones) are external; other kubernetes.io/ names are
// errors, with the volume plugin manager's messages.
func (c *Controller) findProvisioner(claim *v1.PersistentVolumeClaim) (bool, *storagev1.StorageClass, error) {
	class, err := c.classLister.Get(storagehelpers.GetPersistentVolumeClaimClass(claim))
	if err != nil {
		return false, nil, err
	}
	if _, migrated := migratedPlugins[class.Provisioner]; migrated {
		return false, class, nil
	}
	switch {
	case class.Provisioner == hostPathPluginName:
		return true, class, nil
	case class.Provisioner == nfsPluginName:
		return false, class, errors.New("no provisionable volume plugin matched")
	case strings.HasPrefix(class.Provisioner, "kubernetes.io/"):
		return false, class, fmt.Errorf("no volume plugin matched name: %s", class.Provisioner)
	}
	return false, class, nil
}

// provisionExternal annotates the claim for the external provisioner.
func (c *Controller) provisionExternal(ctx context.Context, claim *v1.PersistentVolumeClaim, class *storagev1.StorageClass) error {
	provisioner := class.Provisioner
	if driver, migrated := migratedPlugins[provisioner]; migrated {
		provisioner = driver
	}
	claim, err := c.setClaimProvisioner(ctx, claim, provisioner)
	if err != nil {
		c.recorder.Event(claim, v1.EventTypeWarning, reasonProvisioningFailed, fmt.Sprintf("Error saving claim: %v", err))
		return err
	}
	msg := fmt.Sprintf("Waiting for a volume to be created either by the external provisioner '%s' "+
		"or manually by the system administrator. If volume creation is delayed, please verify that "+
		"the provisioner is running and correctly registered.", provisioner)
	c.recorder.Event(claim, v1.EventTypeNormal, reasonExternalProvisioning, msg)
	return nil
}

// setClaimProvisioner writes the provisioner's name into the claim's
// storage-provisioner annotations (both spellings).
func (c *Controller) setClaimProvisioner(ctx context.Context, claim *v1.PersistentVolumeClaim, provisioner string) (*v1.PersistentVolumeClaim, error) {
	if claim.Annotations[storagehelpers.AnnStorageProvisioner] == provisioner {
		return claim, nil
	}
	clone := claim.DeepCopy()
	metav1.SetMetaDataAnnotation(&clone.ObjectMeta, storagehelpers.AnnBetaStorageProvisioner, provisioner)
	metav1.SetMetaDataAnnotation(&clone.ObjectMeta, storagehelpers.AnnStorageProvisioner, provisioner)
	updateMigrationAnnotations(clone.Annotations, true)
	updated, err := c.updateClaim(ctx, clone)
	if err != nil {
		return claim, err
	}
	return updated, nil
}

// provisionHostPath provisions a claim with the hostPath plugin: a
// directory under /tmp/hostpath_pv on this machine and a volume
// pvc-<claim uid> bound to the claim.
func (c *Controller) provisionHostPath(ctx context.Context, claim *v1.PersistentVolumeClaim, class *storagev1.StorageClass) error {
	logger := klog.FromContext(ctx)
	if claim.Spec.DataSource != nil {
		msg := fmt.Sprintf("plugin %q is not a CSI plugin. Only CSI plugin can provision a claim with a datasource", hostPathPluginName)
		c.recorder.Event(claim, v1.EventTypeWarning, reasonProvisioningFailed, msg)
		return errors.New(msg)
	}
	claim, err := c.setClaimProvisioner(ctx, claim, class.Provisioner)
	if err != nil {
		return err
	}
	pvName := "pvc-" + string(claim.UID)
	if _, err := c.client.CoreV1().PersistentVolumes().Get(ctx, pvName, metav1.GetOptions{}); err == nil {
		logger.V(4).Info("provisionClaimOperation: volume already exists, skipping", "PVC", klog.KObj(claim))
		return nil
	} else if !apierrors.IsNotFound(err) {
		return err
	}
	claimRef, err := reference.GetReference(scheme.Scheme, claim)
	if err != nil {
		return err
	}
	if len(class.MountOptions) > 0 {
		c.recorder.Event(claim, v1.EventTypeWarning, reasonProvisioningFailed, fmt.Sprintf("Mount options are not supported by the provisioner but StorageClass %q has mount options %v", class.Name, class.MountOptions))
		return fmt.Errorf("provisioner %q doesn't support mount options", hostPathPluginName)
	}
	if !c.hostPath.config.ProvisioningEnabled {
		err := fmt.Errorf("provisioning in volume plugin %q is disabled", hostPathPluginName)
		c.recorder.Event(claim, v1.EventTypeWarning, reasonProvisioningFailed, fmt.Sprintf("Failed to create provisioner: %v", err))
		return err
	}
	if nodeName, ok := claim.Annotations[storagehelpers.AnnSelectedNode]; ok {
		if _, err := c.nodeLister.Get(nodeName); err != nil {
			c.recorder.Event(claim, v1.EventTypeWarning, reasonProvisioningFailed, fmt.Sprintf("Failed to get target node: %v", err))
			return err
		}
	}
	reclaim := v1.PersistentVolumeReclaimDelete
	if class.ReclaimPolicy != nil {
		reclaim = *class.ReclaimPolicy
	}
	start := time.Now()
	pv, err := c.hostPath.provision(pvName, claim, reclaim)
	observeStorageOperation(hostPathPluginName, opNameVolumeProvision, start, err)
	if err != nil {
		c.rescheduleProvisioning(ctx, claim)
		c.recorder.Event(claim, v1.EventTypeWarning, reasonProvisioningFailed, fmt.Sprintf("Failed to provision volume with StorageClass %q: %v", class.Name, err))
		return err
	}
	pv.Spec.ClaimRef = claimRef
	pv.Status.Phase = v1.VolumeBound
	pv.Spec.StorageClassName = storagehelpers.GetPersistentVolumeClaimClass(claim)
	metav1.SetMetaDataAnnotation(&pv.ObjectMeta, storagehelpers.AnnBoundByController, "yes")
	metav1.SetMetaDataAnnotation(&pv.ObjectMeta, storagehelpers.AnnDynamicallyProvisioned, hostPathPluginName)
	if pv.Spec.PersistentVolumeReclaimPolicy == v1.PersistentVolumeReclaimDelete {
		pv.Finalizers = []string{storagehelpers.PVDeletionInTreeProtectionFinalizer}
	}

	for i := 0; i < createProvisionedPVRetryCount; i++ {
		var created *v1.PersistentVolume
		created, err = c.client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
		if err == nil {
			if _, err := c.storeVolume(created); err != nil {
				logger.V(4).Info("provisionClaimOperation: cannot update internal cache", "volumeName", pv.Name, "err", err)
			}
			break
		}
		if apierrors.IsAlreadyExists(err) {
			err = nil
			break
		}
		logger.V(3).Info("Failed to save volume for claim", "PVC", klog.KObj(claim), "volumeName", pv.Name, "err", err)
		if !sleep(ctx, c.retryEvery) {
			return ctx.Err()
		}
	}
	if err == nil {
		logger.V(2).Info("Volume provisioned for claim", "PVC", klog.KObj(claim), "volumeName", pv.Name)
		c.recorder.Event(claim, v1.EventTypeNormal, reasonProvisioningSucceeded, fmt.Sprintf("Successfully provisioned volume %s using %s", pv.Name, hostPathPluginName))
		return nil
	}

	// The volume object could not be saved: remove what was provisioned.
	c.recorder.Event(claim, v1.EventTypeWarning, reasonProvisioningFailed, fmt.Sprintf("Error creating provisioned PV object for claim %s: %v. Deleting the volume.", claimKey(claim), err))
	var deleteErr error
	for i := 0; i < createProvisionedPVRetryCount; i++ {
		if deleteErr = c.deleteWithPlugin(ctx, pv, nil); deleteErr == nil {
			break
		}
		logger.V(3).Info("Failed to delete volume", "volumeName", pv.Name, "err", deleteErr)
		if !sleep(ctx, c.retryEvery) {
			return ctx.Err()
		}
	}
	if deleteErr != nil {
		c.recorder.Event(claim, v1.EventTypeWarning, reasonProvisioningCleanupFailed, fmt.Sprintf("Error cleaning provisioned volume for claim %s: %v. Please delete manually.", claimKey(claim), deleteErr))
	}
	return nil
}

// rescheduleProvisioning removes the scheduler's selected-node annotation
// after a failed provisioning, so that the scheduler picks a node again.
func (c *Controller) rescheduleProvisioning(ctx context.Context, claim *v1.PersistentVolumeClaim) {
	if _, ok := claim.Annotations[storagehelpers.AnnSelectedNode]; !ok {
		return
	}
	clone := claim.DeepCopy()
	delete(clone.Annotations, storagehelpers.AnnSelectedNode)
	if _, err := c.updateClaim(ctx, clone); err != nil {
		klog.FromContext(ctx).V(4).Info("Failed to delete annotation 'storagehelpers.AnnSelectedNode' for PersistentVolumeClaim", "PVC", klog.KObj(clone), "err", err)
	}
}

// sleep waits d or until ctx is done; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
