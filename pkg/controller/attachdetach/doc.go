// Package attachdetach is the persistentvolume-attach-detach-controller
// (alias attachdetach) for CSI volumes: it creates a VolumeAttachment
// (csi-<sha256 of volume handle, driver and node>) for every volume of a
// scheduled, not terminated pod on a node annotated
// volumes.kubernetes.io/controller-managed-attach-detach, waits for the
// external attacher to report it attached, reports the volume in the node's
// status.volumesAttached, and deletes the VolumeAttachment once no pod on that
// node needs the volume and the node no longer lists it in
// status.volumesInUse (or, unless --disable-force-detach-on-timeout, six
// minutes after the detach was first wanted on an unhealthy node, or at once
// on a node tainted node.kubernetes.io/out-of-service).
//
// Upstream keeps a desired and an actual state of the world fed by event
// handlers, a 100ms reconciler loop and an operation executor with a
// goroutine per operation. Here the desired state is computed per node from
// the listers at each sync (key: the node's name), the actual state is one
// small map (state.go), and attach and detach operations are steps of the
// node's sync that wait for VolumeAttachment events instead of polling.
//
// # Differences from upstream
//
// There is no desired or actual state of the world, reconciler loop or
// operation executor. The key is a node; each sync computes the node's
// wanted volumes from the listers (pods by spec.nodeName, claims, volumes,
// CSIDrivers), detaches first, then attaches, then writes volumesAttached
// (sorted by name where upstream's order is a map's; not written when
// unchanged). One worker owns the small per-node state of attachments, so
// nothing is locked; an attach or detach waits for VolumeAttachment events
// (with upstream's 2-minute timeout as a delayed requeue) instead of a
// goroutine polling the lister. A volume newly attached counts as mounted
// until the node object changes (upstream: until its next node event), then
// as volumesInUse says. Visible differences:
//
//   - CSIDriver and claim changes are seen at the node's next sync
//     (upstream decides when the pod is added and re-lists pods every 3
//     minutes);
//   - an attach whose pods all went is given up and detached at once
//     (upstream waits for it to finish, up to 2 minutes);
//   - the node a volume moves to is woken when the volume is detached
//     elsewhere.
//
// Not implemented: CSI migration of in-tree volumes (it needs
// csi-translation-lib) and the fc and iscsi plugins (their volumes found in
// a node's status are kept reported, never detached). Upstream's metrics
// are in metrics.go; the totals come from a snapshot each node's sync
// leaves, not from a lock on the state.
package attachdetach
