package local

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/informers"
	cloudprovider "k8s.io/cloud-provider"
)

// ProviderName is the value of --cloud-provider that selects this provider.
const ProviderName = "local"

func init() {
	cloudprovider.RegisterCloudProvider(ProviderName, func(config io.Reader) (cloudprovider.Interface, error) {
		cfg, err := ParseConfig(config)
		if err != nil {
			return nil, err
		}
		return New(cfg)
	})
}

// Config is the --cloud-config file, YAML or JSON:
//
//	loadBalancerCIDRs: ["172.18.255.0/24", "fd00:18::/120"]
type Config struct {
	// LoadBalancerCIDRs are the pools LoadBalancer addresses come from, at
	// most one per IP family. Without any, LoadBalancer Services fail to
	// sync (with an Event) until one is configured.
	LoadBalancerCIDRs []string `json:"loadBalancerCIDRs,omitempty"`
}

// ParseConfig reads a Config; a nil reader (no --cloud-config) is an empty
// configuration. Unknown fields are errors, so that a typo does not leave
// the pool silently empty.
func ParseConfig(r io.Reader) (Config, error) {
	var cfg Config
	if r == nil {
		return cfg, nil
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return cfg, fmt.Errorf("reading the %s cloud config: %w", ProviderName, err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return cfg, nil
	}
	js, err := yaml.ToJSON(data)
	if err != nil {
		return cfg, fmt.Errorf("parsing the %s cloud config: %w", ProviderName, err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return cfg, fmt.Errorf("parsing the %s cloud config: %w", ProviderName, err)
	}
	return cfg, nil
}

// Cloud is the local provider.
type Cloud struct {
	lb     *loadBalancers
	routes *routes
}

var (
	_ cloudprovider.Interface    = (*Cloud)(nil)
	_ cloudprovider.InformerUser = (*Cloud)(nil)
)

// New returns the provider for cfg.
func New(cfg Config) (*Cloud, error) {
	pools, err := parsePools(cfg.LoadBalancerCIDRs)
	if err != nil {
		return nil, err
	}
	return &Cloud{lb: newLoadBalancers(pools), routes: &routes{byName: map[string]cloudprovider.Route{}}}, nil
}

// Initialize does nothing: the provider needs no client of its own.
func (c *Cloud) Initialize(cloudprovider.ControllerClientBuilder, <-chan struct{}) {}

// SetInformers gives the provider the Services it recovers addresses from.
func (c *Cloud) SetInformers(f informers.SharedInformerFactory) {
	c.lb.setServices(f.Core().V1().Services())
}

// LoadBalancer returns the address pools.
func (c *Cloud) LoadBalancer() (cloudprovider.LoadBalancer, bool) { return c.lb, true }

// Instances is not implemented: InstancesV2 is.
func (c *Cloud) Instances() (cloudprovider.Instances, bool) { return nil, false }

// InstancesV2 describes instances from their Node objects.
func (c *Cloud) InstancesV2() (cloudprovider.InstancesV2, bool) { return instances{}, true }

// Zones is not implemented: InstancesV2's metadata carries the zone.
func (c *Cloud) Zones() (cloudprovider.Zones, bool) { return nil, false }

// Clusters is not implemented.
func (c *Cloud) Clusters() (cloudprovider.Clusters, bool) { return nil, false }

// Routes are a no-op.
func (c *Cloud) Routes() (cloudprovider.Routes, bool) { return c.routes, true }

// ProviderName returns "local".
func (c *Cloud) ProviderName() string { return ProviderName }

// HasClusterID is true: there is only one cluster.
func (c *Cloud) HasClusterID() bool { return true }
