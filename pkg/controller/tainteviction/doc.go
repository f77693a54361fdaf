// Package tainteviction implements the taint-eviction-controller: it deletes
// pods bound to nodes that carry NoExecute taints the pods do not tolerate.
//
// For each bound pod on a node with NoExecute taints the controller decides:
//
//   - some taint is not tolerated: evict now;
//   - every taint is tolerated, and for each taint the first toleration that
//     matches it has no tolerationSeconds: never evict;
//   - otherwise evict after the shortest tolerationSeconds among those
//     tolerations (zero or negative: now).
//
// A pending eviction keeps its deadline while the pod stays evictable; it is
// cancelled, with a "Cancelling deletion" Event, when the node loses its
// NoExecute taints, when the pod comes to tolerate them forever, or when the
// pod is deleted or bound elsewhere. Deleting a node does not cancel the
// evictions pending for its pods, as upstream.
//
// An eviction records the "Marking for deletion" Event, sets the pod's
// DisruptionTarget condition through a status patch, then deletes the pod,
// trying up to five times.
//
// Informer handlers only enqueue: node keys when a node's NoExecute taints
// change, pod keys when a pod's node or tolerations change. The node worker
// fans a node out to its pods; the pod worker decides, reading listers only,
// and schedules or cancels the pod's eviction in an evictionQueue, whose own
// workers run evictions when they are due. All time comes from the injected
// clock.
//
// # Differences from upstream
//
// Upstream decides with a timer per pod; here the decisions are level-based,
// from the listers and a delaying queue (timedqueue.go), with the same
// outcomes. A pod already gone ends its eviction at once instead of after
// five retries, and the eviction latency metric
// (pod_deletion_duration_seconds) is in seconds.
package tainteviction
