// Package job implements the job-controller: it runs the pods of every
// batch/v1 Job until the Job succeeds or fails, and reports their progress
// in the Job's status, with upstream v1.37's behaviour.
//
// Per Job, a sync (sync.go):
//
//  1. waits, by returning an error, until the informers have seen the
//     controller's own writes (StaleControllerConsistencyJob), and skips
//     Jobs that are finished, managed by another controller
//     (spec.managedBy) or of an unknown completion mode;
//  2. claims pods: its own that still match its selector, plus matching
//     orphans, adopted with the batch.kubernetes.io/job-tracking
//     finalizer;
//  3. decides whether the Job has reached an end (finish.go): a
//     SuccessCriteriaMet or FailureTarget condition from an earlier sync, a
//     FailJob rule of the pod failure policy (failurepolicy.go), the backoff
//     limit, activeDeadlineSeconds, failed indexes (backoffLimitPerIndex,
//     maxFailedIndexes), the success policy (successpolicy.go) or, after
//     managing pods, completions;
//  4. if it has, deletes the active pods; otherwise, unless expectations
//     of earlier creations or deletions are outstanding, creates or deletes
//     pods toward parallelism and completions (manage.go), indexes first
//     to last for Indexed Jobs (indexed.go), respecting the pod failure
//     back-off (backoff.go), and sets the Suspended condition;
//  5. tracks finished pods exactly once (tracking.go): their UIDs go to
//     status.uncountedTerminatedPods (or, for Indexed Jobs, their indexes
//     to completedIndexes) before their tracking finalizers are removed,
//     and are moved to the succeeded/failed counters after; only then is
//     the interim condition turned into Complete or Failed.
//
// Pods that keep the tracking finalizer but no longer belong to a running
// Job (their Job was deleted or finished, or released them) lose it through
// a second queue (orphans.go). Event handlers only enqueue: a change of a
// Job's status never lists its pods.
//
// # Differences from upstream
//
// Upstream's tracking with finalizers, with one difference: the orphan
// worker leaves alone a pod whose finalizer removal the Job's own last sync
// made and the informer has not shown yet (finalizers.pending); upstream
// patches such a pod a second time, a request that changes nothing.
package job
