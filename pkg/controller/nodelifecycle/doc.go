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
// Every taint or label write is a single JSON patch built from the cached
// Node (internal/controller/nodeutil), with no read before it.
package nodelifecycle
