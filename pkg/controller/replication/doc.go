// Package replication implements the replicationcontroller-controller. It
// runs the ReplicaSet controller's logic (package replicaset) on
// ReplicationControllers, through an adapter that presents each
// ReplicationController as a ReplicaSet and writes statuses back as
// ReplicationControllers, the way upstream treats ReplicationController as
// an older API version of ReplicaSet.
//
// What differs from the replicaset-controller is what upstream's adapter
// makes differ: its own client identity and Event source
// ("replication-controller"), workqueue ("replicationmanager"), worker count
// (--concurrent-rc-syncs), no status.terminatingReplicas (the
// ReplicationController API has none), no stale-cache consistency check,
// and no co-location ranking on scale-down (upstream's index of owners by
// controller only recognises ReplicaSets).
//
// # Differences from upstream
//
// Besides the replicaset-controller's own differences (package replicaset),
// a ReplicationController is converted to its ReplicaSet view directly;
// upstream converts through its internal API types.
package replication
