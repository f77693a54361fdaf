// Package noderoute implements the node-route-controller (alias "route")
// of cloud-controller-manager: every node's spec.podCIDRs get a route to
// the node through the cloud provider's Routes interface, and the node's
// NetworkUnavailable condition says whether they all exist (False,
// RouteCreated) or not (True, NoRouteCreated). Routes whose destination
// lies inside --cluster-cidr and that target no node, a CIDR the node no
// longer has, or nothing (blackholes) are deleted; routes outside the
// cluster CIDR are never touched. A route that records its node's
// addresses (Route.EnableNodeAddresses) is replaced when they change.
//
// It runs when --configure-cloud-routes is true (the default) and the
// provider offers Routes, as upstream's cloud-controller-manager decides;
// --allocate-node-cidrs is not consulted there either. Every
// --route-reconciliation-period the whole cluster is reconciled; with the
// alpha gate CloudControllerManagerWatchBasedRoutesReconciliation node
// changes (added, deleted, new podCIDRs or addresses, resyncs) trigger it
// instead, at most once every 10 seconds. At most 200 route operations
// are in flight. A route the provider fails to create is a Warning Event
// FailedToCreateRoute on the node and is tried again at the next pass.
//
// Facts (conditions, reasons, messages, Event, names, limits) are
// upstream's (k8s.io/cloud-provider/controllers/route).
//
// Files: controller.go (construction, Run), reconcile.go (one pass),
// condition.go (the NetworkUnavailable condition).
//
// # Differences from upstream
//
//   - an empty --cluster-cidr leaves the controller off with a log line where
//     upstream's cloud-controller-manager fails to start;
//   - a pass's deletions finish before its creations (upstream overlaps
//     them; the same end state);
//   - the watch-based alpha mode limits passes with a 10 s interval limiter
//     of its own.
package noderoute
