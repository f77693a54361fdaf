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
// Upstream reads the objects from the garbage collector's metadata informer
// for the resource; this package lists them with the metadata client
// instead (see ARCHITECTURE.md).
package storageversionmigrator
