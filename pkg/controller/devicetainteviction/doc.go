// Package devicetainteviction implements the
// device-taint-eviction-controller (DynamicResourceAllocation and
// DRADeviceTaints, both on by default in v1.37): it deletes pods whose
// allocated devices carry NoExecute taints that their claims' allocation
// does not tolerate, and reports in each DeviceTaintRule's status how the
// eviction it causes is going.
//
// # What it decides
//
// A pod is looked at once it is bound to a node. The claims it uses are
// those its spec.resourceClaims name, directly or through
// status.resourceClaimStatuses for generated ones (which must be owned by
// the pod); a claim counts only if it is allocated and reserved for the
// pod (or, under DRAWorkloadResourceClaims, for its PodGroup). For each
// allocated device (status.allocation.devices.results) the NoExecute taints
// are those of the device in its pool's ResourceSlices of the highest
// generation, plus the taint of every DeviceTaintRule (resource.k8s.io/v1,
// DRADeviceTaintRules, on by default in v1.37) with effect NoExecute whose
// selector names the device's driver, pool and device (unset fields match
// anything; no selector matches nothing).
//
// A taint is tolerated forever if one of the device's allocation
// tolerations with effect NoExecute matches it and has no
// tolerationSeconds; otherwise it must be acted upon at its timeAdded
// plus the smallest tolerationSeconds of the matching tolerations
// (negative counts as zero; no matching toleration: at timeAdded). As
// upstream, a toleration that does not name the NoExecute effect is not
// considered. The pod is evicted at the earliest such time over all its
// claims' devices; if that time is in the future the decision is made
// again then. A pending eviction that is no longer needed (the taint went,
// a toleration came, the claim was deallocated or released) is cancelled
// with a "Cancelling deletion" Event; a pod that is deleted just drops it.
//
// Evicting reads the pod from the API server; unless it is already
// terminating, it records the DeviceTaintManagerEviction Event "Marking
// for deletion", sets the DisruptionTarget condition (reason
// DeletionByDeviceTaintManager, message "Device Taint manager: deleting
// due to NoExecute taint") by a status patch, and deletes the pod with
// its UID as precondition. Failures are retried with backoff. Metrics:
// device_taint_eviction_controller_pod_deletions_total and
// device_taint_eviction_controller_pod_deletion_duration_seconds (from
// the time the eviction became due), upstream's.
//
// # DeviceTaintRule status
//
// Each rule gets the EvictionInProgress condition by server-side apply
// (field manager: the controller's name) when it is created or its spec
// changes, then, while pods are evicted because of it, at most every 10
// seconds: NoExecute rules PodsPendingEviction (True, "N pods need to be
// evicted in M namespaces."), Completed or NotStarted; None rules
// NoEffect, with what NoExecute would select and evict; other effects
// OtherEffect. The pods evicted because of the rule since the controller
// started are appended to the message. Reasons and messages are
// upstream's, word for word.
//
// # How it works
//
// Informer handlers only enqueue: a pod when it is bound or its claims'
// names appear; the consumers of a claim whose allocation, reservations or
// owners change; the consumers of every claim allocated from a pool whose
// published NoExecute taints may have changed; a rule's status (at once)
// and the consumers of the claims its NoExecute taint selects when it
// changes. Workers decide level-based, from the listers, for one pod or
// one rule at a time. The client identity is upstream's,
// device-taint-eviction-controller, whose ClusterRole the apiserver's
// bootstrap RBAC grants.
//
// # Differences from upstream
//
//   - Upstream keeps its own copy of every allocated claim, every pool and
//     every NoExecute rule, updated and evaluated in its informer
//     handlers; here handlers only enqueue and a worker decides from the
//     listers. The outcomes are the same. A slice change makes every pod
//     using a claim from that pool be looked at again, rather than only
//     those using the changed devices: more in-memory work, no more
//     writes. Decisions start once the caches have synced, so the
//     transient evictions and cancellations (and their Events) upstream
//     may compute while its informers fill do not happen. Likewise, a
//     taint that comes and goes before a worker has looked at the pod
//     schedules nothing, so there is no "Cancelling deletion" Event,
//     where upstream schedules and cancels in its handlers.
//   - The DeviceClass informer upstream starts (and waits for, but never
//     reads) is not started.
//   - A pod that is already terminating in the cache when its eviction is
//     due is counted as evicted (as upstream counts it) without reading it
//     from the API server first: upstream's GET would find it terminating
//     too.
//   - A taint without timeAdded (the API server always sets it) is due
//     from the zero time, that is at once; upstream would crash on it when
//     a toleration has tolerationSeconds.
//   - The informer indexes are this controller's own, by name, so that no
//     other controller's index with the same name can conflict.
package devicetainteviction
