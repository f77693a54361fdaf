// Package ttl implements the ttl-controller: it sets the annotation
// node.alpha.kubernetes.io/ttl on every Node to the number of seconds
// kubelets may cache Secrets and ConfigMaps, chosen by cluster size from
// upstream's table (0s up to 100 nodes, 15s up to 500, 30s up to 1000, 60s
// up to 2000, 300s beyond). The table's ranges overlap, which gives
// hysteresis: the step goes up when the node count exceeds the current
// range's maximum and down only when it falls below its minimum.
package ttl
