// Package resourcequota implements the resourcequota-controller: it keeps
// every ResourceQuota's status.hard equal to its spec.hard and status.used
// equal to what the objects of its namespace use, so that the API
// server's quota admission (which charges creations itself but refuses
// them while a quota's status is unknown) can account.
//
// Usage is measured by the evaluators of package evaluator: pods,
// Services, PersistentVolumeClaims and ResourceClaims from typed
// informers, and every other namespaced resource that can be created,
// listed, watched and deleted by counting it (count/<resource>.<group>).
// Those resources are discovered every 30 seconds and followed through
// internal/controller/resourcemonitor, on the typed informer another
// controller already runs or else a metadata-only one (discovery.go).
//
// A quota is recalculated whole (sync.go):
//
//   - when it is created or its spec.hard changes; quotas whose status
//     lacks the spec's limits or the usage of a tracked resource go to a
//     priority queue (handlers.go);
//   - when an object it tracks is deleted, or updated in a way that frees
//     quota (evaluator.ReplenishOnUpdate): the replenishment path
//     (replenish.go);
//   - every --resource-quota-sync-period (5 minutes), all of them.
//
// A resource whose informer cannot sync (a broken conversion webhook, an
// unavailable aggregated API) is reported under /readyz and its usage
// left as it was; it holds back neither the other resources of the quota
// nor the other quotas.
//
// # Differences from upstream
//
// Upstream's evaluators, queues (primary and priority), triggers and update
// filter, with k8s.io/apiserver's quota arithmetic, so status.used comes out
// in the same quantities and forms. What differs:
//
//   - a resource another controller watches in full shares that typed
//     informer, every other one is watched metadata-only, which is all an
//     object count needs; upstream starts a full typed informer for every
//     built-in resource (every Secret and ConfigMap in full);
//   - upstream's workers wait for every monitor, so a single resource that
//     cannot be listed stops all quota accounting, and they pause for up to
//     30 s whenever discovery changes. Here the workers wait for the
//     monitors at most 30 s at start and never pause: a resource whose
//     informer has not synced keeps its last usage, is reported under
//     /readyz (resourcequota-controller-ready), and every quota is
//     recalculated once it syncs, without backoff retries in between;
//   - when discovery adds a resource, every quota is recalculated once its
//     monitor has synced, so a limit on a CRD made after the quota is
//     measured within about 30 s (upstream: at the next full recalculation,
//     up to --resource-quota-sync-period later); the object count of a
//     resource discovery no longer reports is dropped with its monitor
//     (upstream keeps reading the stopped informer's last state);
//   - deletions and updates queue the quotas from the informer handler
//     (upstream: through a second queue and goroutine), and counts are read
//     from the informers' namespace index instead of summing one usage list
//     per object;
//   - a DeviceClass's extended resource is looked up in the DeviceClass
//     lister; upstream's cache resolves two classes naming the same extended
//     resource by age and may lose the mapping when the older one is deleted.
package resourcequota
