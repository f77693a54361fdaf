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
//
// # Differences from upstream
//
// Pods, Events, conditions and the final status are upstream's; what differs
// is how often the status is written and what a sync reads:
//
//   - no per-sync deep copy of the owner; the status is written only when it
//     changes;
//   - status writes are spaced (internal/controller.Spacer, StatusSpacing
//     1 s): a write that only reports progress (counters of which none of
//     ready, available and fully labeled fell), less than a second after the
//     owner's previous status write, is made when the second ends, together
//     with whatever else changed by then; syncs caused by pod status changes
//     alone are spaced the same way. Falls in availability, changes of
//     conditions, observedGeneration or annotations, and every creation,
//     deletion, adoption and release happen at once, and so does a status
//     that reaches the goal (every desired replica ready and available, none
//     terminating). Upstream writes each change: five pods becoming ready one
//     after the other are five ReplicaSet status writes and, through the
//     Deployment syncs they cause, five Deployment status writes;
//   - the status written by a sync that deleted pods already counts them: as
//     gone, or as terminating where the API server deletes gracefully
//     (finalizers, or a scheduled pod with a grace period). Upstream writes
//     the counts from before, then one status per batch of deletions its
//     informer reports; here it is one write per scale-down. An owning
//     Deployment therefore never reads an old ReplicaSet's availability from
//     before its scale-down (upstream's rolling update may count such pods as
//     available once more and scale down past maxUnavailable);
//   - created pods are not counted ahead; the status waits for them
//     (waitsForPods, status.go): until the cache has seen every expected
//     creation and deletion, a sync that would only change counters writes
//     nothing (it would write the cache's lag), and while creations are
//     unobserved neither does one that would only move observedGeneration.
//     A sync that creates pods and would write only a new observedGeneration
//     (a new ReplicaSet's first status, every scale-up) leaves it to the sync
//     that sees the last creation, which writes observedGeneration and
//     replicas together: one write per scale-up where upstream makes two. A
//     sync that creates a further batch after earlier ones were observed
//     writes at once, as upstream, so a ReplicaSet of thousands shows each
//     batch of 500;
//   - ranking scale-down victims by co-location needs the pods of every
//     sibling ReplicaSet; they come from a namespace/label index on the pod
//     informer (internal/controller/labelindex), not from matching the
//     selector against every pod of the namespace.
package replicaset
