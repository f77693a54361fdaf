package fakecloud

import (
	"context"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	cloudprovider "k8s.io/cloud-provider"
)

var (
	_ cloudprovider.Instances = (*Cloud)(nil)
	_ cloudprovider.Zones     = (*Cloud)(nil)
)

// providerPrefix starts the provider IDs the Instances interface knows.
const providerPrefix = "fake://"

// UseInstancesV1 makes the cloud offer the older Instances and Zones
// interfaces instead of InstancesV2 (on), or InstancesV2 again (off). The
// same instances answer both: by node name, or by Metadata.ProviderID.
func (c *Cloud) UseInstancesV1(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.v1 = on
}

func (c *Cloud) Instances() (cloudprovider.Instances, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.v1 {
		return c, true
	}
	return nil, false
}

func (c *Cloud) InstancesV2() (cloudprovider.InstancesV2, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.v1 {
		return nil, false
	}
	return c, true
}

func (c *Cloud) Zones() (cloudprovider.Zones, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.v1 {
		return c, true
	}
	return nil, false
}

// byName and byProviderID look an instance up for the Instances and
// Zones interfaces; a missing one is cloudprovider.InstanceNotFound.
func (c *Cloud) byName(method string, name types.NodeName) (Instance, error) {
	inst, ok, err := c.lookup(method, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: string(name)}})
	if err == nil && !ok {
		err = cloudprovider.InstanceNotFound
	}
	return inst, err
}

func (c *Cloud) byProviderID(method, id string) (Instance, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[method]++
	if c.err != nil {
		return Instance{}, c.err
	}
	if id != "" {
		for _, inst := range c.instances {
			if inst.Metadata.ProviderID == id {
				return inst, nil
			}
		}
	}
	return Instance{}, cloudprovider.InstanceNotFound
}

func addresses(inst Instance) []v1.NodeAddress {
	return append([]v1.NodeAddress(nil), inst.Metadata.NodeAddresses...)
}

func (c *Cloud) NodeAddresses(_ context.Context, name types.NodeName) ([]v1.NodeAddress, error) {
	inst, err := c.byName("NodeAddresses", name)
	return addresses(inst), err
}

func (c *Cloud) NodeAddressesByProviderID(_ context.Context, id string) ([]v1.NodeAddress, error) {
	inst, err := c.byProviderID("NodeAddressesByProviderID", id)
	return addresses(inst), err
}

// InstanceID is the instance's provider ID without "fake://";
// NotImplemented when it has none.
func (c *Cloud) InstanceID(_ context.Context, name types.NodeName) (string, error) {
	inst, err := c.byName("InstanceID", name)
	if err != nil {
		return "", err
	}
	if inst.Metadata.ProviderID == "" {
		return "", cloudprovider.NotImplemented
	}
	return strings.TrimPrefix(inst.Metadata.ProviderID, providerPrefix), nil
}

func (c *Cloud) InstanceType(_ context.Context, name types.NodeName) (string, error) {
	inst, err := c.byName("InstanceType", name)
	return inst.Metadata.InstanceType, err
}

func (c *Cloud) InstanceTypeByProviderID(_ context.Context, id string) (string, error) {
	inst, err := c.byProviderID("InstanceTypeByProviderID", id)
	return inst.Metadata.InstanceType, err
}

func (c *Cloud) AddSSHKeyToAllInstances(context.Context, string, []byte) error {
	return cloudprovider.NotImplemented
}

func (c *Cloud) CurrentNodeName(_ context.Context, hostname string) (types.NodeName, error) {
	return types.NodeName(hostname), nil
}

func (c *Cloud) InstanceExistsByProviderID(_ context.Context, id string) (bool, error) {
	_, err := c.byProviderID("InstanceExistsByProviderID", id)
	if err == cloudprovider.InstanceNotFound {
		return false, nil
	}
	return err == nil, err
}

func (c *Cloud) InstanceShutdownByProviderID(_ context.Context, id string) (bool, error) {
	inst, err := c.byProviderID("InstanceShutdownByProviderID", id)
	return inst.Shutdown, err
}

func (c *Cloud) GetZone(context.Context) (cloudprovider.Zone, error) {
	return cloudprovider.Zone{}, cloudprovider.NotImplemented
}

func zone(inst Instance) cloudprovider.Zone {
	return cloudprovider.Zone{FailureDomain: inst.Metadata.Zone, Region: inst.Metadata.Region}
}

func (c *Cloud) GetZoneByProviderID(_ context.Context, id string) (cloudprovider.Zone, error) {
	inst, err := c.byProviderID("GetZoneByProviderID", id)
	return zone(inst), err
}

func (c *Cloud) GetZoneByNodeName(_ context.Context, name types.NodeName) (cloudprovider.Zone, error) {
	inst, err := c.byName("GetZoneByNodeName", name)
	return zone(inst), err
}
