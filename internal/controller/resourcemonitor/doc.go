// Package resourcemonitor discovers the API resources a controller follows
// and keeps one event handler per resource on shared informers: the typed
// informer another controller already runs for it, else a metadata-only one.
//
// The garbage collector (every deletable resource) and the resource quota
// controller (every namespaced resource that can be created, listed, watched
// and deleted) share it: Discover finds the resources, Monitors follows
// them as discovery changes, reports those whose informer has not synced (a
// CRD with a broken conversion webhook, an unavailable aggregated API) and
// hands out the informer of each for listing.
package resourcemonitor
