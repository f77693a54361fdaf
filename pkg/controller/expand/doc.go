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
// external-resizer and the kubelet, not by this controller.
//
// # Differences from upstream
//
//   - the volume is read from the shared informer; upstream GETs it on every
//     sync;
//   - a status patch that would set the resizer annotation to the value it
//     already has is not sent;
//   - no volume plugins are carried: upstream's only controller-side
//     expandable plugin left in v1.37 is the no-op one for FlexVolume, whose
//     claims here get the same "waiting for an external controller" Event as
//     CSI claims instead of upstream's in-tree resize bookkeeping.
package expand
