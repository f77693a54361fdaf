package servicelb

import (
	"reflect"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// Finalizer holds a Service until its load balancer is deleted.
const Finalizer = "service.kubernetes.io/load-balancer-cleanup"

func (c *Controller) enqueue(obj any) {
	if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		c.queue.Add(key)
	}
}

func (c *Controller) onServiceAdd(obj any) {
	if svc, ok := obj.(*v1.Service); ok && (wantsLoadBalancer(svc) || needsCleanup(svc)) {
		c.enqueue(svc)
	}
}

func (c *Controller) onServiceUpdate(oldObj, newObj any) {
	old, ok1 := oldObj.(*v1.Service)
	cur, ok2 := newObj.(*v1.Service)
	if ok1 && ok2 && (needsUpdate(old, cur) || needsCleanup(cur)) {
		c.enqueue(cur)
	}
}

// onNodeUpdate queues the node pass when the node's membership in the
// load balancers' node set may have changed: upstream looks at the
// exclusion label and the providerID only (readiness does not count).
func (c *Controller) onNodeUpdate(oldObj, newObj any) {
	old, ok1 := oldObj.(*v1.Node)
	cur, ok2 := newObj.(*v1.Node)
	if !ok1 || !ok2 {
		return
	}
	if included(old) != included(cur) || old.Spec.ProviderID != cur.Spec.ProviderID {
		c.nodesQueue.Add(nodesKey)
	}
}

// wantsLoadBalancer: type LoadBalancer and no loadBalancerClass (a class
// names another implementation, which this controller leaves alone).
func wantsLoadBalancer(svc *v1.Service) bool {
	return svc.Spec.Type == v1.ServiceTypeLoadBalancer && svc.Spec.LoadBalancerClass == nil
}

func hasFinalizer(svc *v1.Service) bool {
	return slices.Contains(svc.Finalizers, Finalizer)
}

// needsCleanup: the Service holds the finalizer and is being deleted or is
// no longer of type LoadBalancer.
func needsCleanup(svc *v1.Service) bool {
	return hasFinalizer(svc) && (svc.DeletionTimestamp != nil || svc.Spec.Type != v1.ServiceTypeLoadBalancer)
}

// needsUpdate lists upstream's reasons to resync a Service on update.
func needsUpdate(old, cur *v1.Service) bool {
	if !wantsLoadBalancer(old) && !wantsLoadBalancer(cur) {
		return false
	}
	if wantsLoadBalancer(old) != wantsLoadBalancer(cur) {
		return true
	}
	if wantsLoadBalancer(cur) && !reflect.DeepEqual(old.Spec.LoadBalancerSourceRanges, cur.Spec.LoadBalancerSourceRanges) {
		return true
	}
	if !portsEqual(old.Spec.Ports, cur.Spec.Ports) || old.Spec.SessionAffinity != cur.Spec.SessionAffinity {
		return true
	}
	switch {
	case !reflect.DeepEqual(old.Spec.SessionAffinityConfig, cur.Spec.SessionAffinityConfig),
		old.Spec.LoadBalancerIP != cur.Spec.LoadBalancerIP,
		!slices.Equal(old.Spec.ExternalIPs, cur.Spec.ExternalIPs),
		!reflect.DeepEqual(old.Annotations, cur.Annotations),
		old.UID != cur.UID,
		old.Spec.ExternalTrafficPolicy != cur.Spec.ExternalTrafficPolicy,
		old.Spec.HealthCheckNodePort != cur.Spec.HealthCheckNodePort,
		len(old.Spec.IPFamilies) != len(cur.Spec.IPFamilies):
		return true
	}
	return false
}

// portsEqual compares what a load balancer is built from: every field
// but nothing else, in order.
func portsEqual(a, b []v1.ServicePort) bool {
	return slices.EqualFunc(a, b, func(x, y v1.ServicePort) bool {
		return x.Name == y.Name && x.Protocol == y.Protocol && x.Port == y.Port &&
			x.NodePort == y.NodePort && x.TargetPort == y.TargetPort &&
			reflect.DeepEqual(x.AppProtocol, y.AppProtocol)
	})
}
