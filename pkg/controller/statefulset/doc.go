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
//
// # Differences from upstream
//
// Revisions, pods, claims, status and Events are upstream's, byte for byte
// where it matters: a revision's data is upstream's patch (the apps/v1
// codec's encoding of the template) and its name the same hash, so a set
// upstream ran keeps its revisions and pods (parity scenario
// statefulset-upstream-handover). What differs:
//
//   - the set's revision data is computed once per generation (the
//     template changes only with it), a revision holding the set's own
//     template is not applied through a strategic merge patch, and the
//     spec at the other revision (the current one, during a rolling
//     update) is remembered per generation; upstream encodes the set and
//     patches it two or three times per sync, most of a sync's work;
//   - status writes are held back in two cases, and written by a later
//     sync the hold schedules (pods are still created and deleted at
//     once): while pods the controller created are not yet in its cache
//     (at most 5 s; their arrival syncs the set at once), so that a new
//     set's first status, and every scale-up's, is one write where
//     upstream makes two (the first with only observedGeneration and the
//     revisions); and a status that only changes counters, less than
//     StatusSpacing (1 s) after the set's previous status write, is written
//     when that second ends, with whatever changed by then. A status that
//     reaches the goal (every replica there, ready, available and updated
//     as far as the strategy goes) or raises collisionCount is written at
//     once. Final statuses are upstream's; intermediate counts may be
//     skipped;
//   - a pod's claim volumes, and the creation of its claims (and their
//     Events), follow the order of volumeClaimTemplates; upstream's order
//     is a map's, random;
//   - revisions are deleted with a UID precondition, one already gone
//     counting as deleted (upstream returns the NotFound and retries the
//     sync);
//   - a deleted set's metric series
//     (statefulset_controller_statefulset_max_unavailable,
//     _unavailable_replicas) are dropped; upstream keeps them until it
//     exits.
package statefulset
