// Package endpointutil holds what the endpointslice- and the
// endpoints-controller share, with upstream's semantics:
//
//   - which pods are endpoints of a Service and how they look
//     (ShouldPodBeInEndpoints, ShouldSetHostname, FindPort, IsPodReady);
//   - which Services a pod change concerns, through an index on the
//     Service informer keyed by one of each selector's pairs
//     (AddServiceSelectorIndex, ServicesForPodChange), instead of matching
//     every Service of the namespace per pod event;
//   - the endpoints.kubernetes.io/last-change-trigger-time value
//     (TriggerTimeTracker);
//   - the generations of the EndpointSlices a controller wrote, to tell a
//     stale informer cache from the controller's own writes (SliceTracker);
//   - upstream's deep hash, which decides the order of ports and subsets
//     that the API shows (DeepHashString).
package endpointutil
