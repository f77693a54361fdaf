// Package local is a cloud provider for clusters without a cloud: a
// laptop, kind, CI, `make run`. It registers itself as "local" through
// k8s.io/cloud-provider's RegisterCloudProvider when imported (a blank
// import is enough), like any out-of-tree provider.
//
// Load balancers are addresses from the pools of the --cloud-config file
// (loadBalancerCIDRs: an IPv4 and/or an IPv6 CIDR; an IPv4 pool of /30 or
// wider leaves out its network and broadcast addresses), the lowest free
// one first, spec.loadBalancerIP honoured when free, with ipMode VIP. A
// Service keeps the address its status shows, so addresses survive a
// restart of the controller manager: the provider keeps no state of its
// own beyond addresses handed out but not yet written to a status. No
// address is handed out twice: before each allocation the provider reads
// every Service's status from the shared informer (SetInformers) and
// treats the addresses they show, and those it reserved, as taken; when
// two statuses claim one address the older Service keeps it. An exhausted
// pool is an error, which the service-lb-controller reports as a
// SyncLoadBalancerFailed Event and retries with upstream's backoff.
// Nothing forwards traffic to the address; it is a name for the Service
// that tools and tests can rely on.
//
// Instances, zones and instance types come from the Node objects
// themselves (their labels and addresses). Routes are kept in memory and
// program nothing (a local cluster's network needs none), so that the
// node-route-controller sees its work done.
//
// Files: provider.go (Interface, configuration, registration), pool.go
// (address pools), loadbalancer.go (the LoadBalancer interface),
// instances.go (InstancesV2 from Node objects), routes.go (routes in
// memory).
package local
