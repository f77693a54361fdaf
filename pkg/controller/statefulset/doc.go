// Package statefulset implements the statefulset-controller: for every
// StatefulSet it keeps spec.replicas pods with stable identities (named
// <set>-<ordinal> from spec.ordinals.start, hostname and subdomain from
// serviceName, labels statefulset.kubernetes.io/pod-name and
// apps.kubernetes.io/pod-index) and stable storage (one claim
// <template>-<set>-<ordinal> per volumeClaimTemplate, created before its
// pod), and reports them in its status, as upstream v1.37 does.
//
// Per set, a sync:
//
//  1. waits, by returning an error, until the informers have seen the
//     controller's own writes (StaleControllerConsistencyStatefulSet);
//  2. adopts orphan ControllerRevisions its selector matches, and claims
//     its pods (internal/controller/controllerref; only pods whose names
//     make them members);
//  3. finds its update revision, the one holding its template (creating
//     it, or reusing an equal older one on a rollback), and its current
//     revision (revisions.go, through internal/controller/history);
//  4. reconciles (update.go, replicas.go): replicas in range are created,
//     replaced when Failed or Succeeded, and repaired; out-of-range pods
//     are deleted. OrderedReady does one pod at a time in ordinal order
//     (descending for deletions) and halts at an unhealthy pod; Parallel
//     does all at once in slow-start batches;
//  5. rolls pods to the update revision (rolling.go): RollingUpdate with
//     partition and maxUnavailable (MaxUnavailableStatefulSet), OnDelete,
//     or Recreate (StatefulSetRecreateStrategy);
//  6. writes status if it changed (status.go), unless the write is held
//     back (spacing.go: while its own creations are not in the cache yet,
//     and progress-only writes spaced by StatusSpacing), prunes revisions
//     beyond revisionHistoryLimit that no pod uses, and requeues itself for
//     the moment a ready pod becomes available after minReadySeconds.
//
// Claims carry the owner references persistentVolumeClaimRetentionPolicy
// asks for (retention.go), so that the garbage collector deletes them when
// the set is deleted or the pod scaled down.
package statefulset
