package names

// Canonical controller names.
const (
	BootstrapSigner                    = "bootstrap-signer-controller"
	CertificateSigningRequestApproving = "certificatesigningrequest-approving-controller"
	CertificateSigningRequestCleaner   = "certificatesigningrequest-cleaner-controller"
	CertificateSigningRequestSigning   = "certificatesigningrequest-signing-controller"
	ClusterRoleAggregation             = "clusterrole-aggregation-controller"
	CronJob                            = "cronjob-controller"
	DaemonSet                          = "daemonset-controller"
	Deployment                         = "deployment-controller"
	DeviceTaintEviction                = "device-taint-eviction-controller"
	Disruption                         = "disruption-controller"
	Endpoints                          = "endpoints-controller"
	EndpointSlice                      = "endpointslice-controller"
	EndpointSliceMirroring             = "endpointslice-mirroring-controller"
	EphemeralVolume                    = "ephemeral-volume-controller"
	GarbageCollector                   = "garbage-collector-controller"
	HorizontalPodAutoscaler            = "horizontal-pod-autoscaler-controller"
	Job                                = "job-controller"
	KubeAPIServerClusterTrustBundle    = "kube-apiserver-serving-clustertrustbundle-publisher-controller"
	LegacyServiceAccountTokenCleaner   = "legacy-serviceaccount-token-cleaner-controller"
	Namespace                          = "namespace-controller"
	NodeIpam                           = "node-ipam-controller"
	NodeLifecycle                      = "node-lifecycle-controller"
	PersistentVolumeAttachDetach       = "persistentvolume-attach-detach-controller"
	PersistentVolumeBinder             = "persistentvolume-binder-controller"
	PersistentVolumeExpander           = "persistentvolume-expander-controller"
	PersistentVolumeProtection         = "persistentvolume-protection-controller"
	PersistentVolumeClaimProtection    = "persistentvolumeclaim-protection-controller"
	PodGarbageCollector                = "pod-garbage-collector-controller"
	PodCertificateRequestCleaner       = "podcertificaterequest-cleaner-controller"
	PodGroupProtection                 = "podgroup-protection-controller"
	ReplicaSet                         = "replicaset-controller"
	ReplicationController              = "replicationcontroller-controller"
	ResourceClaim                      = "resourceclaim-controller"
	ResourcePoolStatusRequest          = "resourcepoolstatusrequest-controller"
	ResourceQuota                      = "resourcequota-controller"
	RootCACertificatePublisher         = "root-ca-certificate-publisher-controller"
	SELinuxWarning                     = "selinux-warning-controller"
	ServiceCIDR                        = "service-cidr-controller"
	ServiceAccount                     = "serviceaccount-controller"
	ServiceAccountToken                = "serviceaccount-token-controller"
	StatefulSet                        = "statefulset-controller"
	StorageVersionMigrator             = "storage-version-migrator-controller"
	StorageVersionGarbageCollector     = "storageversion-garbage-collector-controller"
	TaintEviction                      = "taint-eviction-controller"
	TokenCleaner                       = "token-cleaner-controller"
	TTLAfterFinished                   = "ttl-after-finished-controller"
	TTL                                = "ttl-controller"
	ValidatingAdmissionPolicyStatus    = "validatingadmissionpolicy-status-controller"
	VolumeAttributesClassProtection    = "volumeattributesclass-protection-controller"
)

// Aliases maps each legacy short name accepted by --controllers to its
// canonical name.
func Aliases() map[string]string {
	return map[string]string{
		"bootstrapsigner":                      BootstrapSigner,
		"csrapproving":                         CertificateSigningRequestApproving,
		"csrcleaner":                           CertificateSigningRequestCleaner,
		"csrsigning":                           CertificateSigningRequestSigning,
		"clusterrole-aggregation":              ClusterRoleAggregation,
		"cronjob":                              CronJob,
		"daemonset":                            DaemonSet,
		"deployment":                           Deployment,
		"disruption":                           Disruption,
		"endpoint":                             Endpoints,
		"endpointslice":                        EndpointSlice,
		"endpointslicemirroring":               EndpointSliceMirroring,
		"ephemeral-volume":                     EphemeralVolume,
		"garbagecollector":                     GarbageCollector,
		"horizontalpodautoscaling":             HorizontalPodAutoscaler,
		"job":                                  Job,
		"legacy-service-account-token-cleaner": LegacyServiceAccountTokenCleaner,
		"namespace":                            Namespace,
		"nodeipam":                             NodeIpam,
		"nodelifecycle":                        NodeLifecycle,
		"attachdetach":                         PersistentVolumeAttachDetach,
		"persistentvolume-binder":              PersistentVolumeBinder,
		"persistentvolume-expander":            PersistentVolumeExpander,
		"pv-protection":                        PersistentVolumeProtection,
		"pvc-protection":                       PersistentVolumeClaimProtection,
		"podgc":                                PodGarbageCollector,
		"replicaset":                           ReplicaSet,
		"replicationcontroller":                ReplicationController,
		"resource-claim-controller":            ResourceClaim,
		"resourcequota":                        ResourceQuota,
		"root-ca-cert-publisher":               RootCACertificatePublisher,
		"serviceaccount":                       ServiceAccount,
		"serviceaccount-token":                 ServiceAccountToken,
		"statefulset":                          StatefulSet,
		"svm":                                  StorageVersionMigrator,
		"storage-version-gc":                   StorageVersionGarbageCollector,
		"tokencleaner":                         TokenCleaner,
		"ttl-after-finished":                   TTLAfterFinished,
		"ttl":                                  TTL,
	}
}
