package local

import (
	"context"

	v1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"
)

// instances describes each node from its own Node object: a local machine
// is its own instance, exists as long as its Node does and is never shut
// down behind the cluster's back.
type instances struct{}

var _ cloudprovider.InstancesV2 = instances{}

func (instances) InstanceExists(context.Context, *v1.Node) (bool, error) { return true, nil }

func (instances) InstanceShutdown(context.Context, *v1.Node) (bool, error) { return false, nil }

// InstanceMetadata takes the instance type, zone and region from the
// node's well-known labels and keeps its addresses; the provider ID is the
// node's own, or local://<node name>.
func (instances) InstanceMetadata(_ context.Context, node *v1.Node) (*cloudprovider.InstanceMetadata, error) {
	id := node.Spec.ProviderID
	if id == "" {
		id = ProviderName + "://" + node.Name
	}
	l := node.Labels
	return &cloudprovider.InstanceMetadata{
		ProviderID:    id,
		InstanceType:  first(l[v1.LabelInstanceTypeStable], l[v1.LabelInstanceType]),
		Zone:          first(l[v1.LabelTopologyZone], l[v1.LabelFailureDomainBetaZone]),
		Region:        first(l[v1.LabelTopologyRegion], l[v1.LabelFailureDomainBetaRegion]),
		NodeAddresses: append([]v1.NodeAddress(nil), node.Status.Addresses...),
	}, nil
}

func first(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
