// Package endpointslicemirroring implements the
// endpointslice-mirroring-controller: for every Endpoints object of a
// Service without a selector (custom Endpoints, written by a user or another
// controller), it keeps EndpointSlices managed by
// endpointslicemirroring-controller.k8s.io that hold the same addresses,
// one slice per address type and port set, at most
// --mirroring-max-endpoints-per-subset addresses each.
//
// Endpoints labelled endpointslice.kubernetes.io/skip-mirror=true (the
// endpoints-controller's own), Endpoints carrying a leader-election record,
// and Endpoints of Services with a selector are not mirrored; their
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
package endpointslicemirroring
