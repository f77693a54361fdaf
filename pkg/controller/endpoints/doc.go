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
package endpoints
