// Package storageversiongc implements the
// storageversion-garbage-collector-controller (alias storage-version-gc;
// gated by APIServerIdentity, beta and on, and StorageVersionAPI, alpha and
// off, in v1.37). Each kube-apiserver with StorageVersionAPI records the
// storage versions it encodes into StorageVersion objects
// (internal.apiserver.k8s.io/v1alpha1), one entry per server, keyed by its
// identity: the name of its Lease in kube-system labelled
// apiserver.kubernetes.io/identity=kube-apiserver. This controller removes
// the entries of servers that are gone:
//
//   - when an identity Lease is deleted, every StorageVersion's entry with
//     that server's ID;
//   - when a StorageVersion is added or updated with an entry whose server
//     has no identity Lease, that entry.
//
// A StorageVersion left with no entries is deleted; otherwise its status is
// written with the remaining entries, and status.commonEncodingVersion and
// the AllEncodingVersionsEqual condition are recomputed by
// k8s.io/apiserver's storageversion.SetCommonEncodingVersion, the helper the
// kube-apiserver itself uses. Before it drops anything the controller reads
// the Lease and the StorageVersion from the API server, as upstream does:
// the informer caches only say what to look at, since a lagging Lease cache
// would otherwise remove the entries of a server that just started.
//
// Two queues, each with one worker, under upstream's names
// (storage_version_garbage_collector_leases and
// storage_version_garbage_collector_storageversions) and upstream's client
// identity (storage-version-garbage-collector). No flags, Events or metrics.
//
// # Differences from upstream
//
//   - An error reading an entry's Lease other than NotFound is retried;
//     upstream takes any error as proof that the server is gone and drops
//     its entry.
//   - Deleting a StorageVersion that is already gone counts as done rather
//     than as an error to retry.
package storageversiongc
