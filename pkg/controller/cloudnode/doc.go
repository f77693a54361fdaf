// Package cloudnode implements the cloud-node-controller (alias
// "cloud-node") of cloud-controller-manager. A node registered with the
// NoSchedule taint node.cloudprovider.kubernetes.io/uninitialized (what a
// kubelet started with --cloud-provider=external does) is initialized from
// the cloud provider: its provider ID (when it has none), the instance
// type, zone and region labels (GA and beta keys), the provider's
// additional labels outside the kubernetes.io and k8s.io namespaces, and
// its addresses; then the taint is removed and the Event Synced recorded.
// Every --node-status-update-frequency the addresses of initialized nodes
// are refreshed, and an initialized node whose beta topology labels
// disagree with (or lack) their GA counterparts has them reconciled.
//
// A node IP given to the kubelet (the alpha.kubernetes.io/provided-node-ip
// annotation) must be among the provider's addresses: it is listed first
// and is the only address of its type; a node IP the provider does not
// know keeps the node tainted.
//
// The provider is asked through InstancesV2 when it offers it, else
// through Instances (by provider ID, then by node name) and Zones. Facts
// (taint, labels, Event, backoff, which call comes first) are upstream's
// (k8s.io/cloud-provider/controllers/node).
//
// Files: controller.go (construction, Run, the periodic address pass),
// sync.go (initialization and label reconciliation), metadata.go (asking
// the provider), addresses.go (the address list and its status patch).
//
// # Differences from upstream
//
//   - an initialization that fails is retried with upstream's backoff, and
//     also reported once per failure streak by a Warning Event
//     FailedToInitializeNode on the node (upstream only logs, so an operator
//     sees nothing on the node);
//   - status-only updates of initialized nodes are not queued;
//   - --node-status-update-frequency is a cloud-controller-manager flag; in
//     kube-controller-manager the period comes from the Cloud section of the
//     component configuration, 5 minutes by default.
package cloudnode
