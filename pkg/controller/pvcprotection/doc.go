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
// batch of queued keys (one worker drains the queue in batches, as
// upstream's namespace batching does, and syncs a batch's claims four at
// a time where upstream syncs them one after another).
//
// With the PersistentVolumeClaimUnusedSinceTime gate (beta, on in v1.37) it
// also keeps the Unused condition of every Bound claim: False with reason
// PodUsingPVC while a pod that has not terminated refers to it (scheduled
// or not), True with reason NoPodsUsingPVC otherwise. A newly bound claim
// that needs only this condition is synced at the end of the current
// second with the others bound within it, sharing their live pod list
// (upstream lists once per claim); finalizer work is never delayed.
package pvcprotection
