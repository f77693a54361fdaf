// Package storageversionmigrator implements the
// storage-version-migrator-controller (alias svm): it processes
// StorageVersionMigrations (storagemigration.k8s.io/v1) by rewriting every
// object of the named resource with a no-op patch, so that the
// kube-apiserver stores it again at the resource's current storage version.
//
// Like upstream, it is three loops over one StorageVersionMigration
// informer, each in its own file:
//
//   - runner.go: per resource, at most one migration runs at a time. The
//     oldest pending one (by creation time, then name) gets Running=True
//     (reason MigrationRunning); a custom resource's CRD gets the
//     StorageMigrating condition. A finished one gets Running=False (reason
//     MigrationCompleted), and its CRD StorageMigrating=False with
//     status.storedVersions reduced to the storage version on success.
//   - resourceversion.go: a running migration without
//     status.resourceVersion gets the resource's current list
//     resourceVersion, the point up to which objects must be rewritten. A
//     resource missing from discovery for a minute, or lacking the list,
//     patch or update verbs, fails the migration.
//   - migrate.go: once status.resourceVersion is set, every object whose
//     resourceVersion is not newer is patched with a merge patch of its
//     apiVersion, kind and resourceVersion (a precondition: conflicts and
//     deletions are skipped, the object was rewritten anyway), then the
//     migration gets Succeeded=True (reason
//     StorageVersionMigrationSucceeded). A non-retriable patch error gives
//     Failed=True (reason StorageVersionMigrationFailed).
//
// # Differences from upstream
//
// Upstream's three loops, conditions, reasons, messages, patch body, field
// managers and CRD StorageMigrating condition, in one package over one
// informer. What differs:
//
//   - upstream reads the objects to rewrite from the garbage collector's
//     metadata informer for the resource, shared through its
//     ControllerContext, and waits until that cache has reached the
//     migration's resourceVersion. kcm's garbage collector does not share its
//     monitors, so kcm lists the objects' metadata from the API server in
//     pages of 500 when the migration runs (a consistent list, never older
//     than the migration's resourceVersion): one paged list per migration
//     instead of a cache that is there anyway, and no dependency between the
//     two controllers at run time. A visible effect is speed: upstream waits
//     until that informer's resourceVersion reaches the migration's, which
//     for a resource nobody writes takes until the next watch bookmark
//     (about a minute);
//   - upstream's limits that come from the garbage collector are kept: a
//     resource the garbage collector does not monitor (in
//     --gc-ignored-resources, or lacking delete, list or watch) is retried
//     with backoff and never finishes, as upstream, and the controller
//     refuses to start with the garbage collector disabled;
//   - status writes that change nothing are not sent; a 429's Retry-After is
//     not honoured beyond the queue's own backoff.
package storageversionmigrator
