package config

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cmconfig "k8s.io/controller-manager/config"
	kcmv1alpha1 "k8s.io/kube-controller-manager/config/v1alpha1"
)

// ComponentConfig is the whole configuration of the controllers.
type ComponentConfig struct {
	Generic         cmconfig.GenericControllerManagerConfiguration
	KubeCloudShared KubeCloudSharedConfiguration

	AttachDetachController                    kcmv1alpha1.AttachDetachControllerConfiguration
	CSRSigningController                      kcmv1alpha1.CSRSigningControllerConfiguration
	DaemonSetController                       kcmv1alpha1.DaemonSetControllerConfiguration
	DeploymentController                      kcmv1alpha1.DeploymentControllerConfiguration
	DisruptionController                      kcmv1alpha1.DisruptionControllerConfiguration
	StatefulSetController                     kcmv1alpha1.StatefulSetControllerConfiguration
	EndpointController                        kcmv1alpha1.EndpointControllerConfiguration
	EndpointSliceController                   kcmv1alpha1.EndpointSliceControllerConfiguration
	EndpointSliceMirroringController          kcmv1alpha1.EndpointSliceMirroringControllerConfiguration
	EphemeralVolumeController                 kcmv1alpha1.EphemeralVolumeControllerConfiguration
	GarbageCollectorController                GarbageCollectorControllerConfiguration
	HPAController                             kcmv1alpha1.HPAControllerConfiguration
	JobController                             kcmv1alpha1.JobControllerConfiguration
	CronJobController                         kcmv1alpha1.CronJobControllerConfiguration
	LegacySATokenCleaner                      kcmv1alpha1.LegacySATokenCleanerConfiguration
	NamespaceController                       kcmv1alpha1.NamespaceControllerConfiguration
	NodeIPAMController                        kcmv1alpha1.NodeIPAMControllerConfiguration
	NodeLifecycleController                   kcmv1alpha1.NodeLifecycleControllerConfiguration
	PersistentVolumeBinderController          PersistentVolumeBinderControllerConfiguration
	PodGCController                           kcmv1alpha1.PodGCControllerConfiguration
	ReplicaSetController                      kcmv1alpha1.ReplicaSetControllerConfiguration
	ReplicationController                     kcmv1alpha1.ReplicationControllerConfiguration
	ResourceQuotaController                   kcmv1alpha1.ResourceQuotaControllerConfiguration
	SAController                              kcmv1alpha1.SAControllerConfiguration
	TTLAfterFinishedController                kcmv1alpha1.TTLAfterFinishedControllerConfiguration
	ValidatingAdmissionPolicyStatusController kcmv1alpha1.ValidatingAdmissionPolicyStatusControllerConfiguration
	DeviceTaintEvictionController             kcmv1alpha1.DeviceTaintEvictionControllerConfiguration
	ResourceClaimController                   kcmv1alpha1.ResourceClaimControllerConfiguration
	// Cloud holds the cloud controllers' settings that only
	// cloud-controller-manager has flags for; zero values mean upstream's
	// defaults.
	Cloud CloudControllersConfiguration
}

// CloudControllersConfiguration is cloud-controller-manager's
// configuration of the cloud controllers beyond KubeCloudShared.
type CloudControllersConfiguration struct {
	ConcurrentServiceSyncs       int32
	NodeStatusUpdateFrequency    metav1.Duration
	ConcurrentNodeSyncs          int32
	ConcurrentNodeStatusUpdates  int32
	ConcurrentNodeLifecycleSyncs int32
}

// KubeCloudSharedConfiguration is shared by the controllers that
// historically lived with the cloud providers (node IPAM, routes, service
// load balancers, node lifecycle).
type KubeCloudSharedConfiguration struct {
	CloudProviderName            string
	CloudConfigFile              string
	ExternalCloudVolumePlugin    string
	UseServiceAccountCredentials bool
	AllowUntaggedCloud           bool
	RouteReconciliationPeriod    metav1.Duration
	ClusterName                  string
	ClusterCIDR                  string
	AllocateNodeCIDRs            bool
	CIDRAllocatorType            string
	ConfigureCloudRoutes         bool
	NodeSyncPeriod               metav1.Duration
}

// GarbageCollectorControllerConfiguration mirrors the v1alpha1 type with a
// plain bool, which flags can bind to.
type GarbageCollectorControllerConfiguration struct {
	EnableGarbageCollector bool
	ConcurrentGCSyncs      int32
	GCIgnoredResources     []kcmv1alpha1.GroupResource
}

// PersistentVolumeBinderControllerConfiguration mirrors the v1alpha1 type
// with plain bools, which flags can bind to.
type PersistentVolumeBinderControllerConfiguration struct {
	PVClaimBinderSyncPeriod               metav1.Duration
	EnableHostPathProvisioning            bool
	EnableDynamicProvisioning             bool
	PersistentVolumeRecyclerConfiguration kcmv1alpha1.PersistentVolumeRecyclerConfiguration
	FlexVolumePluginDir                   string
}
