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
//
// # Differences from upstream
//
// Finders, their order, the scale subresource and discovery checks, status
// comparison, failSafe, Events (NotDeleted's text naming the namespace twice)
// and the 2-minute timeouts are upstream's. What differs:
//
//   - pod events map to budgets through an index of the budgets' selectors
//     (index.go: each budget under one requirement all its pods meet), where
//     upstream matches every budget of the namespace. Every budget selecting
//     the pod is queued; upstream queues one chosen in cache order, so a
//     pod's other budgets wait for their next event, and a pod relabelled out
//     of a budget wakes it here (upstream: not until another event). The
//     MultiplePodDisruptionBudgets Event keeps upstream's text and names the
//     first budget by name (upstream: whichever the cache lists first);
//   - pods are taken in name order, so the pod a "found no controllers"
//     error names is the same on every run; each controllerRef is resolved
//     once per sync (upstream: once per pod of a Deployment);
//   - the recheck at the next disruptedPods expiry is a delayed add to the
//     budget queue; upstream feeds a separate "disruption_recheck" queue into
//     it, whose workqueue metrics do not exist here;
//   - a SyncFailed status identical to the stored one is not written again
//     (upstream sends it, a no-op at the API server);
//   - the DisruptionAllowed condition's lastTransitionTime and the stale
//     DisruptionTarget clean-up use the injected clock.
package disruption
