package cloudprovider

import (
	"context"
	"errors"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	cloudprovider "k8s.io/cloud-provider"
)

type routes struct{ c *Cloud }

var _ cloudprovider.Routes = routes{}

// Routes are stored as routeName -> "<node> <CIDR>": the name is the same
// in every run (upstream's name hint is the node's UID).
func (r routes) ListRoutes(ctx context.Context, _ string) ([]*cloudprovider.Route, error) {
	state, err := r.c.routes.read(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*cloudprovider.Route, 0, len(state))
	for name, v := range state {
		node, cidr, _ := strings.Cut(v, " ")
		out = append(out, &cloudprovider.Route{Name: name, TargetNode: types.NodeName(node), DestinationCIDR: cidr})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (r routes) CreateRoute(ctx context.Context, cluster, _ string, route *cloudprovider.Route) error {
	if msg, err := r.c.routes.nodeAnnotation(ctx, string(route.TargetNode), AnnotationRouteError); err != nil {
		return err
	} else if msg != "" {
		return errors.New(msg)
	}
	name := routeName(cluster, route)
	v := string(route.TargetNode) + " " + route.DestinationCIDR
	return r.c.routes.update(ctx, func(m map[string]string) { m[name] = v })
}

func (r routes) DeleteRoute(ctx context.Context, _ string, route *cloudprovider.Route) error {
	return r.c.routes.update(ctx, func(m map[string]string) { delete(m, route.Name) })
}

// routeName is a ConfigMap key without dots (a JSONPath in a scenario's
// wait reads it unescaped): <node>_<CIDR with . and : as - and / as _>.
func routeName(_ string, route *cloudprovider.Route) string {
	return string(route.TargetNode) + "_" + strings.NewReplacer(".", "-", ":", "-", "/", "_").Replace(route.DestinationCIDR)
}
