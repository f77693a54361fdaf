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
package replication
