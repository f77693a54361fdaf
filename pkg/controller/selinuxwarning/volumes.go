package selinuxwarning

import (
	"net/url"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// Upstream's volume plugin names, the prefix of a volume's unique name.
const (
	pluginCSI   = "kubernetes.io/csi"
	pluginFC    = "kubernetes.io/fc"
	pluginISCSI = "kubernetes.io/iscsi"
)

// mountable is a pod volume resolved (through its claim and volume, if
// any) to what the kubelet would mount.
type mountable struct {
	// name identifies the volume across pods, as upstream's unique volume
	// name; "" for volumes that are not tracked.
	name v1.UniqueVolumeName
	// csiDriver is the CSI driver of a CSI volume, or of an in-tree volume
	// migrated to CSI; whether it mounts with -o context is its CSIDriver's
	// seLinuxMount.
	csiDriver string
	// contextMount is whether an in-tree plugin mounts with -o context.
	contextMount bool
}

// The volumes upstream's controller knows, with their plugins: CSI, in-tree
// volumes migrated to CSI (as their CSI drivers), FC and iSCSI (always
// -o context), hostPath and NFS (never). Volumes of hostPath and NFS, like
// every other plugin's, are not tracked here: a plugin without -o context
// forces the Recursive policy and an empty mount label on every pod, so
// they never conflict. Inline CSI volumes are not tracked either: upstream
// fails to name them (and retries them for ever).

// persistentMountable resolves a PersistentVolume's source.
func persistentMountable(pv *v1.PersistentVolume) mountable {
	s := &pv.Spec.PersistentVolumeSource
	switch {
	case s.CSI != nil:
		return csiMountable(s.CSI.Driver, s.CSI.VolumeHandle)
	case s.FC != nil:
		return fcMountable(s.FC)
	case s.ISCSI != nil:
		return iscsiMountable(s.ISCSI.TargetPortal, s.ISCSI.IQN, s.ISCSI.Lun)
	case s.AWSElasticBlockStore != nil:
		return csiMountable("ebs.csi.aws.com", ebsHandle(s.AWSElasticBlockStore.VolumeID))
	case s.GCEPersistentDisk != nil:
		return csiMountable("pd.csi.storage.gke.io", s.GCEPersistentDisk.PDName)
	case s.AzureDisk != nil:
		return csiMountable("disk.csi.azure.com", s.AzureDisk.DataDiskURI)
	case s.AzureFile != nil:
		// The translated handle includes the volume's name.
		return csiMountable("file.csi.azure.com", s.AzureFile.SecretName+"#"+s.AzureFile.ShareName+"#"+pv.Name)
	case s.Cinder != nil:
		return csiMountable("cinder.csi.openstack.org", s.Cinder.VolumeID)
	case s.VsphereVolume != nil:
		return csiMountable("csi.vsphere.vmware.com", s.VsphereVolume.VolumePath)
	case s.PortworxVolume != nil:
		return csiMountable("pxd.portworx.com", s.PortworxVolume.VolumeID)
	}
	return mountable{}
}

// inlineMountable resolves a pod's inline volume source.
func inlineMountable(pod *v1.Pod, vol *v1.Volume) mountable {
	s := &vol.VolumeSource
	switch {
	case s.CSI != nil:
		return mountable{csiDriver: s.CSI.Driver}
	case s.FC != nil:
		return fcMountable(s.FC)
	case s.ISCSI != nil:
		return iscsiMountable(s.ISCSI.TargetPortal, s.ISCSI.IQN, s.ISCSI.Lun)
	case s.AWSElasticBlockStore != nil:
		return csiMountable("ebs.csi.aws.com", ebsHandle(s.AWSElasticBlockStore.VolumeID))
	case s.GCEPersistentDisk != nil:
		return csiMountable("pd.csi.storage.gke.io", s.GCEPersistentDisk.PDName)
	case s.AzureDisk != nil:
		return csiMountable("disk.csi.azure.com", s.AzureDisk.DataDiskURI)
	case s.AzureFile != nil:
		// The translated handle includes the volume's name and the pod's
		// namespace.
		return csiMountable("file.csi.azure.com", s.AzureFile.SecretName+"#"+s.AzureFile.ShareName+"#"+vol.Name+"#"+pod.Namespace)
	case s.Cinder != nil:
		return csiMountable("cinder.csi.openstack.org", s.Cinder.VolumeID)
	case s.VsphereVolume != nil:
		return csiMountable("csi.vsphere.vmware.com", s.VsphereVolume.VolumePath)
	case s.PortworxVolume != nil:
		return csiMountable("pxd.portworx.com", s.PortworxVolume.VolumeID)
	}
	return mountable{}
}

func csiMountable(driver, handle string) mountable {
	return mountable{name: v1.UniqueVolumeName(pluginCSI + "/" + driver + "^" + handle), csiDriver: driver}
}

// fcMountable names an FC volume by its target WWNs and LUN, or else its
// WWIDs, as upstream's plugin does.
func fcMountable(s *v1.FCVolumeSource) mountable {
	var id string
	switch {
	case len(s.TargetWWNs) != 0 && s.Lun != nil:
		id = "[" + strings.Join(s.TargetWWNs, " ") + "]:" + strconv.Itoa(int(*s.Lun))
	case len(s.WWIDs) != 0:
		id = "[" + strings.Join(s.WWIDs, " ") + "]"
	default:
		return mountable{contextMount: true}
	}
	return mountable{name: v1.UniqueVolumeName(pluginFC + "/" + id), contextMount: true}
}

func iscsiMountable(portal, iqn string, lun int32) mountable {
	return mountable{name: v1.UniqueVolumeName(pluginISCSI + "/" + portal + ":" + iqn + ":" + strconv.Itoa(int(lun))), contextMount: true}
}

// ebsHandle is the EBS volume ID of an in-tree volume ID
// (aws://<zone>/<id> or a bare ID), as the CSI translation has it.
func ebsHandle(id string) string {
	if !strings.HasPrefix(id, "aws://") {
		return id
	}
	u, err := url.Parse(id)
	if err != nil {
		return id
	}
	return strings.Trim(u.Path, "/")
}
