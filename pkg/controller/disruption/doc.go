// Package disruption implements the disruption-controller: it keeps the
// status of every PodDisruptionBudget, which the eviction API reads to
// decide whether a pod may be evicted.
//
// Per budget, a sync:
//
//  1. reads the pods the budget's selector matches (from a label index of
//     the pod informer, not a scan of the namespace);
//  2. computes expectedPods and desiredHealthy: with an integer
//     minAvailable, the selected pods' count and minAvailable; with a
//     percentage minAvailable or any maxUnavailable, the sum of the desired
//     scale of the pods' controllers (finders.go: ReplicationControllers,
//     Deployments, ReplicaSets, StatefulSets from the informers, any other
//     kind through its scale subresource) and the percentage rounded up;
//  3. drops disruptedPods entries that are gone, deleting, or older than
//     DeletionTimeout (a NotDeleted Event on the pod), and requeues itself
//     for the next entry's expiry;
//  4. counts the Ready pods that are neither deleting nor recently
//     disrupted (currentHealthy), and writes status, with the
//     DisruptionAllowed condition (SufficientPods, InsufficientPods), only
//     when it changed.
//
// A sync that fails for any reason but a write conflict writes
// disruptionsAllowed 0 and DisruptionAllowed=False with reason SyncFailed
// and the error as message, and is not retried unless that write fails:
// the budget must change (or its pods) before a retry could succeed.
//
// A second queue clears stale DisruptionTarget conditions: a pod whose
// condition has been True for stalePodDisruptionTimeout without the pod
// being deleted (an eviction or preemption that did not go through) gets
// the condition set to False.
//
// Events carry upstream's source component, "controllermanager".
package disruption
