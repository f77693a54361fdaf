// Package pvcprotection implements the
// persistentvolumeclaim-protection-controller (alias pvc-protection).
//
// It keeps the kubernetes.io/pvc-protection finalizer on every live
// PersistentVolumeClaim and removes it from a claim being deleted once no
// scheduled pod uses the claim. A pod uses a claim through a
// persistentVolumeClaim volume (terminated pods included, as upstream: the
// kubelet may still hold the volume) or through a generic ephemeral volume
// whose claim belongs to the pod, unless the pod was shut down (deleted
// with a zero grace period). Unscheduled pods do not block: the kubelet
// refuses to start a pod whose claim is being deleted.
//
// Before it removes the finalizer the controller asks its informer cache
// and, when the cache shows no user, the apiserver: a live list of the
// namespace's pods, shared by every claim of that namespace in the same
// batch of queued keys.
//
// With the PersistentVolumeClaimUnusedSinceTime gate (beta, on in v1.37) it
// also keeps the Unused condition of every Bound claim: False with reason
// PodUsingPVC while a pod that has not terminated refers to it (scheduled
// or not), True with reason NoPodsUsingPVC otherwise.
//
// # Differences from upstream
//
// Upstream's rules, requests and Events, and its two-level check (the
// informer's pod-to-claim index, then a live pod list of the namespace,
// shared within a batch). What differs:
//
//   - one worker takes every queued key in one batch (up to 1000) and syncs
//     its claims four at a time, instead of upstream's main worker feeding
//     a per-namespace queue whose claims are synced one after another;
//   - after it writes the Unused condition it continues from the claim the
//     write returned, where upstream updates the finalizers from its stale
//     copy and retries the conflict;
//   - a newly bound claim that needs only the Unused condition is queued for
//     the end of the current second, so the claims bound within it share one
//     batch and one live pod list (upstream lists once per claim: 500 lists
//     for 500 claims bound at the binder's pace); finalizer work is queued at
//     once, and a pending claim, which the sync would not touch, is not
//     queued.
package pvcprotection
