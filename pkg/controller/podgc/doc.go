// Package podgc implements the pod-garbage-collector-controller. Every 20
// seconds it force-deletes, as upstream does:
//
//   - terminated pods (phase neither Pending, Running nor Unknown) beyond
//     --terminated-pod-gc-threshold, evicted ones first, then oldest first
//     by creation time (name breaks ties); a threshold <= 0 disables only
//     this part;
//   - terminating pods on nodes that are not Ready and carry the
//     node.kubernetes.io/out-of-service taint;
//   - orphaned pods, bound to a node that does not exist: a missing node is
//     quarantined for 40 seconds (the informer may lag) and then confirmed
//     gone with a live GET before its pods are deleted, with a
//     DisruptionTarget condition (reason DeletionByPodGC);
//   - terminating pods that were never scheduled.
//
// Before deleting a pod that is not Succeeded or Failed, it patches its
// status to the Failed phase, so that a pod whose kubelet is gone does not
// stay Running forever.
//
// # Differences from upstream
//
// None visible: upstream's rules and order, on the injected clock.
package podgc
