// Package namespace implements the namespace-controller: when a Namespace
// is being deleted it moves it to the Terminating phase, deletes everything
// in it (pods first, then every other namespaced resource that discovery
// reports as deletable, through the metadata client), records the progress
// as the Namespace's deletion conditions, and finally removes the
// "kubernetes" finalizer through the finalize subresource so that the
// apiserver can remove the Namespace.
//
// Files: controller.go (informer, queue, sync), deleter.go (the deletion of
// one namespace), resources.go (discovery and supported operations),
// conditions.go (status conditions), estimate.go (graceful-termination
// estimate and requeue delay).
//
// # Differences from upstream
//
// Upstream's order, conditions and rate limits (per-namespace backoff from
// 5 ms to 60 s and an overall 10 qps / 100 burst token bucket). The one
// difference: there is no discovery in the constructor; each sync uses a
// discovery result of its own, so resources added later (CRDs) are deleted
// too.
package namespace
