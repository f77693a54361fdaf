// Package metrics reads the three metrics APIs the horizontal pod
// autoscaler scales on, as upstream's REST metrics client does:
//
//   - metrics.k8s.io/v1beta1 PodMetrics (resource usage per container),
//   - custom.metrics.k8s.io (v1beta2, or v1beta1 when the server prefers
//     it) for metrics of pods and of other objects,
//   - external.metrics.k8s.io/v1beta1 for metrics of nothing in the
//     cluster.
//
// The clients are client-go REST clients on the API types of types.go,
// which are the subset of k8s.io/metrics' types the controller reads (that
// module is not among kcm's dependencies). Requests are built with the same
// resource, name and subresource as k8s.io/metrics' clients, so their errors
// read the same in the HPA's conditions and Events.
//
// Values are milli-units (resource.Quantity.MilliValue) throughout.
package metrics
