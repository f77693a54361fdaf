// Package cloudnodelifecycle implements the cloud-node-lifecycle-controller
// of cloud-controller-manager: every --node-monitor-period it asks the
// cloud provider about each node that is not Ready. A node whose instance
// no longer exists is deleted (Event DeletingNode, or DeletingNodeFailed);
// one whose instance is shut down gets the NoSchedule taint
// node.cloudprovider.kubernetes.io/shutdown, which it loses once Ready
// again. Facts (Events, taint, which interface is asked first) are
// upstream's (k8s.io/cloud-provider/controllers/nodelifecycle).
//
// # Differences from upstream
//
// The pass starts once the node cache has synced (upstream's first pass may
// see an empty cache), and the shutdown taint is written with a JSON patch
// that tests the old taints (internal/controller/nodeutil) instead of an
// update.
package cloudnodelifecycle
