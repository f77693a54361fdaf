// Package local is a cloud provider for clusters without a cloud: a
// laptop, kind, CI, `make run`. It registers itself as "local" through
// k8s.io/cloud-provider's RegisterCloudProvider when imported (a blank
// import is enough), like any out-of-tree provider.
//
// Load balancers are addresses from pools named in the --cloud-config file
// (an IPv4 and/or an IPv6 CIDR). A Service keeps the address its status
// shows, so addresses survive a restart of the controller manager: the
// provider keeps no state of its own beyond addresses handed out but not
// yet written to a status. No address is handed out twice: before each
// allocation the provider reads every Service's status from the shared
// informer (SetInformers) and treats the addresses they show, and those it
// reserved, as taken. Nothing forwards traffic to the address; it is a
// name for the Service that tools and tests can rely on.
//
// Instances, zones and instance types come from the Node objects
// themselves (their labels and addresses), and routes are a no-op: a
// local cluster's network needs none.
//
// Files: provider.go (Interface, configuration, registration), pool.go
// (address pools), loadbalancer.go (the LoadBalancer interface),
// instances.go (InstancesV2 from Node objects), routes.go (no-op routes).
package local
