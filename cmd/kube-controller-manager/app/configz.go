package app

import (
	"fmt"

	cmconfigv1alpha1 "k8s.io/controller-manager/config/v1alpha1"
	kcmv1alpha1 "k8s.io/kube-controller-manager/config/v1alpha1"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controllermanager/config"
)

// externalConfig renders the configuration as the published
// KubeControllerManagerConfiguration v1alpha1, as upstream's /configz does.
func externalConfig(c *config.ComponentConfig) (*kcmv1alpha1.KubeControllerManagerConfiguration, error) {
	out := &kcmv1alpha1.KubeControllerManagerConfiguration{
		AttachDetachController:                    c.AttachDetachController,
		CSRSigningController:                      c.CSRSigningController,
		DaemonSetController:                       c.DaemonSetController,
		DeploymentController:                      c.DeploymentController,
		DisruptionController:                      c.DisruptionController,
		StatefulSetController:                     c.StatefulSetController,
		EndpointController:                        c.EndpointController,
		EndpointSliceController:                   c.EndpointSliceController,
		EndpointSliceMirroringController:          c.EndpointSliceMirroringController,
		EphemeralVolumeController:                 c.EphemeralVolumeController,
		HPAController:                             c.HPAController,
		JobController:                             c.JobController,
		CronJobController:                         c.CronJobController,
		LegacySATokenCleaner:                      c.LegacySATokenCleaner,
		NamespaceController:                       c.NamespaceController,
		NodeIPAMController:                        c.NodeIPAMController,
		NodeLifecycleController:                   c.NodeLifecycleController,
		PodGCController:                           c.PodGCController,
		ReplicaSetController:                      c.ReplicaSetController,
		ReplicationController:                     c.ReplicationController,
		ResourceQuotaController:                   c.ResourceQuotaController,
		SAController:                              c.SAController,
		TTLAfterFinishedController:                c.TTLAfterFinishedController,
		ValidatingAdmissionPolicyStatusController: c.ValidatingAdmissionPolicyStatusController,
		DeviceTaintEvictionController:             c.DeviceTaintEvictionController,
		ResourceClaimController:                   c.ResourceClaimController,
	}
	out.SetGroupVersionKind(kcmv1alpha1.SchemeGroupVersion.WithKind("KubeControllerManagerConfiguration"))
	if err := cmconfigv1alpha1.Convert_config_GenericControllerManagerConfiguration_To_v1alpha1_GenericControllerManagerConfiguration(&c.Generic, &out.Generic, nil); err != nil {
		return nil, fmt.Errorf("unable to convert configz: %w", err)
	}
	k := c.KubeCloudShared
	s := &out.KubeCloudShared
	s.CloudProvider.Name = k.CloudProviderName
	s.CloudProvider.CloudConfigFile = k.CloudConfigFile
	s.ExternalCloudVolumePlugin = k.ExternalCloudVolumePlugin
	s.UseServiceAccountCredentials = k.UseServiceAccountCredentials
	s.AllowUntaggedCloud = k.AllowUntaggedCloud
	s.RouteReconciliationPeriod = k.RouteReconciliationPeriod
	s.ClusterName = k.ClusterName
	s.ClusterCIDR = k.ClusterCIDR
	s.AllocateNodeCIDRs = k.AllocateNodeCIDRs
	s.CIDRAllocatorType = k.CIDRAllocatorType
	s.ConfigureCloudRoutes = ptr.To(k.ConfigureCloudRoutes)
	s.NodeSyncPeriod = k.NodeSyncPeriod

	gc := c.GarbageCollectorController
	out.GarbageCollectorController = kcmv1alpha1.GarbageCollectorControllerConfiguration{
		EnableGarbageCollector: ptr.To(gc.EnableGarbageCollector),
		ConcurrentGCSyncs:      gc.ConcurrentGCSyncs,
		GCIgnoredResources:     gc.GCIgnoredResources,
	}
	pv := c.PersistentVolumeBinderController
	out.PersistentVolumeBinderController = kcmv1alpha1.PersistentVolumeBinderControllerConfiguration{
		PVClaimBinderSyncPeriod: pv.PVClaimBinderSyncPeriod,
		VolumeConfiguration: kcmv1alpha1.VolumeConfiguration{
			EnableHostPathProvisioning:            ptr.To(pv.EnableHostPathProvisioning),
			EnableDynamicProvisioning:             ptr.To(pv.EnableDynamicProvisioning),
			PersistentVolumeRecyclerConfiguration: pv.PersistentVolumeRecyclerConfiguration,
			FlexVolumePluginDir:                   pv.FlexVolumePluginDir,
		},
	}
	return out, nil
}
