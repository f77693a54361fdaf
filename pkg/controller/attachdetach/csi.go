package attachdetach

import (
	"crypto/sha256"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
)

const (
	// csiPluginName is the name of upstream's CSI volume plugin, the prefix
	// of every unique volume name the controller reports.
	csiPluginName = "kubernetes.io/csi"
	// volNameSep separates the driver from the volume handle in the
	// plugin's volume name.
	volNameSep = "^"
)

// uniqueVolumeName is the name a CSI volume has in node.status.volumesAttached
// and volumesInUse: kubernetes.io/csi/<driver>^<handle>.
func uniqueVolumeName(driver, handle string) v1.UniqueVolumeName {
	return v1.UniqueVolumeName(csiPluginName + "/" + driver + volNameSep + handle)
}

// splitUniqueVolumeName is the inverse of uniqueVolumeName; ok is false for
// names of other plugins or malformed ones.
func splitUniqueVolumeName(name v1.UniqueVolumeName) (driver, handle string, ok bool) {
	rest, found := strings.CutPrefix(string(name), csiPluginName+"/")
	if !found {
		return "", "", false
	}
	parts := strings.Split(rest, volNameSep)
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// attachmentName is upstream's VolumeAttachment name for a volume on a node.
func attachmentName(handle, driver, node string) string {
	return fmt.Sprintf("csi-%x", sha256.Sum256([]byte(handle+driver+node)))
}
