// Package endpointslicemirroring implements the
// endpointslice-mirroring-controller: for every Endpoints object of a
// Service without a selector (custom Endpoints, written by a user or another
// controller), it keeps EndpointSlices managed by
// endpointslicemirroring-controller.k8s.io that hold the same addresses,
// one slice per address type and port set, at most
// --mirroring-max-endpoints-per-subset addresses each.
//
// Endpoints labelled endpointslice.kubernetes.io/skip-mirror=true,
// Endpoints carrying a leader-election record, and Endpoints of Services
// with a selector (the endpoints-controller's own) are not mirrored; their
// mirrored slices are deleted.
//
// Files: controller.go (construction, Run), handlers.go (informer events,
// enqueue only), sync.go (one Endpoints key), repack.go (canonical subsets),
// desired.go (the slices' wanted content), ports.go (port keys and order),
// endpointset.go (endpoint identity and equality), reconcile.go (existing
// against wanted), write.go (API calls), slice.go (the slice object),
// metrics.go. The generations of the slices the controller wrote, the
// slices-by-Service index and upstream's deep hash come from
// internal/controller/endpointutil, shared with the endpointslice-controller.
//
// # Differences from upstream
//
// The addresses mirrored, the slices' names, labels, annotations, owner,
// ports and their order are upstream's (repacked subsets, ready before
// not-ready addresses sorted by IP, the port order of upstream's hash). What
// differs:
//
//   - the endpoints of a slice are written in that order, where upstream
//     writes them in Go map order; of two slices of one address type and
//     port set the first by name is kept (upstream: the lister's first);
//   - an Endpoints that itself carries the kubernetes.io/service-name or
//     endpointslice.kubernetes.io/managed-by label does not get its slices
//     rewritten, unchanged, on every sync (upstream compares its labels with
//     the slice's minus those two);
//   - when a sync creates slices of both address types and deletes old ones,
//     each create reuses a slice of its own type; upstream's recycling
//     matches them by their (empty) names and, in about half of such syncs,
//     tries to create a slice under a name that exists, fails, and is
//     retried with backoff until the map order favours it: the same slices,
//     sooner;
//   - deleting a slice already gone (the garbage collector raced) is not an
//     error;
//   - slices are found through the slices-by-Service index shared with the
//     endpointslice-controller, not a label scan of the namespace.
package endpointslicemirroring
