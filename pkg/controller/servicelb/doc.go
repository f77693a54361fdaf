// Package servicelb implements the service-lb-controller (alias "service"),
// which upstream runs in cloud-controller-manager: every Service of type
// LoadBalancer without spec.loadBalancerClass gets a load balancer from
// the cloud provider's LoadBalancer interface, the finalizer
// service.kubernetes.io/load-balancer-cleanup while it has one, and the
// provider's addresses in status.loadBalancer. A Service that stops
// wanting one (another type, a deletion) has it deleted and loses the
// finalizer. Node changes that alter the set of nodes a load balancer
// targets (node added or deleted, the exclude-from-external-load-balancers
// label, the cluster autoscaler's ToBeDeletedByClusterAutoscaler taint, a
// new providerID) update every load balancer's hosts.
//
// Behaviour, Events (EnsuringLoadBalancer, EnsuredLoadBalancer,
// SyncLoadBalancerFailed, DeletingLoadBalancer, DeletedLoadBalancer,
// DeleteLoadBalancerFailed, UpdatedLoadBalancer, UpdateLoadBalancerFailed,
// UnAvailableLoadBalancer), retry delays (5s doubling to 300s) and the
// status patch are upstream's (k8s.io/cloud-provider/controllers/service).
//
// Files: controller.go (construction, Run), handlers.go (which Service
// and Node changes matter), sync.go (one Service), nodes.go (the node set
// and host updates), patch.go (finalizer and status patches).
//
// # Differences from upstream
//
// Node events collapse into one queued key, so a burst of node changes costs
// one pass over the load balancers, not one per node. A Service a provider
// asks to retry later (its RetryError) is synced again after that delay, and
// its backoff starts afresh.
package servicelb
