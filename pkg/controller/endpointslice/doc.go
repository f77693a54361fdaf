// Package endpointslice implements the endpointslice-controller: for every
// Service with a selector (not of type ExternalName) it keeps
// EndpointSlices, managed by endpointslice-controller.k8s.io, that list
// the selected pods as endpoints, as upstream v1.37 does.
//
// Per Service, a sync:
//
//  1. reads the Service, its pods (through the pod label index) and its
//     managed slices (through a service-name index) from the caches;
//  2. waits, by returning an error retried with backoff, while the slice
//     cache lags behind the controller's own writes (SliceTracker);
//  3. per address type of the Service (its IP families): builds the
//     desired endpoints (addresses of that family, ready/serving/
//     terminating, node, zone, hostname, pod reference) grouped by the
//     ports the Service's targetPorts resolve to on each pod;
//  4. places them into slices of at most --max-endpoints-per-slice
//     (placement.go): existing slices keep what they can, slices written
//     anyway are filled first, then one unchanged slice, then new ones;
//     a Service without endpoints keeps one empty placeholder slice;
//  5. sets topology hints (topology-mode Auto: by the zones' allocatable
//     CPU; or spec.trafficDistribution), and writes: creates turned into
//     updates of slices to be deleted where possible, then creates,
//     updates and deletes, each with the last-change-trigger-time
//     annotation, recorded in the tracker; then records the topology
//     Events on the Service.
//
// Pod events map to Services through an index of Service selectors
// (endpointutil) and are synced after --endpointslice-updates-batch-period;
// changes to managed slices the controller did not make itself are synced
// after at least a second. Node readiness and zone changes update the
// zones' CPU shares on a separate one-worker queue.
package endpointslice
