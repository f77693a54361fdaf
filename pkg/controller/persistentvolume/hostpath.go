package persistentvolume

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
)

const (
	hostPathPluginName = "kubernetes.io/host-path"
	// annCreatedBy marks the volumes the hostPath provisioner made.
	annCreatedBy = "kubernetes.io/createdby"
	// defaultHostPathDir is where upstream's test-only provisioner makes
	// its directories, on the controller manager's machine.
	defaultHostPathDir = "/tmp/hostpath_pv"
)

// hostPathDeletable is the only place the hostPath deleter removes
// directories from (upstream's unanchored pattern).
var hostPathDeletable = regexp.MustCompile("/tmp/.+")

// HostPathConfig configures upstream's test-only hostPath plugin.
type HostPathConfig struct {
	// ProvisioningEnabled is --enable-hostpath-provisioner.
	ProvisioningEnabled bool
	// Dir is where provisioned directories are made; defaults to
	// /tmp/hostpath_pv.
	Dir string
}

type hostPathPlugin struct {
	config HostPathConfig
}

func newHostPathPlugin(cfg HostPathConfig) hostPathPlugin {
	if cfg.Dir == "" {
		cfg.Dir = defaultHostPathDir
	}
	return hostPathPlugin{config: cfg}
}

// provision makes a fresh directory and returns the volume describing it,
// not yet bound: named pvName, with the claim's access modes (or
// ReadWriteOnce) and requested size.
func (p hostPathPlugin) provision(pvName string, claim *v1.PersistentVolumeClaim, reclaim v1.PersistentVolumeReclaimPolicy) (*v1.PersistentVolume, error) {
	if claim.Spec.VolumeMode != nil && *claim.Spec.VolumeMode == v1.PersistentVolumeBlock {
		return nil, fmt.Errorf("%s does not support block volume provisioning", hostPathPluginName)
	}
	path := filepath.Join(p.config.Dir, string(uuid.NewUUID()))
	modes := claim.Spec.AccessModes
	if len(modes) == 0 {
		modes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}
	}
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:        pvName,
			Annotations: map[string]string{annCreatedBy: "hostpath-dynamic-provisioner"},
		},
		Spec: v1.PersistentVolumeSpec{
			PersistentVolumeReclaimPolicy: reclaim,
			AccessModes:                   modes,
			Capacity:                      v1.ResourceList{v1.ResourceStorage: claim.Spec.Resources.Requests[v1.ResourceStorage]},
			PersistentVolumeSource: v1.PersistentVolumeSource{
				HostPath: &v1.HostPathVolumeSource{Path: path},
			},
		},
	}
	if err := os.MkdirAll(path, 0o750); err != nil {
		return nil, err
	}
	return pv, nil
}

// delete removes a hostPath volume's directory, only under /tmp.
func (p hostPathPlugin) delete(pv *v1.PersistentVolume) error {
	if pv.Spec.HostPath == nil {
		return fmt.Errorf("spec.PersistentVolumeSource.HostPath is nil")
	}
	path := pv.Spec.HostPath.Path
	if !hostPathDeletable.MatchString(path) {
		return fmt.Errorf("host_path deleter only supports /tmp/.+ but received provided %s", path)
	}
	return os.RemoveAll(path)
}
