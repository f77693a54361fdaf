package expand

import v1 "k8s.io/api/core/v1"

// migratedPlugin names the in-tree plugin of a volume whose plugin was
// migrated to CSI, and the CSI driver that replaced it (upstream's
// csi-translation-lib table).
type migratedPlugin struct {
	inTree, driver string
}

// migrated returns the migrated plugin of pv's source, if any.
func migrated(pv *v1.PersistentVolume) (migratedPlugin, bool) {
	s := &pv.Spec.PersistentVolumeSource
	switch {
	case s.AWSElasticBlockStore != nil:
		return migratedPlugin{"kubernetes.io/aws-ebs", "ebs.csi.aws.com"}, true
	case s.GCEPersistentDisk != nil:
		return migratedPlugin{"kubernetes.io/gce-pd", "pd.csi.storage.gke.io"}, true
	case s.AzureFile != nil:
		return migratedPlugin{"kubernetes.io/azure-file", "file.csi.azure.com"}, true
	case s.AzureDisk != nil:
		return migratedPlugin{"kubernetes.io/azure-disk", "disk.csi.azure.com"}, true
	case s.Cinder != nil:
		return migratedPlugin{"kubernetes.io/cinder", "cinder.csi.openstack.org"}, true
	case s.VsphereVolume != nil:
		return migratedPlugin{"kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com"}, true
	case s.PortworxVolume != nil:
		return migratedPlugin{"kubernetes.io/portworx-volume", "pxd.portworx.com"}, true
	}
	return migratedPlugin{}, false
}
