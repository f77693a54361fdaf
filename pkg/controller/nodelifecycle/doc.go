// Package nodelifecycle implements the node-lifecycle-controller, as
// upstream's (v1.37) with the taint-eviction-controller running separately:
//
//   - health.go, monitor.go: every --node-monitor-period, each node's
//     health is judged from its Ready heartbeat and its Lease in
//     kube-node-lease. A node that shows no sign of life within
//     --node-monitor-grace-period (--node-startup-grace-period before it
//     first posts Ready) gets Ready, MemoryPressure, DiskPressure and
//     PIDPressure set to Unknown; when it stops being Ready its pods are
//     marked not ready (podstatus.go) and a NodeNotReady Event is recorded.
//     New and removed nodes get RegisteredNode and RemovingNode Events.
//     leasecheck.go confirms an expired Lease with a live read first
//     (the NodeControllerLeaseCircuitBreaker gate).
//   - taints.go, sync.go: on every Node change, the NoSchedule taints
//     follow the node's conditions (not-ready, unreachable, memory, disk
//     and PID pressure, network-unavailable) and spec.unschedulable, and
//     the beta OS and arch labels follow the stable ones, in at most one
//     request.
//   - zones.go, taintqueue.go: a node that is not Ready is queued in its
//     zone for the not-ready or unreachable NoExecute taint, which the
//     taint-eviction-controller acts on. Each zone's queue is rate limited
//     by the zone's state (Normal, PartialDisruption, FullDisruption):
//     --node-eviction-rate, --secondary-node-eviction-rate,
//     --unhealthy-zone-threshold and --large-cluster-size-threshold. When
//     every zone is fully disrupted all NoExecute taints are removed.
//     The queues are worked every 100 ms while any holds a node, and not
//     at all while none does (controller.go, taintLoop).
//
// # Differences from upstream
//
// Upstream's conditions, taints, Events and rates; what differs:
//
//   - each node write is one JSON patch, carrying a "test" of the taints it
//     replaces instead of a GET first (internal/controller/nodeutil), and
//     an already-correct NoExecute taint is not stamped again after a
//     restart;
//   - the Lease is read live only before a node is marked Unknown
//     (leasecheck.go); a deleted node's health record goes with it;
//   - node sync errors are retried with backoff (upstream never retries),
//     and a --node-monitor-period of 0 is refused (upstream would spin);
//   - the monitor pass (every node, every --node-monitor-period) copies a
//     node only to mark it Unknown, hands out health records without
//     copying the status and Lease they point to (neither is changed in
//     place once stored), and lists a node's pods only to mark them
//     NotReady; upstream deep-copies every node and every record and lists
//     every node's pods on each pass.
package nodelifecycle
