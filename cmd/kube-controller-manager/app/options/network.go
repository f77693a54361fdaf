package options

import (
	"fmt"
	"net"
	"strings"

	"github.com/spf13/pflag"
	netutils "k8s.io/utils/net"

	"github.com/kcm-dev/kcm/pkg/controllermanager/config"
)

// serviceCIDRFlag binds --service-cluster-ip-range, which upstream splits
// into the primary and secondary service CIDR of the node IPAM config.
type serviceCIDRFlag struct{ c *config.ComponentConfig }

func (f serviceCIDRFlag) String() string {
	o := f.c.NodeIPAMController
	if o.SecondaryServiceCIDR != "" {
		return o.ServiceCIDR + "," + o.SecondaryServiceCIDR
	}
	return o.ServiceCIDR
}

func (f serviceCIDRFlag) Set(v string) error {
	o := &f.c.NodeIPAMController
	o.ServiceCIDR, o.SecondaryServiceCIDR = v, ""
	if first, second, ok := strings.Cut(v, ","); ok {
		o.ServiceCIDR, o.SecondaryServiceCIDR = first, second
	}
	return nil
}

func (serviceCIDRFlag) Type() string { return "string" }

func addNodeIPAMFlags(fs *pflag.FlagSet, c *config.ComponentConfig) {
	o := &c.NodeIPAMController
	fs.Var(serviceCIDRFlag{c}, "service-cluster-ip-range", "CIDR Range for Services in cluster. Only used when --allocate-node-cidrs=true; if false, this option will be ignored.")
	fs.Int32Var(&o.NodeCIDRMaskSize, "node-cidr-mask-size", o.NodeCIDRMaskSize, "Mask size for node cidr in cluster. Default is 24 for IPv4 and 64 for IPv6.")
	fs.Int32Var(&o.NodeCIDRMaskSizeIPv4, "node-cidr-mask-size-ipv4", o.NodeCIDRMaskSizeIPv4, "Mask size for IPv4 node cidr in dual-stack cluster. Default is 24.")
	fs.Int32Var(&o.NodeCIDRMaskSizeIPv6, "node-cidr-mask-size-ipv6", o.NodeCIDRMaskSizeIPv6, "Mask size for IPv6 node cidr in dual-stack cluster. Default is 64.")
}

// addKubeCloudSharedFlags adds the flags shared with the cloud controllers,
// in upstream's "generic" section.
func addKubeCloudSharedFlags(fs *pflag.FlagSet, c *config.ComponentConfig) {
	o := &c.KubeCloudShared
	fs.StringVar(&o.CloudProviderName, "cloud-provider", o.CloudProviderName, "The provider for cloud services. Empty string for no provider.")
	fs.StringVar(&o.CloudConfigFile, "cloud-config", o.CloudConfigFile, "The path to the cloud provider configuration file. Empty string for no configuration file.")
	fs.StringVar(&o.ExternalCloudVolumePlugin, "external-cloud-volume-plugin", o.ExternalCloudVolumePlugin, "The plugin to use when cloud provider is set to external. Can be empty, should only be set when cloud-provider is external. Currently used to allow node-ipam-controller, persistentvolume-binder-controller, persistentvolume-expander-controller and attach-detach-controller to work for in tree cloud providers.")
	fs.BoolVar(&o.UseServiceAccountCredentials, "use-service-account-credentials", o.UseServiceAccountCredentials, "If true, use individual service account credentials for each controller.")
	fs.BoolVar(&o.AllowUntaggedCloud, "allow-untagged-cloud", o.AllowUntaggedCloud, "Allow the cluster to run without the cluster-id on cloud instances. This is a legacy mode of operation and a cluster-id will be required in the future.")
	_ = fs.MarkDeprecated("allow-untagged-cloud", "This flag is deprecated and will be removed in a future release. A cluster-id will be required on cloud instances.")
	fs.DurationVar(&o.RouteReconciliationPeriod.Duration, "route-reconciliation-period", o.RouteReconciliationPeriod.Duration, "The period for reconciling routes created for Nodes by cloud provider.")
	fs.StringVar(&o.ClusterName, "cluster-name", o.ClusterName, "The instance prefix for the cluster.")
	fs.StringVar(&o.ClusterCIDR, "cluster-cidr", o.ClusterCIDR, "CIDR Range for Pods in cluster. Only used when --allocate-node-cidrs=true; if false, this option will be ignored.")
	fs.BoolVar(&o.AllocateNodeCIDRs, "allocate-node-cidrs", o.AllocateNodeCIDRs, "Should CIDRs for Pods be allocated and set on the cloud provider. Requires --cluster-cidr.")
	fs.StringVar(&o.CIDRAllocatorType, "cidr-allocator-type", o.CIDRAllocatorType, "Type of CIDR allocator to use")
	fs.BoolVar(&o.ConfigureCloudRoutes, "configure-cloud-routes", o.ConfigureCloudRoutes, "Should CIDRs allocated by allocate-node-cidrs be configured on the cloud provider.")
	fs.DurationVar(&o.NodeSyncPeriod.Duration, "node-sync-period", o.NodeSyncPeriod.Duration, "This flag is deprecated and will be removed in future releases. See node-monitor-period for Node health checking or route-reconciliation-period for cloud provider's route configuration settings.")
	_ = fs.MarkDeprecated("node-sync-period", "This flag is currently no-op and will be deleted.")
}

// parseCIDRList parses a comma-separated list of at most two CIDRs of
// different IP families, as upstream accepts for dual-stack clusters.
func parseCIDRList(flag, value string) ([]*net.IPNet, error) {
	if strings.TrimSpace(value) == "" {
		return nil, nil
	}
	parts := strings.Split(value, ",")
	if len(parts) > 2 {
		return nil, fmt.Errorf("--%s=%s: may contain at most two CIDRs (one per IP family)", flag, value)
	}
	cidrs, err := netutils.ParseCIDRs(parts)
	if err != nil {
		return nil, fmt.Errorf("--%s=%s: %w", flag, value, err)
	}
	if len(cidrs) == 2 {
		dual, err := netutils.IsDualStackCIDRs(cidrs)
		if err != nil || !dual {
			return nil, fmt.Errorf("--%s=%s: two CIDRs must be one IPv4 and one IPv6", flag, value)
		}
	}
	return cidrs, nil
}

// validateNetwork checks the node IPAM inputs at startup instead of when
// node-ipam-controller starts (where upstream fails with a fatal log).
func validateNetwork(c *config.ComponentConfig) []error {
	var errs []error
	o := c.NodeIPAMController
	if _, err := parseCIDRList("cluster-cidr", c.KubeCloudShared.ClusterCIDR); err != nil {
		errs = append(errs, err)
	}
	svc := o.ServiceCIDR
	if o.SecondaryServiceCIDR != "" {
		svc += "," + o.SecondaryServiceCIDR
	}
	if _, err := parseCIDRList("service-cluster-ip-range", svc); err != nil {
		errs = append(errs, err)
	}
	for _, m := range []struct {
		flag string
		v    int32
		max  int32
	}{
		{"node-cidr-mask-size", o.NodeCIDRMaskSize, 128},
		{"node-cidr-mask-size-ipv4", o.NodeCIDRMaskSizeIPv4, 32},
		{"node-cidr-mask-size-ipv6", o.NodeCIDRMaskSizeIPv6, 128},
	} {
		if m.v < 0 || m.v > m.max {
			errs = append(errs, fmt.Errorf("--%s=%d: must be between 0 and %d", m.flag, m.v, m.max))
		}
	}
	if c.KubeCloudShared.AllocateNodeCIDRs && strings.TrimSpace(c.KubeCloudShared.ClusterCIDR) == "" {
		errs = append(errs, fmt.Errorf("--allocate-node-cidrs=true requires --cluster-cidr"))
	}
	if t := c.KubeCloudShared.CIDRAllocatorType; t != "" && t != "RangeAllocator" {
		errs = append(errs, fmt.Errorf("--cidr-allocator-type=%s: built-in cloud providers are disabled. The ipam %s is not available", t, t))
	}
	return errs
}
