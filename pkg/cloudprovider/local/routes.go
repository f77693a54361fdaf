package local

import (
	"context"
	"sort"
	"sync"

	cloudprovider "k8s.io/cloud-provider"
)

// routes stores routes in memory and programs nothing: pods of a local
// cluster reach each other without cloud routes. Remembering them lets
// the node-route-controller see its work done and stop asking.
type routes struct {
	mu sync.Mutex
	// byName holds the routes by name and destination: a dual-stack
	// node's two routes share their name.
	byName map[string]cloudprovider.Route
}

func routeKey(r *cloudprovider.Route) string { return r.Name + " " + r.DestinationCIDR }

var _ cloudprovider.Routes = (*routes)(nil)

func (r *routes) ListRoutes(context.Context, string) ([]*cloudprovider.Route, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*cloudprovider.Route, 0, len(r.byName))
	for _, rt := range r.byName {
		rt := rt
		out = append(out, &rt)
	}
	sort.Slice(out, func(i, j int) bool { return routeKey(out[i]) < routeKey(out[j]) })
	return out, nil
}

func (r *routes) CreateRoute(_ context.Context, clusterName, nameHint string, route *cloudprovider.Route) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	rt := *route
	rt.Name = clusterName + "-" + nameHint
	r.byName[routeKey(&rt)] = rt
	return nil
}

func (r *routes) DeleteRoute(_ context.Context, _ string, route *cloudprovider.Route) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.byName, routeKey(route))
	return nil
}
