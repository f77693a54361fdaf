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
//
// # Differences from upstream
//
// Everything the API shows is upstream's: the stale-cache check on slice
// generations, placeholder slices, create-to-update recycling, the
// last-change-trigger-time annotation, topology hints, trafficDistribution,
// Events, metrics and the retry budget (15, from 1 s). What differs:
//
//   - the zones' CPU shares (topology hints) are computed once before the
//     Service workers start; upstream computes them only in its topology
//     worker, racing the first Service syncs, so after a restart a Service
//     synced first has its hints removed (TopologyAwareHintsDisabled, "Nodes
//     only ready in one zone") until its next change;
//   - pod events map to Services through an index of Service selectors
//     (endpointutil.ServiceSelectorIndex: each Service once, under the
//     smallest pair of its selector; a pod is looked up under each of its
//     labels) and are enqueued from the handler with upstream's rules for
//     which Services a change concerns; upstream queues a pod "projection" on
//     a second queue whose workers list every Service of the namespace and
//     match each selector;
//   - with the batch period at 0 (the default), a pod change of a Service
//     whose slices were written less than a second ago is synced a second
//     after that write (endpointutil.WriteSpacing, an
//     internal/controller.Spacer); the first change after a quiet second is
//     synced at once. Upstream writes once per change: during a rollout, one
//     write per pod, each sent to every kube-proxy. An endpoint of a burst
//     appears at most a second later than upstream would write it; the
//     last-change-trigger-time annotation keeps the earliest change a write
//     carries. A batch period set on the command line replaces the spacing;
//   - a sync reads the Service's pods from the pod label index and its
//     slices from the slices-by-Service index, where upstream lists the
//     namespace's pods and slices with label selectors;
//   - endpoints are matched across syncs by a key of their addresses,
//     hostname and pod, not upstream's FNV hash of a spew dump of each (the
//     port order of a new slice still follows upstream's hash, which the API
//     shows);
//   - placement is upstream's algorithm with deterministic ties: the
//     endpoints left over are placed in key order, equally full slices are
//     chosen by name, and topology hints are redistributed to receiving
//     zones in name order, where upstream takes Go map order; the same input
//     always gives the same slices.
package endpointslice
