package parity

// MetricsAllowlist names the metric families whose difference between
// upstream's /metrics and kcm's is expected, each with the reason. Every
// other difference fails the metrics check (MetricsReport).
var MetricsAllowlist = map[string]string{
	"pv_collector_total_pv_count":   pvCollectorStale,
	"pv_collector_unbound_pv_count": pvCollectorStale,

	"daemonset_controller_stale_sync_skips_total": staleSyncTiming,

	"node_ipam_controller_cidrset_cidrs_releases_total": cidrReleaseRace,
}

// pvCollectorStale: at the end of pv-hostpath-provisioner (its volume
// reclaimed and gone from the API), upstream still reports one unbound
// volume: its collector counts the binder's own volume cache, which kept
// the deleted volume. kcm counts what its informer holds, no volume, and a
// gauge vector without series exposes no family. Both expose the families
// while volumes exist (unit tests in pkg/controller/persistentvolume).
const pvCollectorStale = "upstream counts a deleted volume from a stale cache; kcm has no volume, hence no series"

// staleSyncTiming: the counter, like upstream's, counts syncs skipped
// because the informer has not yet seen the controller's own last write
// (the StaleControllerConsistency gates, on in both); a vector with no
// series exposes no family, so it appears only on the side where a sync
// happened to run inside that window (kcm twice in
// daemonset-node-added-removed on 2026-12-06, upstream not then).
const staleSyncTiming = "counts a timing window (a sync before the informer saw the controller's own write); appears on either side by chance"

// cidrReleaseRace: upstream's range allocator, syncing a Node a second time
// before its informer shows the podCIDRs it just patched, allocates another
// block, then finds the Node's CIDRs set and releases the new block
// (range_allocator.go, "Node already has a CIDR allocated. Releasing the new
// one"); that release is the only one an idle cluster sees, so the family
// appears on upstream's side by chance (CI, 2026-12-06, metrics-idle). kcm
// remembers the block it allocated to a Node until the Node shows it, so a
// second sync allocates nothing and there is nothing to release; kcm's
// counter exposes releases of deleted Nodes as upstream's does (unit tests
// in pkg/controller/nodeipam).
const cidrReleaseRace = "upstream allocates and releases a second block when it syncs a Node before seeing its own patch; kcm does not, so only upstream may count a release on an idle cluster"
