// Package endpoints implements the endpoints-controller: for every Service
// with a selector (not of type ExternalName) it keeps the legacy Endpoints
// object of the same name, as upstream v1.37 does.
//
// A sync lists the Service's pods (through the pod label index), turns
// each pod that has an IP and is not terminal into an address of the
// Service's first IP family on every port its targetPorts resolve to,
// ready or not ready (every address is ready with
// publishNotReadyAddresses; terminating pods are left out unless then),
// and packs them as upstream does (subsets.go: one subset per distinct
// address set, sorted by upstream's hashes). The object carries the
// Service's labels plus endpoints.kubernetes.io/managed-by and, for a
// headless Service, service.kubernetes.io/headless; the
// last-change-trigger-time annotation; and, above 1,000 addresses, is
// truncated (ready ones kept first) and annotated
// endpoints.kubernetes.io/over-capacity: truncated. It is written only
// when its subsets, labels or capacity annotation differ; a cache that
// still shows the version the last update replaced is waited for.
//
// A Service that is gone has its Endpoints object deleted; at start every
// existing Endpoints object is queued once so that those of Services
// deleted meanwhile go too (leader-election records excepted).
//
// # Differences from upstream
//
//   - pods map to Services through the same Service-selector index as the
//     endpointslice-controller's, and a sync reads the pod label index
//     (upstream: a projection queue and a namespace scan per sync);
//   - the same write spacing applies when --endpoint-updates-batch-period is
//     0 (endpointutil.WriteSpacing; see package endpointslice);
//   - subsets are packed and ordered as upstream's RepackSubsets does, with
//     each port and subset hashed once instead of at every comparison of the
//     sort. Ports are grouped by value; upstream keys a map by the port
//     struct, whose appProtocol is a pointer, which groups differently only
//     an object listing one port in several subsets: neither controller
//     writes one, and where someone else did, kcm may find it up to date
//     after re-packing where upstream rewrites it.
//
// Like upstream, it does not set endpointslice.kubernetes.io/skip-mirror
// (the mirroring controller ignores Endpoints of Services with a selector).
package endpoints
