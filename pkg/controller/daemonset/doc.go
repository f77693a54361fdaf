// Package daemonset implements the daemonset-controller: it runs one pod
// of each DaemonSet on every node the DaemonSet selects, rolls those pods
// to a new template, and reports them in the DaemonSet's status, as
// upstream's controller does (names, labels, revisions, Events, order of
// operations).
//
// Which nodes should run a daemon pod (placement.go): the template's
// nodeName and its nodeSelector and required node affinity must match the
// node, and its tolerations plus the defaults every daemon pod gets must
// tolerate the node's NoSchedule and NoExecute taints; a pod already there
// stays while its NoExecute taints are tolerated. Pods are pinned to their
// node by a required node affinity term on metadata.name; the scheduler
// binds them.
//
// Per DaemonSet, a sync (sync.go):
//
//  1. waits, by returning an error, until the informers have seen the
//     controller's own writes (StaleControllerConsistencyDaemonSet);
//  2. claims pods (adopting matching orphans, releasing non-matching
//     ones) and ControllerRevisions, and finds or creates the revision of
//     the current template (history.go), whose hash labels the pods of
//     that template;
//  3. unless expectations from its last creations or deletions are still
//     outstanding, creates the missing pods and deletes those that must go
//     (manage.go): on nodes that no longer fit, failed ones (with a
//     per-node backoff), succeeded ones and surplus ones, at most
//     BurstReplicas of each per sync, creations in slow-start batches;
//  4. if that changed nothing and the strategy is RollingUpdate, deletes
//     old pods or creates new ones beside them within maxUnavailable and
//     maxSurge (rolling.go), and deletes revisions beyond
//     revisionHistoryLimit that no pod uses;
//  5. writes status (status.go) if it changed.
//
// Node changes are evaluated by a worker of their own (nodes.go), which
// enqueues only the DaemonSets a node's change concerns.
//
// # Differences from upstream
//
// Burst (250), slow start, failed-pod backoff (1 s to 15 min per node and
// generation), revisions and Events are upstream's. What differs:
//
//   - node events are many (every node, every label or taint change) and
//     each may concern any DaemonSet. Upstream (v1.37) also queues node names,
//     but its worker rebuilds every DaemonSet's tolerations and re-parses its
//     node selector and affinity for each node it evaluates; here the
//     placement (template nodeName, parsed nodeSelector and required node
//     affinity, tolerations with the daemon defaults) is cached per
//     DaemonSet object, so a node event costs one cheap check per DaemonSet.
//     The handlers only queue the node name (status-only updates, i.e.
//     heartbeats, are dropped there as upstream drops them), and repeated
//     changes of one node collapse in the queue. The node worker enqueues
//     exactly the DaemonSets upstream's rule names (the node should run the
//     pod and has none; has one it should not keep; has one while the
//     DaemonSet counts misscheduled pods);
//   - a deleted node is queued too and wakes the DaemonSets with pods on it,
//     which count it out at once (upstream has no node delete handler and
//     waits for the pod garbage collector);
//   - a sync claims the DaemonSet's pods once and uses them for manage,
//     history clean-up and status (upstream lists and claims up to four
//     times), and again for the rolling update only when manage acted and the
//     informer already saw it; the template's revision data is encoded once
//     per sync (upstream: once per revision compared);
//   - deletion expectations track pod names, so a terminating pod updated
//     again is not counted as another deletion (upstream counts it, which lets
//     it delete an old pod twice during a surge);
//   - a status write that would change nothing is skipped (upstream rewrites
//     an identical status while observedGeneration lags);
//   - pod events that can only move status counters (a creation or deletion
//     while more are expected, readiness that no rollout waits for, the
//     scheduler binding a pod to the node it is pinned to: mayAct,
//     handlers.go) sync through the status Spacer (StatusSpacing, 1 s): at
//     once if the DaemonSet's status was not written in the last second, else
//     when that second ends. Upstream syncs at once on each, and each sync
//     reads every pod of the DaemonSet. A pod turning ready that may be the
//     last one the DaemonSet waits for (its written status has an updated
//     pod on every node, and the pod index shows every other pod ready:
//     maySettle) syncs at once, so the goal is written when it is reached;
//   - the rolling update considers nodes in name order (upstream: map order,
//     random), and nodes needing a pod are taken oldest first;
//   - when many nodes join at once, a settled DaemonSet covers them a turn at
//     a time while other DaemonSets wait in the queue, and then queues behind
//     them (manage.go, newNodesFirst). A turn is 20 nodes, or a tenth of a
//     second of the client's QPS when that is more (turnSize; 50 at 500 QPS,
//     at most the burst of 250): a turn costs a round trip and an informer
//     catch-up whatever its size. Such a turn creates its pods in one round,
//     not in slow-start batches (the API server has accepted the template of
//     every pod the DaemonSet has), and writes no status: the sync that
//     covers the last node does. Upstream has each DaemonSet cover every new
//     node in one sync, so no node is complete until the last DaemonSet's
//     sync; taking turns, the first new nodes get all their daemon pods
//     (kube-proxy, the CNI plugin) first. A new DaemonSet, one rolling out,
//     one alone in the queue, and nodes older than its pods keep the full
//     burst.
//
// One gap is upstream's too: a NoSchedule taint added under a running daemon
// pod wakes no DaemonSet, so its desiredNumberScheduled stays until its next
// sync.
package daemonset
