// Package persistentvolume implements the persistentvolume-binder-controller:
// it binds PersistentVolumeClaims to PersistentVolumes, starts dynamic
// provisioning, and reclaims the volumes whose claims are gone.
//
// Two queues sync claims (claim.go) and volumes (volume.go) against the
// controller's own view of both (cache.go): the informers' objects,
// replaced by the controller's own writes the moment they succeed and
// never by an older resourceVersion, so that a sync right after a bind
// sees it. Every --pvclaimbinder-sync-period all claims and volumes are
// queued again; that is how a Pending claim finds a volume created later,
// as upstream.
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
//
// # Differences from upstream
//
// Upstream's state machine, split by concern (claim.go, volume.go, bind.go,
// provision.go, reclaim.go), with upstream's own view of volumes and claims.
// What differs:
//
//   - one claim worker (binding picks among volumes: one claim at a time, as
//     upstream) and four volume workers (upstream: one; a volume's sync
//     writes only that volume);
//   - a volume the controller has deleted and other finalizers still hold is
//     not deleted again when its update event is synced (with its own
//     in-tree finalizer back, which a sync during the deletion re-adds as
//     upstream's does, it is: only the deletion removes that finalizer).
//     Upstream repeats the plugin's deletion and the API call then, which its
//     single, usually backlogged worker rarely gets to do;
//   - a hostPath deletion reads the volume once, decides on that read
//     whether it is still released, and removes the in-tree finalizer from
//     the same copy (read again only after a conflict); upstream reads it a
//     second time for the finalizer, 500 of the 2,500 requests of reclaiming
//     500 volumes;
//   - provisioning, deletion and recycling run in one goroutine per object
//     with upstream's back-off (500 ms doubling to 2m2s), and Run also waits
//     for those goroutines;
//   - upstream's volume plugin manager holds only the hostPath (provision,
//     delete, recycle) and NFS (recycle) plugins in this controller; kcm has
//     exactly those, with the plugin manager's error messages;
//   - where upstream's order is a map's, kcm's is by name: among equally
//     small matching volumes and among access-mode sets of equal size, and in
//     WaitForPodScheduled's list of pods;
//   - the recycler pod's watch ends with the controller (upstream's waits for
//     the pod forever), and its template is copied per use (upstream shares
//     one and overwrites it).
package persistentvolume
