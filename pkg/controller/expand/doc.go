// Package expand implements the persistentvolume-expander-controller
// (alias persistentvolume-expander). In v1.37 upstream's controller
// expands no volume itself: its only expandable in-tree plugins are gone,
// and CSI volumes are resized by the driver's external-resizer. What it
// still does, for a Bound claim whose requested storage exceeds its status
// capacity (or whose volume carries the pre-resize-capacity annotation):
//
//   - the volume of an in-tree plugin migrated to CSI (awsElasticBlockStore,
//     gcePersistentDisk, azureDisk, azureFile, cinder, vsphereVolume,
//     portworxVolume): a Normal ExternalExpanding Event "CSI migration
//     enabled for <plugin>; waiting for external resizer to expand the pvc"
//     and the annotation volume.kubernetes.io/storage-resizer set to the
//     CSI driver's name (through the claim's status subresource, as
//     upstream), which tells that driver's external-resizer to take over;
//   - any other volume (CSI and the rest): a Normal ExternalExpanding Event
//     "waiting for an external controller to expand this PVC".
//
// A claim whose volume is not bound back to it (claimRef) is retried with
// backoff. The conditions and allocatedResourceStatuses of
// RecoverVolumeExpansionFailure (GA in v1.37) are written by the
// external-resizer and the kubelet, not by this controller. FlexVolume
// volumes, which upstream hands to a no-op in-tree expansion, are treated
// like any other volume without a controller-side plugin here.
package expand
