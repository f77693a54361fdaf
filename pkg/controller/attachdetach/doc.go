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
// node's sync that wait for VolumeAttachment events instead of polling. See
// docs/ARCHITECTURE.md for what differs.
package attachdetach
