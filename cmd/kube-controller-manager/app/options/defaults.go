package options

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	componentbaseconfig "k8s.io/component-base/config"
	cmconfig "k8s.io/controller-manager/config"
	kcmv1alpha1 "k8s.io/kube-controller-manager/config/v1alpha1"

	"github.com/kcm-dev/kcm/pkg/controllermanager/config"
)

func d(v time.Duration) metav1.Duration { return metav1.Duration{Duration: v} }

// DefaultComponentConfig returns upstream v1.37's defaults for every field
// that a flag or a controller reads.
func DefaultComponentConfig() config.ComponentConfig {
	return config.ComponentConfig{
		Generic: cmconfig.GenericControllerManagerConfiguration{
			Address:         "0.0.0.0",
			MinResyncPeriod: d(12 * time.Hour),
			ClientConnection: componentbaseconfig.ClientConnectionConfiguration{
				ContentType: "application/vnd.kubernetes.protobuf",
				QPS:         20,
				Burst:       30,
			},
			ControllerStartInterval: d(0),
			LeaderElection: componentbaseconfig.LeaderElectionConfiguration{
				LeaderElect:       true,
				LeaseDuration:     d(15 * time.Second),
				RenewDeadline:     d(10 * time.Second),
				RetryPeriod:       d(2 * time.Second),
				ResourceLock:      "leases",
				ResourceName:      "kube-controller-manager",
				ResourceNamespace: "kube-system",
			},
			Controllers: []string{"*"},
			Debugging: componentbaseconfig.DebuggingConfiguration{
				EnableProfiling: true,
			},
		},
		KubeCloudShared: config.KubeCloudSharedConfiguration{
			RouteReconciliationPeriod: d(10 * time.Second),
			ClusterName:               "kubernetes",
			CIDRAllocatorType:         "RangeAllocator",
			ConfigureCloudRoutes:      true,
		},
		AttachDetachController: kcmv1alpha1.AttachDetachControllerConfiguration{
			ReconcilerSyncLoopPeriod: d(time.Minute),
		},
		CSRSigningController: kcmv1alpha1.CSRSigningControllerConfiguration{
			ClusterSigningDuration: d(365 * 24 * time.Hour),
		},
		DaemonSetController:              kcmv1alpha1.DaemonSetControllerConfiguration{ConcurrentDaemonSetSyncs: 2},
		DeploymentController:             kcmv1alpha1.DeploymentControllerConfiguration{ConcurrentDeploymentSyncs: 5},
		DisruptionController:             kcmv1alpha1.DisruptionControllerConfiguration{ConcurrentDisruptionSyncs: 1},
		StatefulSetController:            kcmv1alpha1.StatefulSetControllerConfiguration{ConcurrentStatefulSetSyncs: 5},
		EndpointController:               kcmv1alpha1.EndpointControllerConfiguration{ConcurrentEndpointSyncs: 5},
		EndpointSliceController:          kcmv1alpha1.EndpointSliceControllerConfiguration{ConcurrentServiceEndpointSyncs: 5, MaxEndpointsPerSlice: 100},
		EndpointSliceMirroringController: kcmv1alpha1.EndpointSliceMirroringControllerConfiguration{MirroringConcurrentServiceEndpointSyncs: 5, MirroringMaxEndpointsPerSubset: 1000},
		EphemeralVolumeController:        kcmv1alpha1.EphemeralVolumeControllerConfiguration{ConcurrentEphemeralVolumeSyncs: 5},
		GarbageCollectorController: config.GarbageCollectorControllerConfiguration{
			EnableGarbageCollector: true,
			ConcurrentGCSyncs:      20,
			// Upstream's DefaultIgnoredResources: events are never owners.
			GCIgnoredResources: []kcmv1alpha1.GroupResource{{Group: "", Resource: "events"}, {Group: "events.k8s.io", Resource: "events"}},
		},
		HPAController: kcmv1alpha1.HPAControllerConfiguration{
			ConcurrentHorizontalPodAutoscalerSyncs:              5,
			HorizontalPodAutoscalerSyncPeriod:                   d(15 * time.Second),
			HorizontalPodAutoscalerDownscaleStabilizationWindow: d(5 * time.Minute),
			HorizontalPodAutoscalerTolerance:                    0.1,
			HorizontalPodAutoscalerCPUInitializationPeriod:      d(5 * time.Minute),
			HorizontalPodAutoscalerInitialReadinessDelay:        d(30 * time.Second),
		},
		JobController:        kcmv1alpha1.JobControllerConfiguration{ConcurrentJobSyncs: 5},
		CronJobController:    kcmv1alpha1.CronJobControllerConfiguration{ConcurrentCronJobSyncs: 5},
		LegacySATokenCleaner: kcmv1alpha1.LegacySATokenCleanerConfiguration{CleanUpPeriod: d(365 * 24 * time.Hour)},
		NamespaceController:  kcmv1alpha1.NamespaceControllerConfiguration{NamespaceSyncPeriod: d(5 * time.Minute), ConcurrentNamespaceSyncs: 10},
		NodeLifecycleController: kcmv1alpha1.NodeLifecycleControllerConfiguration{
			NodeEvictionRate:          0.1,
			SecondaryNodeEvictionRate: 0.01,
			NodeStartupGracePeriod:    d(time.Minute),
			NodeMonitorGracePeriod:    d(50 * time.Second),
			PodEvictionTimeout:        d(5 * time.Minute),
			LargeClusterSizeThreshold: 50,
			UnhealthyZoneThreshold:    0.55,
			NodeMonitorPeriod:         d(5 * time.Second),
		},
		PersistentVolumeBinderController: config.PersistentVolumeBinderControllerConfiguration{
			PVClaimBinderSyncPeriod:   d(15 * time.Second),
			EnableDynamicProvisioning: true,
			PersistentVolumeRecyclerConfiguration: kcmv1alpha1.PersistentVolumeRecyclerConfiguration{
				MaximumRetry:             3,
				MinimumTimeoutNFS:        300,
				IncrementTimeoutNFS:      30,
				MinimumTimeoutHostPath:   60,
				IncrementTimeoutHostPath: 30,
			},
			FlexVolumePluginDir: "/usr/libexec/kubernetes/kubelet-plugins/volume/exec/",
		},
		PodGCController:                           kcmv1alpha1.PodGCControllerConfiguration{TerminatedPodGCThreshold: 12500},
		ReplicaSetController:                      kcmv1alpha1.ReplicaSetControllerConfiguration{ConcurrentRSSyncs: 5},
		ReplicationController:                     kcmv1alpha1.ReplicationControllerConfiguration{ConcurrentRCSyncs: 5},
		ResourceQuotaController:                   kcmv1alpha1.ResourceQuotaControllerConfiguration{ResourceQuotaSyncPeriod: d(5 * time.Minute), ConcurrentResourceQuotaSyncs: 5},
		SAController:                              kcmv1alpha1.SAControllerConfiguration{ConcurrentSATokenSyncs: 5},
		TTLAfterFinishedController:                kcmv1alpha1.TTLAfterFinishedControllerConfiguration{ConcurrentTTLSyncs: 5},
		ValidatingAdmissionPolicyStatusController: kcmv1alpha1.ValidatingAdmissionPolicyStatusControllerConfiguration{ConcurrentPolicySyncs: 5},
		DeviceTaintEvictionController:             kcmv1alpha1.DeviceTaintEvictionControllerConfiguration{ConcurrentSyncs: 8},
		ResourceClaimController:                   kcmv1alpha1.ResourceClaimControllerConfiguration{ConcurrentSyncs: 50},
	}
}
