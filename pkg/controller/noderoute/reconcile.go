package noderoute

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"
	netutils "k8s.io/utils/net"
)

// maxConcurrentOperations bounds the route calls in flight (upstream's).
const maxConcurrentOperations = 200

// action is what a pass does about one of a node's pod CIDRs.
type action int

const (
	// add: no route exists for the CIDR yet.
	add action = iota
	// keep: a route exists (or was just created).
	keep
	// replace: the route records outdated node addresses; it is deleted
	// and created again.
	replace
)

// plan holds, per node, the action for each of its pod CIDRs. A node is
// in it if it has pod CIDRs or is the target of a route; a node with
// routes but no pod CIDR has an empty map.
type plan struct {
	mu      sync.Mutex
	byNode  map[types.NodeName]map[string]action
	routeOf map[types.NodeName][]*cloudprovider.Route
}

func (p *plan) get(node types.NodeName, cidr string) (action, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	a, ok := p.byNode[node][cidr]
	return a, ok
}

func (p *plan) set(node types.NodeName, cidr string, a action) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.byNode[node][cidr] = a
}

// reconcile is one pass over the cluster: routes listed from the
// provider, nodes from the cache.
func (c *Controller) reconcile(ctx context.Context) error {
	routes, err := c.routes.ListRoutes(ctx, c.clusterName)
	if err != nil {
		return fmt.Errorf("error listing routes: %w", err)
	}
	nodes, err := c.nodes.List(labels.Everything())
	if err != nil {
		return fmt.Errorf("error listing nodes: %w", err)
	}
	c.apply(ctx, nodes, routes)
	return nil
}

// apply deletes the routes nothing wants, creates the missing ones, then
// sets every concerned node's NetworkUnavailable condition.
func (c *Controller) apply(ctx context.Context, nodes []*v1.Node, routes []*cloudprovider.Route) {
	p := newPlan(ctx, nodes, routes)
	sem := make(chan struct{}, maxConcurrentOperations)
	var wg sync.WaitGroup
	run := func(f func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			f()
		}()
	}

	for _, r := range routes {
		if !c.responsibleFor(ctx, r) || !(r.Blackhole || p.unwanted(r)) {
			continue
		}
		run(func() { c.deleteRoute(ctx, r) })
	}
	// Deletions first: a replaced route is deleted before it is created.
	wg.Wait()

	for _, n := range nodes {
		for _, cidr := range n.Spec.PodCIDRs {
			if a, _ := p.get(types.NodeName(n.Name), cidr); a == keep {
				continue
			}
			run(func() {
				if c.createRoute(ctx, n, cidr) {
					p.set(types.NodeName(n.Name), cidr, keep)
				}
			})
		}
	}
	wg.Wait()

	for _, n := range nodes {
		actions, ok := p.byNode[types.NodeName(n.Name)]
		if !ok {
			continue
		}
		created := len(actions) > 0
		for _, a := range actions {
			if a != keep {
				created = false
			}
		}
		run(func() { c.setNetworkCondition(ctx, n, created) })
	}
	wg.Wait()
}

func newPlan(ctx context.Context, nodes []*v1.Node, routes []*cloudprovider.Route) *plan {
	logger := klog.FromContext(ctx)
	p := &plan{byNode: map[types.NodeName]map[string]action{}, routeOf: map[types.NodeName][]*cloudprovider.Route{}}
	for _, r := range routes {
		if r.TargetNode == "" {
			continue
		}
		p.routeOf[r.TargetNode] = append(p.routeOf[r.TargetNode], r)
		if p.byNode[r.TargetNode] == nil {
			p.byNode[r.TargetNode] = map[string]action{}
		}
	}
	for _, n := range nodes {
		if len(n.Spec.PodCIDRs) == 0 {
			continue // no CIDR assigned yet
		}
		name := types.NodeName(n.Name)
		if p.byNode[name] == nil {
			p.byNode[name] = map[string]action{}
		}
		for _, cidr := range n.Spec.PodCIDRs {
			a := actionFor(p.routeOf[name], cidr, n.Status.Addresses)
			p.byNode[name][cidr] = a
			logger.V(4).Info("Route action", "node", klog.KObj(n), "cidr", cidr, "action", a)
		}
	}
	return p
}

// unwanted reports whether a route targets no node with that pod CIDR,
// or needs replacing.
func (p *plan) unwanted(r *cloudprovider.Route) bool {
	a, ok := p.get(r.TargetNode, r.DestinationCIDR)
	return !ok || a == replace
}

func actionFor(routes []*cloudprovider.Route, cidr string, addrs []v1.NodeAddress) action {
	for _, r := range routes {
		if r.DestinationCIDR != cidr {
			continue
		}
		if !r.EnableNodeAddresses || sameAddresses(addrs, r.TargetNodeAddresses) {
			return keep
		}
		return replace
	}
	return add
}

// sameAddresses compares two address lists as sets of equal length.
func sameAddresses(a, b []v1.NodeAddress) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		found := false
		for _, y := range b {
			if reflect.DeepEqual(x, y) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func (a action) String() string {
	switch a {
	case add:
		return "add"
	case keep:
		return "keep"
	default:
		return "update"
	}
}

// responsibleFor reports whether the route's destination overlaps a
// cluster CIDR: its first or last address lies inside one.
func (c *Controller) responsibleFor(ctx context.Context, r *cloudprovider.Route) bool {
	_, cidr, err := netutils.ParseCIDRSloppy(r.DestinationCIDR)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Ignoring route with an unparsable CIDR", "route", r.Name)
		return false
	}
	last := make([]byte, len(cidr.IP))
	for i := range last {
		last[i] = cidr.IP[i] | ^cidr.Mask[i]
	}
	for _, cc := range c.clusterCIDR {
		if cc.Contains(cidr.IP) || cc.Contains(last) {
			return true
		}
	}
	return false
}

func (c *Controller) deleteRoute(ctx context.Context, r *cloudprovider.Route) {
	logger := klog.FromContext(ctx)
	start := time.Now()
	logger.Info("Deleting route", "route", r.Name, "cidr", r.DestinationCIDR)
	if err := c.routes.DeleteRoute(ctx, c.clusterName, r); err != nil {
		logger.Error(err, "Could not delete route", "route", r.Name, "cidr", r.DestinationCIDR, "after", time.Since(start))
		return
	}
	logger.Info("Deleted route", "route", r.Name, "cidr", r.DestinationCIDR, "after", time.Since(start))
}

// createRoute creates the route of one pod CIDR, named after the node's
// UID; a failure is a Warning Event on the node.
func (c *Controller) createRoute(ctx context.Context, n *v1.Node, cidr string) bool {
	logger := klog.FromContext(ctx)
	start := time.Now()
	hint := string(n.UID)
	r := &cloudprovider.Route{TargetNode: types.NodeName(n.Name), TargetNodeAddresses: n.Status.Addresses, DestinationCIDR: cidr}
	logger.Info("Creating route", "node", klog.KObj(n), "cidr", cidr, "nameHint", hint)
	if err := c.routes.CreateRoute(ctx, c.clusterName, hint, r); err != nil {
		msg := fmt.Sprintf("Could not create route %s %s for node %s after %v: %v", hint, cidr, n.Name, time.Since(start), err)
		ref := &v1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: n.Name, UID: n.UID}
		c.recorder.Event(ref, v1.EventTypeWarning, "FailedToCreateRoute", msg)
		logger.Error(err, "Could not create route", "node", klog.KObj(n), "cidr", cidr, "nameHint", hint)
		return false
	}
	logger.Info("Created route", "node", klog.KObj(n), "cidr", cidr, "nameHint", hint, "after", time.Since(start))
	return true
}
