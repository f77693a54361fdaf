package parity

// MetricsAllowlist names the metric families whose difference between
// upstream's /metrics and kcm's is expected, each with the reason. Every
// other difference fails the metrics check (MetricsReport).
var MetricsAllowlist = map[string]string{
	"pv_collector_total_pv_count":   pvCollectorStale,
	"pv_collector_unbound_pv_count": pvCollectorStale,
}

// pvCollectorStale: at the end of pv-hostpath-provisioner (its volume
// reclaimed and gone from the API), upstream still reports one unbound
// volume: its collector counts the binder's own volume cache, which kept
// the deleted volume. kcm counts what its informer holds, no volume, and a
// gauge vector without series exposes no family. Both expose the families
// while volumes exist (unit tests in pkg/controller/persistentvolume).
const pvCollectorStale = "upstream counts a deleted volume from a stale cache; kcm has no volume, hence no series"
