package app

import (
	"fmt"

	ccmconfig "k8s.io/cloud-provider/config"
	ccmv1alpha1 "k8s.io/cloud-provider/config/v1alpha1"

	"github.com/kcm-dev/kcm/pkg/controllermanager/config"
)

// configzName is upstream's /configz section name.
const configzName = "cloudcontrollermanager.config.k8s.io"

// componentConfig is the configuration the shared ControllerContext hands
// the cloud controllers, from upstream's.
func componentConfig(u *ccmconfig.CloudControllerManagerConfiguration) config.ComponentConfig {
	k := u.KubeCloudShared
	var c config.ComponentConfig
	c.Generic = u.Generic
	c.KubeCloudShared = config.KubeCloudSharedConfiguration{
		CloudProviderName:            k.CloudProvider.Name,
		CloudConfigFile:              k.CloudProvider.CloudConfigFile,
		ExternalCloudVolumePlugin:    k.ExternalCloudVolumePlugin,
		UseServiceAccountCredentials: k.UseServiceAccountCredentials,
		AllowUntaggedCloud:           k.AllowUntaggedCloud,
		RouteReconciliationPeriod:    k.RouteReconciliationPeriod,
		ClusterName:                  k.ClusterName,
		ClusterCIDR:                  k.ClusterCIDR,
		AllocateNodeCIDRs:            k.AllocateNodeCIDRs,
		CIDRAllocatorType:            k.CIDRAllocatorType,
		ConfigureCloudRoutes:         k.ConfigureCloudRoutes,
		NodeSyncPeriod:               k.NodeSyncPeriod,
	}
	c.NodeLifecycleController.NodeMonitorPeriod = u.NodeLifecycleController.NodeMonitorPeriod
	c.Cloud = config.CloudControllersConfiguration{
		ConcurrentServiceSyncs:       u.ServiceController.ConcurrentServiceSyncs,
		NodeStatusUpdateFrequency:    u.NodeStatusUpdateFrequency,
		ConcurrentNodeSyncs:          u.NodeController.ConcurrentNodeSyncs,
		ConcurrentNodeStatusUpdates:  u.NodeController.ConcurrentNodeStatusUpdates,
		ConcurrentNodeLifecycleSyncs: u.NodeLifecycleController.ConcurrentNodeLifecycleSyncs,
	}
	return c
}

// externalConfig renders the configuration as the published
// CloudControllerManagerConfiguration v1alpha1, as upstream's /configz does.
func externalConfig(u *ccmconfig.CloudControllerManagerConfiguration) (*ccmv1alpha1.CloudControllerManagerConfiguration, error) {
	out := &ccmv1alpha1.CloudControllerManagerConfiguration{}
	if err := ccmv1alpha1.Convert_config_CloudControllerManagerConfiguration_To_v1alpha1_CloudControllerManagerConfiguration(u, out, nil); err != nil {
		return nil, fmt.Errorf("unable to convert configz: %w", err)
	}
	out.SetGroupVersionKind(ccmv1alpha1.SchemeGroupVersion.WithKind("CloudControllerManagerConfiguration"))
	return out, nil
}
