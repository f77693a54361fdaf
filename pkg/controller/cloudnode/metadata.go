package cloudnode

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"
)

// instanceMetadata asks InstancesV2 for the node's metadata, or builds it
// from Instances and Zones. A node ends up with a provider ID or an error:
// other controllers (load balancers) need one, and it is set only here.
func (c *Controller) instanceMetadata(ctx context.Context, node *v1.Node) (*cloudprovider.InstanceMetadata, error) {
	if v2, ok := c.cloud.InstancesV2(); ok && v2 != nil {
		md, err := v2.InstanceMetadata(ctx, node)
		if err != nil {
			return nil, err
		}
		if md != nil && md.ProviderID == "" {
			if node.Spec.ProviderID == "" {
				return md, fmt.Errorf("cloud provider does not set node provider ID for node %s", node.Name)
			}
			md.ProviderID = node.Spec.ProviderID
		}
		return md, nil
	}
	inst, ok := c.cloud.Instances()
	if !ok {
		return nil, errors.New("failed to get instances from cloud provider")
	}
	id := node.Spec.ProviderID
	if id == "" {
		var err error
		id, err = cloudprovider.GetInstanceProviderID(ctx, c.cloud, types.NodeName(node.Name))
		switch {
		case errors.Is(err, cloudprovider.NotImplemented):
			// The provider has no provider IDs: go by the node's name.
			klog.FromContext(ctx).Info("Cloud provider does not set node provider ID, using node name to discover node", "node", klog.KObj(node))
		case err != nil:
			return nil, err
		}
	}
	addrs, err := addressesByIDOrName(ctx, inst, id, node.Name)
	if err != nil {
		return nil, err
	}
	instanceType, err := inst.InstanceTypeByProviderID(ctx, id)
	if err != nil {
		byID := err
		if instanceType, err = inst.InstanceType(ctx, types.NodeName(node.Name)); err != nil {
			return nil, fmt.Errorf("InstanceType: Error fetching by providerID: %v Error fetching by NodeName: %w", byID, err)
		}
	}
	md := &cloudprovider.InstanceMetadata{ProviderID: id, InstanceType: instanceType, NodeAddresses: addrs}
	zones, ok := c.cloud.Zones()
	if !ok {
		return md, nil
	}
	zone, err := zones.GetZoneByProviderID(ctx, id)
	if err != nil {
		byID := err
		if zone, err = zones.GetZoneByNodeName(ctx, types.NodeName(node.Name)); err != nil {
			return nil, fmt.Errorf("failed to get zone from cloud provider: Zone: Error fetching by providerID: %v Error fetching by NodeName: %w", byID, err)
		}
	}
	md.Zone, md.Region = zone.FailureDomain, zone.Region
	return md, nil
}

// instanceAddresses is what the periodic pass needs: InstancesV2's
// metadata, or only the addresses from Instances (one call, not three).
func (c *Controller) instanceAddresses(ctx context.Context, node *v1.Node) (*cloudprovider.InstanceMetadata, error) {
	if v2, ok := c.cloud.InstancesV2(); ok && v2 != nil {
		md, err := v2.InstanceMetadata(ctx, node)
		if err == nil && md == nil {
			md = &cloudprovider.InstanceMetadata{}
		}
		return md, err
	}
	inst, ok := c.cloud.Instances()
	if !ok {
		return nil, errors.New("failed to get instances from cloud provider")
	}
	addrs, err := addressesByIDOrName(ctx, inst, node.Spec.ProviderID, node.Name)
	if err != nil {
		return nil, err
	}
	return &cloudprovider.InstanceMetadata{NodeAddresses: addrs}, nil
}

func addressesByIDOrName(ctx context.Context, inst cloudprovider.Instances, id, name string) ([]v1.NodeAddress, error) {
	addrs, err := inst.NodeAddressesByProviderID(ctx, id)
	if err == nil {
		return addrs, nil
	}
	byID := err
	addrs, err = inst.NodeAddresses(ctx, types.NodeName(name))
	if err != nil {
		return nil, fmt.Errorf("error fetching node by provider ID: %v, and error by node name: %w", byID, err)
	}
	return addrs, nil
}
