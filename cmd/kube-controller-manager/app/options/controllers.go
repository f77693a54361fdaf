package options

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/kcm-dev/kcm/pkg/controllermanager/config"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
)

// flagGroup is one per-controller help section of --help: its flags and
// their validation, in upstream's words.
type flagGroup struct {
	section  string
	add      func(fs *pflag.FlagSet, c *config.ComponentConfig)
	validate func(c *config.ComponentConfig) []error
}

// positive returns upstream's "<flag> must be greater than 0" error.
func positive(flag string, v int32) []error {
	if v < 1 {
		return []error{fmt.Errorf("%s must be greater than 0, but got %d", flag, v)}
	}
	return nil
}

func within(flag string, v, lo, hi int32) []error {
	switch {
	case v < lo:
		return []error{fmt.Errorf("%s must not be less than %d, but got %d", flag, lo, v)}
	case v > hi:
		return []error{fmt.Errorf("%s must not be more than %d, but got %d", flag, hi, v)}
	}
	return nil
}

const moreLoad = ", but more CPU (and network) load"

// controllerFlagGroups lists the per-controller sections in upstream's
// order.
func controllerFlagGroups() []flagGroup {
	return []flagGroup{
		{section: names.PersistentVolumeAttachDetach, add: func(fs *pflag.FlagSet, c *config.ComponentConfig) {
			o := &c.AttachDetachController
			fs.BoolVar(&o.DisableAttachDetachReconcilerSync, "disable-attach-detach-reconcile-sync", false, "Disable volume attach detach reconciler sync. Disabling this may cause volumes to be mismatched with pods. Use wisely.")
			fs.DurationVar(&o.ReconcilerSyncLoopPeriod.Duration, "attach-detach-reconcile-sync-period", o.ReconcilerSyncLoopPeriod.Duration, "The reconciler sync wait time between volume attach detach. This duration must be larger than one second, and increasing this value from the default may allow for volumes to be mismatched with pods.")
			fs.BoolVar(&o.DisableForceDetachOnTimeout, "disable-force-detach-on-timeout", false, "Prevent force detaching volumes based on maximum unmount time and node status. If this flag is set to true, the non-graceful node shutdown feature must be used to recover from node failure. See https://k8s.io/docs/storage-disable-force-detach-on-timeout/.")
		}, validate: func(c *config.ComponentConfig) []error {
			if c.AttachDetachController.ReconcilerSyncLoopPeriod.Duration < time.Second {
				return []error{fmt.Errorf("--attach-detach-reconcile-sync-period must be at least one second, but got %s", c.AttachDetachController.ReconcilerSyncLoopPeriod.Duration)}
			}
			return nil
		}},
		{section: names.CertificateSigningRequestSigning, add: addCSRSigningFlags, validate: validateCSRSigning},
		{section: names.Deployment, add: func(fs *pflag.FlagSet, c *config.ComponentConfig) {
			fs.Int32Var(&c.DeploymentController.ConcurrentDeploymentSyncs, "concurrent-deployment-syncs", c.DeploymentController.ConcurrentDeploymentSyncs, "The number of deployment objects that are allowed to sync concurrently. Larger number = more responsive deployments"+moreLoad)
		}, validate: func(c *config.ComponentConfig) []error {
			return positive("concurrent-deployment-syncs", c.DeploymentController.ConcurrentDeploymentSyncs)
		}},
		{section: names.Disruption, add: func(fs *pflag.FlagSet, c *config.ComponentConfig) {
			fs.Int32Var(&c.DisruptionController.ConcurrentDisruptionSyncs, "concurrent-disruption-syncs", c.DisruptionController.ConcurrentDisruptionSyncs, "The number of PDB objects that are allowed to sync concurrently. Larger number = more responsive PDB updates"+moreLoad)
		}, validate: func(c *config.ComponentConfig) []error {
			return positive("concurrent-disruption-syncs", c.DisruptionController.ConcurrentDisruptionSyncs)
		}},
		{section: names.DeviceTaintEviction, add: func(fs *pflag.FlagSet, c *config.ComponentConfig) {
			fs.Int32Var(&c.DeviceTaintEvictionController.ConcurrentSyncs, "concurrent-device-taint-eviction-syncs", c.DeviceTaintEvictionController.ConcurrentSyncs, "The number of operations (evicting pods, updating DeviceTaintRule status) allowed to run concurrently. Greater number = more responsive"+moreLoad)
		}, validate: func(c *config.ComponentConfig) []error {
			return positive("concurrent-device-taint-eviction-syncs", c.DeviceTaintEvictionController.ConcurrentSyncs)
		}},
		{section: names.ResourceClaim, add: func(fs *pflag.FlagSet, c *config.ComponentConfig) {
			fs.Int32Var(&c.ResourceClaimController.ConcurrentSyncs, "concurrent-resourceclaim-syncs", c.ResourceClaimController.ConcurrentSyncs, "The number of operations (creating or deleting ResourceClaims) allowed to run concurrently. Larger number = more responsive"+moreLoad)
		}, validate: func(c *config.ComponentConfig) []error {
			return positive("concurrent-resourceclaim-syncs", c.ResourceClaimController.ConcurrentSyncs)
		}},
		{section: names.StatefulSet, add: func(fs *pflag.FlagSet, c *config.ComponentConfig) {
			fs.Int32Var(&c.StatefulSetController.ConcurrentStatefulSetSyncs, "concurrent-statefulset-syncs", c.StatefulSetController.ConcurrentStatefulSetSyncs, "The number of statefulset objects that are allowed to sync concurrently. Larger number = more responsive statefulsets"+moreLoad)
		}, validate: func(c *config.ComponentConfig) []error {
			return positive("concurrent-statefulset-syncs", c.StatefulSetController.ConcurrentStatefulSetSyncs)
		}},
		{section: names.DaemonSet, add: func(fs *pflag.FlagSet, c *config.ComponentConfig) {
			fs.Int32Var(&c.DaemonSetController.ConcurrentDaemonSetSyncs, "concurrent-daemonset-syncs", c.DaemonSetController.ConcurrentDaemonSetSyncs, "The number of daemonset objects that are allowed to sync concurrently. Larger number = more responsive daemonsets"+moreLoad)
		}, validate: func(c *config.ComponentConfig) []error {
			return positive("concurrent-daemonset-syncs", c.DaemonSetController.ConcurrentDaemonSetSyncs)
		}},
		{section: names.Endpoints, add: func(fs *pflag.FlagSet, c *config.ComponentConfig) {
			o := &c.EndpointController
			fs.Int32Var(&o.ConcurrentEndpointSyncs, "concurrent-endpoint-syncs", o.ConcurrentEndpointSyncs, "The number of endpoint syncing operations that will be done concurrently. Larger number = faster endpoint updating"+moreLoad)
			fs.DurationVar(&o.EndpointUpdatesBatchPeriod.Duration, "endpoint-updates-batch-period", o.EndpointUpdatesBatchPeriod.Duration, "The length of endpoint updates batching period. Processing of pod changes will be delayed by this duration to join them with potential upcoming updates and reduce the overall number of endpoints updates. Larger number = higher endpoint programming latency, but lower number of endpoints revision generated")
		}, validate: func(c *config.ComponentConfig) []error {
			return positive("concurrent-endpoint-syncs", c.EndpointController.ConcurrentEndpointSyncs)
		}},
		{section: names.EndpointSlice, add: func(fs *pflag.FlagSet, c *config.ComponentConfig) {
			o := &c.EndpointSliceController
			fs.Int32Var(&o.ConcurrentServiceEndpointSyncs, "concurrent-service-endpoint-syncs", o.ConcurrentServiceEndpointSyncs, "The number of service endpoint syncing operations that will be done concurrently. Larger number = faster endpoint slice updating"+moreLoad+". Defaults to 5.")
			fs.Int32Var(&o.MaxEndpointsPerSlice, "max-endpoints-per-slice", o.MaxEndpointsPerSlice, "The maximum number of endpoints that will be added to an EndpointSlice. More endpoints per slice will result in less endpoint slices, but larger resources. Defaults to 100.")
			fs.DurationVar(&o.EndpointUpdatesBatchPeriod.Duration, "endpointslice-updates-batch-period", o.EndpointUpdatesBatchPeriod.Duration, "The length of endpoint slice updates batching period. Processing of pod changes will be delayed by this duration to join them with potential upcoming updates and reduce the overall number of endpoints updates. Larger number = higher endpoint programming latency, but lower number of endpoints revision generated")
		}, validate: func(c *config.ComponentConfig) []error {
			o := c.EndpointSliceController
			return append(within("concurrent-service-endpoint-syncs", o.ConcurrentServiceEndpointSyncs, 1, 50),
				within("max-endpoints-per-slice", o.MaxEndpointsPerSlice, 1, 1000)...)
		}},
		{section: names.EndpointSliceMirroring, add: func(fs *pflag.FlagSet, c *config.ComponentConfig) {
			o := &c.EndpointSliceMirroringController
			fs.Int32Var(&o.MirroringConcurrentServiceEndpointSyncs, "mirroring-concurrent-service-endpoint-syncs", o.MirroringConcurrentServiceEndpointSyncs, "The number of service endpoint syncing operations that will be done concurrently by the "+names.EndpointSliceMirroring+". Larger number = faster endpoint slice updating"+moreLoad+". Defaults to 5.")
			fs.Int32Var(&o.MirroringMaxEndpointsPerSubset, "mirroring-max-endpoints-per-subset", o.MirroringMaxEndpointsPerSubset, "The maximum number of endpoints that will be added to an EndpointSlice by the "+names.EndpointSliceMirroring+". More endpoints per slice will result in less endpoint slices, but larger resources. Defaults to 100.")
			fs.DurationVar(&o.MirroringEndpointUpdatesBatchPeriod.Duration, "mirroring-endpointslice-updates-batch-period", o.MirroringEndpointUpdatesBatchPeriod.Duration, "The length of EndpointSlice updates batching period for "+names.EndpointSliceMirroring+". Processing of EndpointSlice changes will be delayed by this duration to join them with potential upcoming updates and reduce the overall number of EndpointSlice updates. Larger number = higher endpoint programming latency, but lower number of endpoints revision generated")
		}, validate: func(c *config.ComponentConfig) []error {
			o := c.EndpointSliceMirroringController
			return append(within("mirroring-concurrent-service-endpoint-syncs", o.MirroringConcurrentServiceEndpointSyncs, 1, 50),
				within("mirroring-max-endpoints-per-subset", o.MirroringMaxEndpointsPerSubset, 1, 1000)...)
		}},
		{section: names.EphemeralVolume, add: func(fs *pflag.FlagSet, c *config.ComponentConfig) {
			fs.Int32Var(&c.EphemeralVolumeController.ConcurrentEphemeralVolumeSyncs, "concurrent-ephemeralvolume-syncs", c.EphemeralVolumeController.ConcurrentEphemeralVolumeSyncs, "The number of ephemeral volume syncing operations that will be done concurrently. Larger number = faster ephemeral volume updating"+moreLoad)
		}, validate: func(c *config.ComponentConfig) []error {
			return positive("concurrent-ephemeralvolume-syncs", c.EphemeralVolumeController.ConcurrentEphemeralVolumeSyncs)
		}},
		{section: names.GarbageCollector, add: func(fs *pflag.FlagSet, c *config.ComponentConfig) {
			o := &c.GarbageCollectorController
			fs.Int32Var(&o.ConcurrentGCSyncs, "concurrent-gc-syncs", o.ConcurrentGCSyncs, "The number of garbage collector workers that are allowed to sync concurrently.")
			fs.BoolVar(&o.EnableGarbageCollector, "enable-garbage-collector", o.EnableGarbageCollector, "Enables the generic garbage collector. MUST be synced with the corresponding flag of the kube-apiserver.")
		}, validate: func(c *config.ComponentConfig) []error {
			return positive("concurrent-gc-syncs", c.GarbageCollectorController.ConcurrentGCSyncs)
		}},
		{section: names.HorizontalPodAutoscaler, add: addHPAFlags, validate: func(c *config.ComponentConfig) []error {
			return positive("concurrent-horizontal-pod-autoscaler-syncs", c.HPAController.ConcurrentHorizontalPodAutoscalerSyncs)
		}},
		{section: names.Job, add: func(fs *pflag.FlagSet, c *config.ComponentConfig) {
			fs.Int32Var(&c.JobController.ConcurrentJobSyncs, "concurrent-job-syncs", c.JobController.ConcurrentJobSyncs, "The number of job objects that are allowed to sync concurrently. Larger number = more responsive jobs"+moreLoad)
		}, validate: func(c *config.ComponentConfig) []error {
			return positive("concurrent-job-syncs", c.JobController.ConcurrentJobSyncs)
		}},
		{section: names.CronJob, add: func(fs *pflag.FlagSet, c *config.ComponentConfig) {
			fs.Int32Var(&c.CronJobController.ConcurrentCronJobSyncs, "concurrent-cron-job-syncs", c.CronJobController.ConcurrentCronJobSyncs, "The number of cron job objects that are allowed to sync concurrently. Larger number = more responsive jobs"+moreLoad)
		}, validate: func(c *config.ComponentConfig) []error {
			return positive("concurrent-cron-job-syncs", c.CronJobController.ConcurrentCronJobSyncs)
		}},
		{section: names.LegacyServiceAccountTokenCleaner, add: func(fs *pflag.FlagSet, c *config.ComponentConfig) {
			fs.DurationVar(&c.LegacySATokenCleaner.CleanUpPeriod.Duration, "legacy-service-account-token-clean-up-period", c.LegacySATokenCleaner.CleanUpPeriod.Duration, "The period of time since the last usage of an legacy service account token before it can be deleted.")
		}},
		{section: names.Namespace, add: func(fs *pflag.FlagSet, c *config.ComponentConfig) {
			o := &c.NamespaceController
			fs.DurationVar(&o.NamespaceSyncPeriod.Duration, "namespace-sync-period", o.NamespaceSyncPeriod.Duration, "The period for syncing namespace life-cycle updates")
			fs.Int32Var(&o.ConcurrentNamespaceSyncs, "concurrent-namespace-syncs", o.ConcurrentNamespaceSyncs, "The number of namespace objects that are allowed to sync concurrently. Larger number = more responsive namespace termination"+moreLoad)
		}, validate: func(c *config.ComponentConfig) []error {
			return positive("concurrent-namespace-syncs", c.NamespaceController.ConcurrentNamespaceSyncs)
		}},
		{section: names.NodeIpam, add: addNodeIPAMFlags},
		{section: names.NodeLifecycle, add: addNodeLifecycleFlags},
		{section: names.PersistentVolumeBinder, add: addPVBinderFlags},
		{section: names.PodGarbageCollector, add: func(fs *pflag.FlagSet, c *config.ComponentConfig) {
			fs.Int32Var(&c.PodGCController.TerminatedPodGCThreshold, "terminated-pod-gc-threshold", c.PodGCController.TerminatedPodGCThreshold, "Number of terminated pods that can exist before the terminated pod garbage collector starts deleting terminated pods. If <= 0, the terminated pod garbage collector is disabled.")
		}},
		{section: names.ReplicaSet, add: func(fs *pflag.FlagSet, c *config.ComponentConfig) {
			fs.Int32Var(&c.ReplicaSetController.ConcurrentRSSyncs, "concurrent-replicaset-syncs", c.ReplicaSetController.ConcurrentRSSyncs, "The number of replica sets that are allowed to sync concurrently. Larger number = more responsive replica management"+moreLoad)
		}, validate: func(c *config.ComponentConfig) []error {
			return positive("concurrent-replicaset-syncs", c.ReplicaSetController.ConcurrentRSSyncs)
		}},
		{section: names.ReplicationController, add: func(fs *pflag.FlagSet, c *config.ComponentConfig) {
			fs.Int32Var(&c.ReplicationController.ConcurrentRCSyncs, "concurrent-rc-syncs", c.ReplicationController.ConcurrentRCSyncs, "The number of replication controllers that are allowed to sync concurrently. Larger number = more responsive replica management"+moreLoad)
		}, validate: func(c *config.ComponentConfig) []error {
			return positive("concurrent-rc-syncs", c.ReplicationController.ConcurrentRCSyncs)
		}},
		{section: names.ResourceQuota, add: func(fs *pflag.FlagSet, c *config.ComponentConfig) {
			o := &c.ResourceQuotaController
			fs.DurationVar(&o.ResourceQuotaSyncPeriod.Duration, "resource-quota-sync-period", o.ResourceQuotaSyncPeriod.Duration, "The period for syncing quota usage status in the system")
			fs.Int32Var(&o.ConcurrentResourceQuotaSyncs, "concurrent-resource-quota-syncs", o.ConcurrentResourceQuotaSyncs, "The number of resource quotas that are allowed to sync concurrently. Larger number = more responsive quota management"+moreLoad)
		}, validate: func(c *config.ComponentConfig) []error {
			return positive("concurrent-resource-quota-syncs", c.ResourceQuotaController.ConcurrentResourceQuotaSyncs)
		}},
		{section: names.ServiceAccount, add: func(fs *pflag.FlagSet, c *config.ComponentConfig) {
			o := &c.SAController
			fs.StringVar(&o.ServiceAccountKeyFile, "service-account-private-key-file", o.ServiceAccountKeyFile, "Enables legacy secret-based tokens when set. Filename containing a PEM-encoded private RSA or ECDSA key used to sign service account tokens.")
			fs.Int32Var(&o.ConcurrentSATokenSyncs, "concurrent-serviceaccount-token-syncs", o.ConcurrentSATokenSyncs, "The number of service account token objects that are allowed to sync concurrently. Larger number = more responsive token generation"+moreLoad)
			fs.StringVar(&o.RootCAFile, "root-ca-file", o.RootCAFile, "If set, this root certificate authority will be included in service account's token secret. This must be a valid PEM-encoded CA bundle.")
		}, validate: validateServiceAccount},
		{section: names.TTLAfterFinished, add: func(fs *pflag.FlagSet, c *config.ComponentConfig) {
			fs.Int32Var(&c.TTLAfterFinishedController.ConcurrentTTLSyncs, "concurrent-ttl-after-finished-syncs", c.TTLAfterFinishedController.ConcurrentTTLSyncs, "The number of "+names.TTLAfterFinished+" workers that are allowed to sync concurrently.")
		}, validate: func(c *config.ComponentConfig) []error {
			return positive("concurrent-ttl-after-finished-syncs", c.TTLAfterFinishedController.ConcurrentTTLSyncs)
		}},
		{section: names.ValidatingAdmissionPolicyStatus, add: func(fs *pflag.FlagSet, c *config.ComponentConfig) {
			fs.Int32Var(&c.ValidatingAdmissionPolicyStatusController.ConcurrentPolicySyncs, "concurrent-validating-admission-policy-status-syncs", c.ValidatingAdmissionPolicyStatusController.ConcurrentPolicySyncs, "The number of ValidatingAdmissionPolicyStatusController workers that are allowed to sync concurrently.")
		}, validate: func(c *config.ComponentConfig) []error {
			return positive("concurrent-validating-admission-policy-status-syncs", c.ValidatingAdmissionPolicyStatusController.ConcurrentPolicySyncs)
		}},
	}
}

func addHPAFlags(fs *pflag.FlagSet, c *config.ComponentConfig) {
	o := &c.HPAController
	fs.Int32Var(&o.ConcurrentHorizontalPodAutoscalerSyncs, "concurrent-horizontal-pod-autoscaler-syncs", o.ConcurrentHorizontalPodAutoscalerSyncs, "The number of horizontal pod autoscaler objects that are allowed to sync concurrently. Larger number = more responsive horizontal pod autoscaler objects processing"+moreLoad+".")
	fs.DurationVar(&o.HorizontalPodAutoscalerSyncPeriod.Duration, "horizontal-pod-autoscaler-sync-period", o.HorizontalPodAutoscalerSyncPeriod.Duration, "The period for syncing the number of pods in horizontal pod autoscaler.")
	fs.DurationVar(&o.HorizontalPodAutoscalerDownscaleStabilizationWindow.Duration, "horizontal-pod-autoscaler-downscale-stabilization", o.HorizontalPodAutoscalerDownscaleStabilizationWindow.Duration, "The period for which autoscaler will look backwards and not scale down below any recommendation it made during that period.")
	fs.Float64Var(&o.HorizontalPodAutoscalerTolerance, "horizontal-pod-autoscaler-tolerance", o.HorizontalPodAutoscalerTolerance, "The minimum change (from 1.0) in the desired-to-actual metrics ratio for the horizontal pod autoscaler to consider scaling.")
	fs.DurationVar(&o.HorizontalPodAutoscalerCPUInitializationPeriod.Duration, "horizontal-pod-autoscaler-cpu-initialization-period", o.HorizontalPodAutoscalerCPUInitializationPeriod.Duration, "The period after pod start when CPU samples might be skipped.")
	fs.DurationVar(&o.HorizontalPodAutoscalerInitialReadinessDelay.Duration, "horizontal-pod-autoscaler-initial-readiness-delay", o.HorizontalPodAutoscalerInitialReadinessDelay.Duration, "The period after pod start during which readiness changes will be treated as initial readiness.")
}

func addPVBinderFlags(fs *pflag.FlagSet, c *config.ComponentConfig) {
	o := &c.PersistentVolumeBinderController
	r := &o.PersistentVolumeRecyclerConfiguration
	fs.DurationVar(&o.PVClaimBinderSyncPeriod.Duration, "pvclaimbinder-sync-period", o.PVClaimBinderSyncPeriod.Duration, "The period for syncing persistent volumes and persistent volume claims")
	fs.StringVar(&r.PodTemplateFilePathNFS, "pv-recycler-pod-template-filepath-nfs", r.PodTemplateFilePathNFS, "The file path to a pod definition used as a template for NFS persistent volume recycling")
	fs.Int32Var(&r.MinimumTimeoutNFS, "pv-recycler-minimum-timeout-nfs", r.MinimumTimeoutNFS, "The minimum ActiveDeadlineSeconds to use for an NFS Recycler pod")
	fs.Int32Var(&r.IncrementTimeoutNFS, "pv-recycler-increment-timeout-nfs", r.IncrementTimeoutNFS, "the increment of time added per Gi to ActiveDeadlineSeconds for an NFS scrubber pod")
	fs.StringVar(&r.PodTemplateFilePathHostPath, "pv-recycler-pod-template-filepath-hostpath", r.PodTemplateFilePathHostPath, "The file path to a pod definition used as a template for HostPath persistent volume recycling. This is for development and testing only and will not work in a multi-node cluster.")
	fs.Int32Var(&r.MinimumTimeoutHostPath, "pv-recycler-minimum-timeout-hostpath", r.MinimumTimeoutHostPath, "The minimum ActiveDeadlineSeconds to use for a HostPath Recycler pod.  This is for development and testing only and will not work in a multi-node cluster.")
	fs.Int32Var(&r.IncrementTimeoutHostPath, "pv-recycler-timeout-increment-hostpath", r.IncrementTimeoutHostPath, "the increment of time added per Gi to ActiveDeadlineSeconds for a HostPath scrubber pod.  This is for development and testing only and will not work in a multi-node cluster.")
	fs.BoolVar(&o.EnableHostPathProvisioning, "enable-hostpath-provisioner", o.EnableHostPathProvisioning, "Enable HostPath PV provisioning when running without a cloud provider. This allows testing and development of provisioning features.  HostPath provisioning is not supported in any way, won't work in a multi-node cluster, and should not be used for anything other than testing or development.")
	fs.BoolVar(&o.EnableDynamicProvisioning, "enable-dynamic-provisioning", o.EnableDynamicProvisioning, "Enable dynamic provisioning for environments that support it.")
	fs.StringVar(&o.FlexVolumePluginDir, "flex-volume-plugin-dir", o.FlexVolumePluginDir, "Full path of the directory in which the flex volume plugin should search for additional third party volume plugins.")
}

func addNodeLifecycleFlags(fs *pflag.FlagSet, c *config.ComponentConfig) {
	o := &c.NodeLifecycleController
	fs.DurationVar(&o.NodeStartupGracePeriod.Duration, "node-startup-grace-period", o.NodeStartupGracePeriod.Duration, "Amount of time which we allow starting Node to be unresponsive before marking it unhealthy.")
	fs.DurationVar(&o.NodeMonitorGracePeriod.Duration, "node-monitor-grace-period", o.NodeMonitorGracePeriod.Duration, "Amount of time which we allow running Node to be unresponsive before marking it unhealthy. Must be N times more than kubelet's nodeStatusUpdateFrequency, where N means number of retries allowed for kubelet to post node status. This value should also be greater than the sum of HTTP2_PING_TIMEOUT_SECONDS and HTTP2_READ_IDLE_TIMEOUT_SECONDS")
	fs.Float32Var(&o.NodeEvictionRate, "node-eviction-rate", o.NodeEvictionRate, "Number of nodes per second on which pods are deleted in case of node failure when a zone is healthy (see --unhealthy-zone-threshold for definition of healthy/unhealthy). Zone refers to entire cluster in non-multizone clusters.")
	fs.Float32Var(&o.SecondaryNodeEvictionRate, "secondary-node-eviction-rate", o.SecondaryNodeEvictionRate, "Number of nodes per second on which pods are deleted in case of node failure when a zone is unhealthy (see --unhealthy-zone-threshold for definition of healthy/unhealthy). Zone refers to entire cluster in non-multizone clusters. This value is implicitly overridden to 0 if the cluster size is smaller than --large-cluster-size-threshold.")
	fs.Int32Var(&o.LargeClusterSizeThreshold, "large-cluster-size-threshold", o.LargeClusterSizeThreshold, "Number of nodes from which "+names.NodeLifecycle+" treats the cluster as large for the eviction logic purposes. --secondary-node-eviction-rate is implicitly overridden to 0 for clusters this size or smaller. Notice: If nodes reside in multiple zones, this threshold will be considered as zone node size threshold for each zone to determine node eviction rate independently.")
	fs.Float32Var(&o.UnhealthyZoneThreshold, "unhealthy-zone-threshold", o.UnhealthyZoneThreshold, "Fraction of Nodes in a zone which needs to be not Ready (minimum 3) for zone to be treated as unhealthy. ")
	fs.DurationVar(&o.NodeMonitorPeriod.Duration, "node-monitor-period", o.NodeMonitorPeriod.Duration, "The period for syncing NodeStatus in NodeLifecycleController.")
}
