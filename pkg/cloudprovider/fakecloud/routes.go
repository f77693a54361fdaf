package fakecloud

import (
	"context"
	"sort"
	"sync"

	cloudprovider "k8s.io/cloud-provider"
)

var _ cloudprovider.Routes = (*Cloud)(nil)

// routes is the fake's route table, kept apart from the instances' lock.
type routes struct {
	routeMu sync.Mutex
	// table holds the routes by name and destination (a dual-stack node's
	// two routes share a name hint).
	table       map[routeKey]cloudprovider.Route
	routeCalls  map[string]int
	listErr     error
	createErr   map[string]error
	deleteErr   error
	addrsRoutes bool
}

type routeKey struct{ name, cidr string }

func newRoutes() routes {
	return routes{table: map[routeKey]cloudprovider.Route{}, routeCalls: map[string]int{}, createErr: map[string]error{}}
}

// RouteName is the name the fake gives a route created with nameHint.
func RouteName(clusterName, nameHint string) string { return clusterName + "-" + nameHint }

// AddRoute puts a route in the table as if someone had created it.
func (c *Cloud) AddRoute(r cloudprovider.Route) {
	c.routeMu.Lock()
	defer c.routeMu.Unlock()
	c.table[routeKey{r.Name, r.DestinationCIDR}] = r
}

// RouteList returns the routes in the table, by name then destination.
func (c *Cloud) RouteList() []cloudprovider.Route {
	c.routeMu.Lock()
	defer c.routeMu.Unlock()
	out := make([]cloudprovider.Route, 0, len(c.table))
	for _, r := range c.table {
		r.TargetNodeAddresses = append(r.TargetNodeAddresses[:0:0], r.TargetNodeAddresses...)
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].DestinationCIDR < out[j].DestinationCIDR
	})
	return out
}

// SetListRoutesError makes ListRoutes fail with err (nil to stop).
func (c *Cloud) SetListRoutesError(err error) {
	c.routeMu.Lock()
	defer c.routeMu.Unlock()
	c.listErr = err
}

// SetCreateRouteError makes CreateRoute fail with err for routes to the
// named node (nil to stop).
func (c *Cloud) SetCreateRouteError(node string, err error) {
	c.routeMu.Lock()
	defer c.routeMu.Unlock()
	if err == nil {
		delete(c.createErr, node)
		return
	}
	c.createErr[node] = err
}

// SetDeleteRouteError makes DeleteRoute fail with err (nil to stop).
func (c *Cloud) SetDeleteRouteError(err error) {
	c.routeMu.Lock()
	defer c.routeMu.Unlock()
	c.deleteErr = err
}

// SetRoutesWithNodeAddresses makes the routes the fake creates record
// their target's addresses (Route.EnableNodeAddresses), so that a change
// of a node's addresses replaces its routes.
func (c *Cloud) SetRoutesWithNodeAddresses(on bool) {
	c.routeMu.Lock()
	defer c.routeMu.Unlock()
	c.addrsRoutes = on
}

// RouteCalls returns how often the named Routes method was called.
func (c *Cloud) RouteCalls(method string) int {
	c.routeMu.Lock()
	defer c.routeMu.Unlock()
	return c.routeCalls[method]
}

func (c *Cloud) ListRoutes(context.Context, string) ([]*cloudprovider.Route, error) {
	c.routeMu.Lock()
	c.routeCalls["ListRoutes"]++
	err := c.listErr
	c.routeMu.Unlock()
	if err != nil {
		return nil, err
	}
	list := c.RouteList()
	out := make([]*cloudprovider.Route, len(list))
	for i := range list {
		out[i] = &list[i]
	}
	return out, nil
}

func (c *Cloud) CreateRoute(_ context.Context, clusterName, nameHint string, r *cloudprovider.Route) error {
	c.routeMu.Lock()
	defer c.routeMu.Unlock()
	c.routeCalls["CreateRoute"]++
	if err := c.createErr[string(r.TargetNode)]; err != nil {
		return err
	}
	stored := *r
	stored.Name = RouteName(clusterName, nameHint)
	stored.EnableNodeAddresses = c.addrsRoutes
	if !c.addrsRoutes {
		stored.TargetNodeAddresses = nil
	}
	c.table[routeKey{stored.Name, stored.DestinationCIDR}] = stored
	return nil
}

func (c *Cloud) DeleteRoute(_ context.Context, _ string, r *cloudprovider.Route) error {
	c.routeMu.Lock()
	defer c.routeMu.Unlock()
	c.routeCalls["DeleteRoute"]++
	if c.deleteErr != nil {
		return c.deleteErr
	}
	delete(c.table, routeKey{r.Name, r.DestinationCIDR})
	return nil
}
