// Package ttl implements the ttl-controller: it sets the annotation
// node.alpha.kubernetes.io/ttl on every Node to the number of seconds
// kubelets may cache Secrets and ConfigMaps, chosen by cluster size from
// upstream's table (0s up to 100 nodes, 15s up to 500, 30s up to 1000, 60s
// up to 2000, 300s beyond). The table's ranges overlap, which gives
// hysteresis: the step goes up when the node count exceeds the current
// range's maximum and down only when it falls below its minimum.
//
// # Differences from upstream
//
// When the cluster's size moves the desired TTL to another step, upstream
// re-reads a node only on that node's next update; with Lease heartbeats that
// update can be minutes away, and kwok nodes may never send one. kcm does the
// same, and also queues every node, spread evenly over five minutes (the
// kubelet's status report period), so the annotation converges on every node
// and a cluster crossing a step is not patched all at once. A node annotated
// by its own update before its turn costs nothing at its turn.
package ttl
