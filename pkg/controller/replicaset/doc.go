// Package replicaset implements the replicaset-controller: it keeps
// spec.replicas pods running for every ReplicaSet, and reports them in its
// status.
//
// The same Controller also serves ReplicationControllers (package
// replication): it works on a ReplicaSet view of its owner objects and
// reaches them only through the Owners interface, which the
// ReplicationController adapter implements by converting.
//
// Per owner, a sync:
//
//  1. waits, by returning an error, until the informers have seen the
//     controller's own writes (StaleControllerConsistencyReplicaSet);
//  2. claims pods: the owner's pods that still match its selector, plus
//     matching orphans it adopts after an uncached GET confirmed the owner
//     is not being deleted; non-matching ones are released;
//  3. unless expectations from its last creations or deletions are still
//     outstanding, or the owner is being deleted, creates or deletes the
//     difference to spec.replicas, at most BurstReplicas per sync: creations
//     in slow-start batches (1, 2, 4, ...) stopping at the first error,
//     deletions of the pods ranked first by podranking;
//  4. writes status (replicas, fullyLabeledReplicas, readyReplicas,
//     availableReplicas, terminatingReplicas, observedGeneration and the
//     ReplicaFailure condition) only if it changed;
//  5. requeues itself for the moment a ready pod becomes available after
//     minReadySeconds.
package replicaset
