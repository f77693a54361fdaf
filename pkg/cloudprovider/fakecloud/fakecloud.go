package fakecloud

import (
	"context"
	"sync"

	v1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"
)

// Instance is what the fake cloud knows about one node, by node name.
type Instance struct {
	Metadata cloudprovider.InstanceMetadata
	Shutdown bool
}

// Cloud implements cloudprovider.Interface: InstancesV2 (or, after
// UseInstancesV1, Instances and Zones instead) and Routes.
type Cloud struct {
	mu        sync.Mutex
	instances map[string]Instance
	calls     map[string]int
	// Err, when set, is returned by every instance and zone call.
	err error
	// v1 makes the cloud offer Instances and Zones instead of InstancesV2.
	v1 bool
	routes
}

var (
	_ cloudprovider.Interface   = (*Cloud)(nil)
	_ cloudprovider.InstancesV2 = (*Cloud)(nil)
)

// New returns a fake cloud without instances.
func New() *Cloud {
	return &Cloud{instances: map[string]Instance{}, calls: map[string]int{}, routes: newRoutes()}
}

// SetInstance adds or replaces the instance of the named node.
func (c *Cloud) SetInstance(node string, inst Instance) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.instances[node] = inst
}

// DeleteInstance makes the named node's instance disappear.
func (c *Cloud) DeleteInstance(node string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.instances, node)
}

// SetError makes every instance and zone call fail with err (nil to stop).
func (c *Cloud) SetError(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.err = err
}

// Calls returns how often the named method was called.
func (c *Cloud) Calls(method string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[method]
}

func (c *Cloud) lookup(method string, node *v1.Node) (Instance, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[method]++
	if c.err != nil {
		return Instance{}, false, c.err
	}
	inst, ok := c.instances[node.Name]
	return inst, ok, nil
}

func (c *Cloud) InstanceExists(_ context.Context, node *v1.Node) (bool, error) {
	_, ok, err := c.lookup("InstanceExists", node)
	return ok, err
}

func (c *Cloud) InstanceShutdown(_ context.Context, node *v1.Node) (bool, error) {
	inst, _, err := c.lookup("InstanceShutdown", node)
	return inst.Shutdown, err
}

func (c *Cloud) InstanceMetadata(_ context.Context, node *v1.Node) (*cloudprovider.InstanceMetadata, error) {
	inst, ok, err := c.lookup("InstanceMetadata", node)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, cloudprovider.InstanceNotFound
	}
	md := inst.Metadata
	md.NodeAddresses = append([]v1.NodeAddress(nil), md.NodeAddresses...)
	return &md, nil
}

func (c *Cloud) Initialize(cloudprovider.ControllerClientBuilder, <-chan struct{}) {}
func (c *Cloud) LoadBalancer() (cloudprovider.LoadBalancer, bool)                  { return nil, false }
func (c *Cloud) Clusters() (cloudprovider.Clusters, bool)                          { return nil, false }
func (c *Cloud) Routes() (cloudprovider.Routes, bool)                              { return c, true }
func (c *Cloud) ProviderName() string                                              { return "fake" }
func (c *Cloud) HasClusterID() bool                                                { return true }
