package persistentvolume

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/klog/v2"
)

// migratedPlugins maps the in-tree volume plugins whose CSI migration is
// GA (always on in v1.37) to their CSI drivers: claims and volumes of
// these provisioners are handed to the CSI driver, marked with
// pv.kubernetes.io/migrated-to.
var migratedPlugins = map[string]string{
	"kubernetes.io/aws-ebs":         "ebs.csi.aws.com",
	"kubernetes.io/gce-pd":          "pd.csi.storage.gke.io",
	"kubernetes.io/azure-disk":      "disk.csi.azure.com",
	"kubernetes.io/azure-file":      "file.csi.azure.com",
	"kubernetes.io/cinder":          "cinder.csi.openstack.org",
	"kubernetes.io/vsphere-volume":  "csi.vsphere.vmware.com",
	"kubernetes.io/portworx-volume": "pxd.portworx.com",
}

// updateMigrationAnnotations sets (or removes) migrated-to in ann from the
// provisioner annotation: a claim's storage-provisioner (or its beta
// spelling), a volume's provisioned-by. It reports whether ann changed.
func updateMigrationAnnotations(ann map[string]string, claim bool) bool {
	if ann == nil {
		return false
	}
	var provisioner string
	var ok bool
	if claim {
		if provisioner, ok = ann[storagehelpers.AnnStorageProvisioner]; !ok {
			provisioner, ok = ann[storagehelpers.AnnBetaStorageProvisioner]
		}
	} else {
		provisioner, ok = ann[storagehelpers.AnnDynamicallyProvisioned]
	}
	if !ok {
		return false
	}
	migratedTo := ann[storagehelpers.AnnMigratedTo]
	if driver, migrated := migratedPlugins[provisioner]; migrated {
		if migratedTo != driver {
			ann[storagehelpers.AnnMigratedTo] = driver
			return true
		}
		return false
	}
	if migratedTo != "" {
		delete(ann, storagehelpers.AnnMigratedTo)
		return true
	}
	return false
}

// updateClaimMigrationAnnotations returns a copy of the claim with its
// migration annotation right, written if it changed.
func (c *Controller) updateClaimMigrationAnnotations(ctx context.Context, claim *v1.PersistentVolumeClaim) (*v1.PersistentVolumeClaim, error) {
	clone := claim.DeepCopy()
	if !updateMigrationAnnotations(clone.Annotations, true) {
		return clone, nil
	}
	updated, err := c.updateClaim(ctx, clone)
	if err != nil {
		return nil, fmt.Errorf("persistent Volume Controller can't anneal migration annotations: %w", err)
	}
	return updated, nil
}

// updateVolumeMigrationAnnotationsAndFinalizers returns a copy of the
// volume with its migration annotation and deletion-protection finalizers
// right, written if they changed.
func (c *Controller) updateVolumeMigrationAnnotationsAndFinalizers(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	clone := pv.DeepCopy()
	annChanged := updateMigrationAnnotations(clone.Annotations, false)
	finalizers, finalizersChanged := deletionFinalizers(klog.FromContext(ctx), clone)
	if !annChanged && !finalizersChanged {
		return clone, nil
	}
	if finalizersChanged {
		clone.Finalizers = finalizers
	}
	updated, err := c.updateVolume(ctx, clone)
	if err != nil {
		return nil, fmt.Errorf("persistent Volume Controller can't anneal migration annotations or finalizer: %w", err)
	}
	return updated, nil
}

// deletionFinalizers is upstream's rule for the finalizers of dynamically
// provisioned volumes: an in-tree provisioner's volume with Delete keeps
// kubernetes.io/pv-controller (and never the external provisioner's), with
// Retain or Recycle has neither; a migrated one loses the in-tree one;
// other volumes are left alone.
func deletionFinalizers(logger klog.Logger, pv *v1.PersistentVolume) ([]string, bool) {
	if !metav1.HasAnnotation(pv.ObjectMeta, storagehelpers.AnnDynamicallyProvisioned) {
		return pv.Finalizers, false
	}
	out := slices.Clone(pv.Finalizers)
	changed := false
	remove := func(f string) {
		if slices.Contains(out, f) {
			out = slices.DeleteFunc(out, func(s string) bool { return s == f })
			changed = true
		}
	}
	provisioner := pv.Annotations[storagehelpers.AnnDynamicallyProvisioned]
	if _, migrated := migratedPlugins[provisioner]; migrated {
		remove(storagehelpers.PVDeletionInTreeProtectionFinalizer)
		return out, changed
	}
	if !strings.HasPrefix(provisioner, "kubernetes.io/") {
		return pv.Finalizers, false
	}
	switch pv.Spec.PersistentVolumeReclaimPolicy {
	case v1.PersistentVolumeReclaimDelete:
		if !slices.Contains(out, storagehelpers.PVDeletionInTreeProtectionFinalizer) {
			logger.V(4).Info("Adding in-tree pv deletion protection finalizer on volume", "volumeName", pv.Name)
			out = append(out, storagehelpers.PVDeletionInTreeProtectionFinalizer)
			changed = true
		}
	case v1.PersistentVolumeReclaimRetain, v1.PersistentVolumeReclaimRecycle:
		remove(storagehelpers.PVDeletionInTreeProtectionFinalizer)
	}
	remove(storagehelpers.PVDeletionProtectionFinalizer)
	return out, changed
}

// defaultClass returns the default StorageClass: of several, the newest,
// ties broken by name.
func defaultClass(lister storagelisters.StorageClassLister) (*storagev1.StorageClass, error) {
	classes, err := lister.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var defaults []*storagev1.StorageClass
	for _, class := range classes {
		if class.Annotations["storageclass.kubernetes.io/is-default-class"] == "true" ||
			class.Annotations["storageclass.beta.kubernetes.io/is-default-class"] == "true" {
			defaults = append(defaults, class)
		}
	}
	if len(defaults) == 0 {
		return nil, nil
	}
	sort.Slice(defaults, func(i, j int) bool {
		ti, tj := defaults[i].CreationTimestamp.UnixNano(), defaults[j].CreationTimestamp.UnixNano()
		if ti == tj {
			return defaults[i].Name < defaults[j].Name
		}
		return ti > tj
	})
	return defaults[0], nil
}
