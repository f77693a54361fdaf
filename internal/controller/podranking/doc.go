// Package podranking orders a controller's pods for scale-down, most
// preferred victim first, and holds the pod-state predicates that order and
// the replica counts rely on: active, terminating, ready, available.
//
// The order is upstream's ActivePodsWithRanks: unassigned before assigned;
// Pending before Unknown before Running; not ready before ready; lower
// controller.kubernetes.io/pod-deletion-cost first (PodDeletionCost gate);
// more co-located pods (higher rank) first; ready for less time first; more
// container restarts first; newer first. Ready times and creation times are
// compared on a base-2 logarithmic scale of their age, so that pods of about
// the same age tie and are then ordered by UID, a pseudo-random choice.
package podranking
