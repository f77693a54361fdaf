// Package podgroupprotection implements the podgroup-protection-controller
// (gated by GenericWorkload, beta and off in v1.37). The kube-apiserver's
// PodGroupProtection admission plugin stamps the
// scheduling.k8s.io/podgroup-protection finalizer on every PodGroup
// (scheduling.k8s.io/v1beta1) it creates; this controller removes it from a
// PodGroup being deleted once no active pod of its namespace names it in
// spec.schedulingGroup.podGroupName. A pod is active until its phase is
// Succeeded or Failed. An informer index from "namespace/podGroupName" to
// the active pods answers the question, as upstream's does. The controller
// never adds the finalizer: that is admission's job.
//
// A PodGroup is synced when it is added or updated while being deleted
// with the finalizer, and when a pod that named it stops being active:
// it reaches a terminal phase, is deleted, or is replaced by a pod of the
// same name and a new UID. One worker, upstream's client identity
// (podgroup-protection-controller) and workqueue name (podgroupprotection);
// no flags, Events or metrics of its own.
//
// # Differences from upstream
//
//   - Pod events enqueue a PodGroup only when one of its pods leaves the
//     index of active pods (it turns terminal, is deleted, or is replaced).
//     Upstream also enqueues on every add or update of an already terminal
//     pod and on the deletion of one, syncs that cannot change the answer.
//   - The constructor does not check GenericWorkload again: the registry
//     starts the controller only with the gate on.
package podgroupprotection
