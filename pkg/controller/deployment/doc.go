// Package deployment implements the deployment-controller: it rolls a
// Deployment's pod template out through ReplicaSets, one per template, and
// reports the rollout in the Deployment's status, as upstream
// kube-controller-manager does.
//
// Per Deployment, a sync:
//
//  1. claims ReplicaSets: the Deployment's own that still match its
//     selector, plus matching orphans it adopts (after an uncached GET
//     confirmed the Deployment is not being deleted); it releases its own
//     that no longer match;
//  2. finds the new ReplicaSet (the one whose template equals the
//     Deployment's, ignoring the pod-template-hash label) and the old ones,
//     and syncs revisions: the new ReplicaSet gets revision max(old)+1 and
//     the Deployment carries it in deployment.kubernetes.io/revision;
//  3. for a Deployment being deleted, only reports status; for a paused
//     one, or after spec.replicas changed (a "scaling event", seen through
//     the desired-replicas annotation of the ReplicaSets), scales all
//     active ReplicaSets proportionally and does not roll out;
//  4. otherwise rolls out with the strategy: RollingUpdate creates the new
//     ReplicaSet and moves replicas to it within maxSurge and
//     maxUnavailable; Recreate scales the old ones to zero, waits for their
//     pods to stop, then scales the new one up;
//  5. deletes old ReplicaSets beyond revisionHistoryLimit once complete;
//  6. writes status (counters and the Progressing, Available and
//     ReplicaFailure conditions), at most once and only if it changed, and
//     requeues itself for the moment progressDeadlineSeconds would pass.
//
// # Differences from upstream
//
// The limits, ReplicaSets, Events and final statuses are upstream's; what
// differs is the shape of a sync and how many writes a rollout makes:
//
//   - a sync accumulates its changes to the Deployment's status and
//     annotations and writes them once, at its end, where upstream writes at
//     several steps with the same resourceVersion, so that its later writes
//     in a sync fail with a conflict and the sync is retried;
//   - a sync that the informer woke before it delivered the controller's
//     own last write starts from that write (written.go) instead of the
//     older cached copy, which upstream would write against and fail with a
//     conflict. Where that conflict changes upstream's outcome (see
//     syncState.cacheBehind), kcm reproduces the outcome;
//   - the new/old ReplicaSet lookup runs once per sync, and adoption
//     candidates come from informer indexes instead of a namespace-wide list;
//   - status writes that change only counters and the conditions'
//     lastUpdateTime are spaced by StatusSpacing (1 s,
//     internal/controller.Spacer), as the ReplicaSet's are (package
//     replicaset); a Deployment's first complete status, and one with
//     nothing left in motion (complete, every replica ready, none
//     terminating), are written at once.
package deployment
