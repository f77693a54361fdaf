// Package persistentvolume implements the persistentvolume-binder-controller:
// it binds PersistentVolumeClaims to PersistentVolumes, starts dynamic
// provisioning, and reclaims the volumes whose claims are gone.
//
// Two queues, one worker each (upstream's), sync claims (claim.go) and
// volumes (volume.go) against the controller's own view of both
// (cache.go): the informers' objects, replaced by the controller's own
// writes the moment they succeed and never by an older resourceVersion,
// so that a sync right after a bind sees it. Every --pvclaimbinder-sync-period
// all claims and volumes are queued again; that is how a Pending claim
// finds a volume created later, as upstream.
//
// Binding (bind.go) writes, each only when it changes something: the
// volume's claimRef with pv.kubernetes.io/bound-by-controller, the
// volume's phase Bound, the claim's volumeName with
// pv.kubernetes.io/bind-completed (and bound-by-controller when the
// controller chose the volume), the claim's status (phase, access modes,
// capacity, current VolumeAttributesClass). The first write carries the
// resourceVersion the match was made on, so a volume can never be bound
// to two claims: the loser gets a conflict and retries.
//
// Matching (cache.go) is component-helpers' FindMatchingVolume over the
// volumes offering the fewest access modes that include the claim's, as
// upstream: a volume pre-bound to the claim wins, otherwise the smallest
// Available one of the claim's class, volume mode, VolumeAttributesClass
// and selector; claims of a WaitForFirstConsumer class are left to the
// scheduler unless pre-bound.
//
// A claim nothing matches gets the default StorageClass if it has no
// class at all (also claims older than the default), is provisioned
// (provision.go) if it has one, and otherwise stays Pending with an
// Event. Provisioning annotates the claim with
// volume.kubernetes.io/storage-provisioner (and the beta spelling) for an
// external provisioner, or, for kubernetes.io/host-path with
// --enable-hostpath-provisioner, makes a directory under /tmp/hostpath_pv
// and a volume pvc-<claim uid> (hostpath.go). In-tree provisioners whose
// CSI migration is GA are handed to their CSI driver (migration.go).
//
// A volume whose claim is gone is Released and its reclaim policy applied
// (reclaim.go): Retain keeps it, Delete removes a hostPath volume's
// directory and object or leaves both to the external deleter, Recycle
// runs upstream's recycler pod recycler-for-<pv> in default (recycle.go)
// and makes the volume Available. Provisioning, deletion and recycling run
// in goroutines, one per claim or volume, backed off exponentially after a
// failure (operations.go).
//
// Upstream's binder metrics (metrics.go): the pv_collector_* gauges read
// from the controller's view at scrape time, errors and end-to-end
// durations of provisioning and deletion, the hostPath plugin's own
// operation durations, and the retroactive StorageClass counters.
package persistentvolume
