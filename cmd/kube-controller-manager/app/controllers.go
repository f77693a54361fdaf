package app

import (
	"k8s.io/component-base/featuregate"

	"github.com/kcm-dev/kcm/pkg/controller/attachdetach"
	"github.com/kcm-dev/kcm/pkg/controller/bootstrap/signer"
	"github.com/kcm-dev/kcm/pkg/controller/bootstrap/tokencleaner"
	"github.com/kcm-dev/kcm/pkg/controller/certificates/csrapproving"
	"github.com/kcm-dev/kcm/pkg/controller/certificates/csrcleaner"
	"github.com/kcm-dev/kcm/pkg/controller/certificates/csrsigning"
	"github.com/kcm-dev/kcm/pkg/controller/clusterroleaggregation"
	"github.com/kcm-dev/kcm/pkg/controller/clustertrustbundlepublisher"
	"github.com/kcm-dev/kcm/pkg/controller/cronjob"
	"github.com/kcm-dev/kcm/pkg/controller/daemonset"
	"github.com/kcm-dev/kcm/pkg/controller/deployment"
	"github.com/kcm-dev/kcm/pkg/controller/devicetainteviction"
	"github.com/kcm-dev/kcm/pkg/controller/disruption"
	"github.com/kcm-dev/kcm/pkg/controller/endpoints"
	"github.com/kcm-dev/kcm/pkg/controller/endpointslice"
	"github.com/kcm-dev/kcm/pkg/controller/endpointslicemirroring"
	"github.com/kcm-dev/kcm/pkg/controller/ephemeral"
	"github.com/kcm-dev/kcm/pkg/controller/expand"
	"github.com/kcm-dev/kcm/pkg/controller/garbagecollector"
	"github.com/kcm-dev/kcm/pkg/controller/job"
	"github.com/kcm-dev/kcm/pkg/controller/legacytokencleaner"
	"github.com/kcm-dev/kcm/pkg/controller/namespace"
	"github.com/kcm-dev/kcm/pkg/controller/nodeipam"
	"github.com/kcm-dev/kcm/pkg/controller/nodelifecycle"
	"github.com/kcm-dev/kcm/pkg/controller/persistentvolume"
	"github.com/kcm-dev/kcm/pkg/controller/podautoscaler"
	"github.com/kcm-dev/kcm/pkg/controller/podcertificaterequestcleaner"
	"github.com/kcm-dev/kcm/pkg/controller/podgc"
	"github.com/kcm-dev/kcm/pkg/controller/podgroupprotection"
	"github.com/kcm-dev/kcm/pkg/controller/pvcprotection"
	"github.com/kcm-dev/kcm/pkg/controller/pvprotection"
	"github.com/kcm-dev/kcm/pkg/controller/replicaset"
	"github.com/kcm-dev/kcm/pkg/controller/replication"
	"github.com/kcm-dev/kcm/pkg/controller/resourceclaim"
	"github.com/kcm-dev/kcm/pkg/controller/resourcepoolstatusrequest"
	"github.com/kcm-dev/kcm/pkg/controller/resourcequota"
	"github.com/kcm-dev/kcm/pkg/controller/rootcacertpublisher"
	"github.com/kcm-dev/kcm/pkg/controller/selinuxwarning"
	"github.com/kcm-dev/kcm/pkg/controller/serviceaccount"
	"github.com/kcm-dev/kcm/pkg/controller/serviceaccounttoken"
	"github.com/kcm-dev/kcm/pkg/controller/servicecidr"
	"github.com/kcm-dev/kcm/pkg/controller/statefulset"
	"github.com/kcm-dev/kcm/pkg/controller/storageversiongc"
	"github.com/kcm-dev/kcm/pkg/controller/storageversionmigrator"
	"github.com/kcm-dev/kcm/pkg/controller/tainteviction"
	"github.com/kcm-dev/kcm/pkg/controller/ttl"
	"github.com/kcm-dev/kcm/pkg/controller/ttlafterfinished"
	"github.com/kcm-dev/kcm/pkg/controller/vacprotection"
	"github.com/kcm-dev/kcm/pkg/controller/validatingadmissionpolicystatus"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/pkg/features"
)

// NewRegistry returns all 49 upstream controllers with their aliases,
// default state, feature gates and constructors (TestEveryControllerBuilt
// keeps it complete).
func NewRegistry() controllermanager.Registry {
	aliases := map[string][]string{}
	for alias, name := range names.Aliases() {
		aliases[name] = append(aliases[name], alias)
	}
	r := controllermanager.Registry{}
	add := func(name string, ctor controllermanager.Constructor, opts ...func(*controllermanager.Descriptor)) {
		d := &controllermanager.Descriptor{Name: name, Aliases: aliases[name], New: ctor}
		for _, o := range opts {
			o(d)
		}
		r[name] = d
	}
	off := func(d *controllermanager.Descriptor) { d.DisabledByDefault = true }
	special := func(d *controllermanager.Descriptor) { d.SpecialHandling = true }
	gates := func(g ...featuregate.Feature) func(*controllermanager.Descriptor) {
		return func(d *controllermanager.Descriptor) { d.RequiredFeatureGates = g }
	}

	add(names.BootstrapSigner, signer.New, off)
	add(names.CertificateSigningRequestApproving, csrapproving.New)
	add(names.CertificateSigningRequestCleaner, csrcleaner.New)
	add(names.CertificateSigningRequestSigning, csrsigning.New)
	add(names.ClusterRoleAggregation, clusterroleaggregation.New)
	add(names.CronJob, cronjob.New)
	add(names.DaemonSet, daemonset.New)
	add(names.Deployment, deployment.New)
	add(names.DeviceTaintEviction, devicetainteviction.New, gates(features.DynamicResourceAllocation, features.DRADeviceTaints))
	add(names.Disruption, disruption.New)
	add(names.Endpoints, endpoints.New)
	add(names.EndpointSlice, endpointslice.New)
	add(names.EndpointSliceMirroring, endpointslicemirroring.New)
	add(names.EphemeralVolume, ephemeral.New)
	add(names.GarbageCollector, garbagecollector.New)
	add(names.HorizontalPodAutoscaler, podautoscaler.New)
	add(names.Job, job.New)
	add(names.KubeAPIServerClusterTrustBundle, clustertrustbundlepublisher.New, gates(features.ClusterTrustBundle))
	add(names.LegacyServiceAccountTokenCleaner, legacytokencleaner.New)
	add(names.Namespace, namespace.New)
	add(names.NodeIpam, nodeipam.New, func(d *controllermanager.Descriptor) { d.RunningMetric = "nodeipam" })
	add(names.NodeLifecycle, nodelifecycle.New)
	add(names.PersistentVolumeAttachDetach, attachdetach.New)
	add(names.PersistentVolumeBinder, persistentvolume.New)
	add(names.PersistentVolumeExpander, expand.New)
	add(names.PersistentVolumeProtection, pvprotection.New)
	add(names.PersistentVolumeClaimProtection, pvcprotection.New)
	add(names.PodGarbageCollector, podgc.New)
	add(names.PodCertificateRequestCleaner, podcertificaterequestcleaner.New, gates(features.PodCertificateRequest))
	add(names.PodGroupProtection, podgroupprotection.New, gates(features.GenericWorkload))
	add(names.ReplicaSet, replicaset.New)
	add(names.ReplicationController, replication.New)
	add(names.ResourceClaim, resourceclaim.New, gates(features.DynamicResourceAllocation))
	add(names.ResourcePoolStatusRequest, resourcepoolstatusrequest.New, gates(features.DRAResourcePoolStatus))
	add(names.ResourceQuota, resourcequota.New)
	add(names.RootCACertificatePublisher, rootcacertpublisher.New)
	add(names.SELinuxWarning, selinuxwarning.New, off, gates(features.SELinuxChangePolicy))
	add(names.ServiceCIDR, servicecidr.New, gates(features.MultiCIDRServiceAllocator))
	add(names.ServiceAccount, serviceaccount.New)
	add(names.ServiceAccountToken, serviceaccounttoken.New, special)
	add(names.StatefulSet, statefulset.New)
	add(names.StorageVersionMigrator, storageversionmigrator.New)
	add(names.StorageVersionGarbageCollector, storageversiongc.New, gates(features.APIServerIdentity, features.StorageVersionAPI))
	add(names.TaintEviction, tainteviction.New, gates(features.SeparateTaintEvictionController))
	add(names.TokenCleaner, tokencleaner.New, off)
	add(names.TTLAfterFinished, ttlafterfinished.New)
	add(names.TTL, ttl.New)
	add(names.ValidatingAdmissionPolicyStatus, validatingadmissionpolicystatus.New)
	add(names.VolumeAttributesClassProtection, vacprotection.New, gates(features.VolumeAttributesClass))
	return r
}
