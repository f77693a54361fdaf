package servicelb

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/util/workqueue"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"
)

// ToBeDeletedTaint is the cluster autoscaler's taint on a node it is
// about to remove; such nodes leave the load balancers' node set.
const ToBeDeletedTaint = "ToBeDeletedByClusterAutoscaler"

// maxNodeNamesToLog bounds the node names an Event lists.
const maxNodeNamesToLog = 20

// included: the node does not opt out with
// node.kubernetes.io/exclude-from-external-load-balancers (a value that
// does not parse as a bool opts out too, as upstream).
func included(n *v1.Node) bool {
	v, ok := n.Labels[v1.LabelNodeExcludeBalancers]
	if !ok {
		return true
	}
	b, err := strconv.ParseBool(v)
	return err == nil && !b
}

// inNodeSet is upstream's stable node set: not being deleted, included,
// not tainted for removal by the autoscaler. Readiness does not count.
func inNodeSet(n *v1.Node) bool {
	if n.DeletionTimestamp != nil || !included(n) {
		return false
	}
	for _, t := range n.Spec.Taints {
		if t.Key == ToBeDeletedTaint {
			return false
		}
	}
	return true
}

func filterNodes(nodes []*v1.Node) []*v1.Node {
	var out []*v1.Node
	for _, n := range nodes {
		if inNodeSet(n) {
			out = append(out, n)
		}
	}
	return out
}

func (c *Controller) nodeSet() ([]*v1.Node, error) {
	nodes, err := c.nodes.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	return filterNodes(nodes), nil
}

// sameNodes: the same node names with the same provider IDs.
func sameNodes(a, b []*v1.Node) bool {
	if len(a) != len(b) {
		return false
	}
	ids := make(map[string]string, len(a))
	for _, n := range a {
		ids[n.Name] = n.Spec.ProviderID
	}
	for _, n := range b {
		if id, ok := ids[n.Name]; !ok || id != n.Spec.ProviderID {
			return false
		}
	}
	return true
}

func (c *Controller) setLastNodes(key string, nodes []*v1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lastNodes[key] = nodes
}

// syncNodes is the node pass: every known load balancer whose node set
// changed gets its hosts updated; those that fail are synced again
// through the Service queue, as upstream does.
func (c *Controller) syncNodes(ctx context.Context, _ string) error {
	c.mu.Lock()
	services := make([]*v1.Service, 0, len(c.known))
	for _, svc := range c.known {
		services = append(services, svc)
	}
	c.mu.Unlock()

	var failedMu sync.Mutex
	var failed []string
	workqueue.ParallelizeUntil(ctx, c.workers, len(services), func(i int) {
		if key, retry := c.updateHosts(ctx, services[i]); retry {
			failedMu.Lock()
			failed = append(failed, key)
			failedMu.Unlock()
		}
	})
	klog.FromContext(ctx).V(2).Info("Updated load balancers to the current set of nodes", "services", len(services), "failed", len(failed))
	for _, key := range failed {
		c.queue.Add(key)
	}
	return nil
}

// updateHosts updates one load balancer's hosts if its node set changed,
// and reports whether the Service must be synced again.
func (c *Controller) updateHosts(ctx context.Context, svc *v1.Service) (string, bool) {
	key := svc.Namespace + "/" + svc.Name
	// A Service whose load balancer is being deleted (the Service worker
	// caches it before deleting) is not updated: upstream races the two
	// workers here, and an update landing after the deletion would leave
	// the provider a load balancer nobody deletes.
	if !wantsLoadBalancer(svc) || needsCleanup(svc) {
		return key, false
	}
	nodes, err := c.nodeSet()
	if err != nil {
		utilruntime.HandleErrorWithContext(ctx, err, "Failed to list nodes")
		return key, true
	}
	c.mu.Lock()
	old := filterNodes(c.lastNodes[key])
	c.lastNodes[key] = nodes
	c.mu.Unlock()
	if sameNodes(old, nodes) {
		return key, false
	}
	names := nodeNames(nodes)
	klog.FromContext(ctx).V(2).Info("Updating backends for load balancer", "service", klog.KObj(svc), "nodes", len(nodes), "names", names)
	err = c.balancer.UpdateLoadBalancer(ctx, c.clusterName, svc, nodes)
	switch {
	case err == nil && len(nodes) == 0:
		c.recorder.Event(svc, v1.EventTypeWarning, "UnAvailableLoadBalancer", "There are no available nodes for LoadBalancer")
		return key, false
	case err == nil:
		c.recorder.Event(svc, v1.EventTypeNormal, "UpdatedLoadBalancer", "Updated load balancer with new hosts")
		return key, false
	case err == cloudprovider.ImplementedElsewhere:
		return key, false
	}
	if _, exists, getErr := c.balancer.GetLoadBalancer(ctx, c.clusterName, svc); getErr != nil {
		utilruntime.HandleErrorWithContext(ctx, getErr, "Failed to check if load balancer exists", "service", klog.KObj(svc))
	} else if !exists {
		return key, false
	}
	c.recorder.Eventf(svc, v1.EventTypeWarning, "UpdateLoadBalancerFailed",
		"Error updating load balancer with new hosts %v [node names limited, total number of nodes: %d], error: %v", names, len(nodes), err)
	utilruntime.HandleErrorWithContext(ctx, err, "Failed to update load balancer hosts", "service", klog.KObj(svc))
	return key, true
}

// nodeNames returns the sorted names of the first maxNodeNamesToLog nodes
// and, if there are more, "<N more>", as upstream's Events show them.
func nodeNames(nodes []*v1.Node) []string {
	shown := nodes
	if len(shown) > maxNodeNamesToLog {
		shown = shown[:maxNodeNamesToLog]
	}
	names := make([]string, 0, len(shown)+1)
	for _, n := range shown {
		names = append(names, n.Name)
	}
	sort.Strings(names)
	if len(nodes) > maxNodeNamesToLog {
		names = append(names, fmt.Sprintf("<%d more>", len(nodes)-maxNodeNamesToLog))
	}
	return names
}
