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
package resourcequota
