package cloudprovider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"

	"k8s.io/apimachinery/pkg/util/yaml"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"
)

// Name is the value of --cloud-provider that selects this provider.
const Name = "parity"

// Annotations a scenario sets to steer the provider.
const (
	AnnotationIPMode         = "parity.kcm.dev/ip-mode"
	AnnotationLBError        = "parity.kcm.dev/lb-error"
	AnnotationInstanceType   = "parity.kcm.dev/instance-type"
	AnnotationZone           = "parity.kcm.dev/zone"
	AnnotationRegion         = "parity.kcm.dev/region"
	AnnotationAddresses      = "parity.kcm.dev/addresses"
	AnnotationLabels         = "parity.kcm.dev/additional-labels"
	AnnotationRouteError     = "parity.kcm.dev/route-error"
	AnnotationInstanceGone   = "parity.kcm.dev/instance-gone"
	AnnotationInstanceShutdn = "parity.kcm.dev/instance-shutdown"
)

// ConfigMaps holding the cloud's state, in kube-system.
const (
	StateNamespace     = "kube-system"
	LoadBalancersState = "parity-cloud-loadbalancers"
	RoutesState        = "parity-cloud-routes"
)

const defaultCIDR = "203.0.113.0/24"

func init() {
	cloudprovider.RegisterCloudProvider(Name, func(r io.Reader) (cloudprovider.Interface, error) {
		cfg, err := parseConfig(r)
		if err != nil {
			return nil, err
		}
		return New(cfg)
	})
}

// Config is the --cloud-config file.
type Config struct {
	LoadBalancerCIDR string `json:"loadBalancerCIDR,omitempty"`
}

func parseConfig(r io.Reader) (Config, error) {
	var cfg Config
	if r == nil {
		return cfg, nil
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return cfg, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return cfg, nil
	}
	js, err := yaml.ToJSON(data)
	if err != nil {
		return cfg, fmt.Errorf("parity cloud config: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return cfg, fmt.Errorf("parity cloud config: %w", err)
	}
	return cfg, nil
}

// Cloud is the parity provider.
type Cloud struct {
	prefix netip.Prefix
	lbs    *store
	routes *store
}

var _ cloudprovider.Interface = (*Cloud)(nil)

// New returns the provider for cfg.
func New(cfg Config) (*Cloud, error) {
	cidr := cfg.LoadBalancerCIDR
	if cidr == "" {
		cidr = defaultCIDR
	}
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return nil, fmt.Errorf("parity cloud config: loadBalancerCIDR: %w", err)
	}
	return &Cloud{
		prefix: p.Masked(),
		lbs:    newStore(LoadBalancersState),
		routes: newStore(RoutesState),
	}, nil
}

// Initialize gets the client the cloud's state is written with.
func (c *Cloud) Initialize(b cloudprovider.ControllerClientBuilder, _ <-chan struct{}) {
	cs, err := b.Client("parity-cloud-provider")
	if err != nil {
		klog.ErrorS(err, "parity cloud provider: no client, the cloud's state stays in memory")
		return
	}
	c.lbs.setClient(cs)
	c.routes.setClient(cs)
}

func (c *Cloud) LoadBalancer() (cloudprovider.LoadBalancer, bool) { return loadBalancers{c}, true }
func (c *Cloud) Instances() (cloudprovider.Instances, bool)       { return nil, false }
func (c *Cloud) InstancesV2() (cloudprovider.InstancesV2, bool)   { return instances{}, true }
func (c *Cloud) Zones() (cloudprovider.Zones, bool)               { return nil, false }
func (c *Cloud) Clusters() (cloudprovider.Clusters, bool)         { return nil, false }
func (c *Cloud) Routes() (cloudprovider.Routes, bool)             { return routes{c}, true }
func (c *Cloud) ProviderName() string                             { return Name }
func (c *Cloud) HasClusterID() bool                               { return true }
