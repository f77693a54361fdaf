package options

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/kcm-dev/kcm/pkg/controller/nodeipam"
	"github.com/kcm-dev/kcm/pkg/controllermanager/config"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
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

// validateNetwork rejects at startup what node-ipam-controller would fail
// on when it starts (upstream fails the whole process then), one line per
// problem naming the flag and its value. The checks live in the nodeipam
// package, which runs them again in its constructor. CIDRs that do not
// parse and the allocator type are checked whatever runs; the rest only
// when node-ipam-controller runs with --allocate-node-cidrs, as upstream.
func validateNetwork(c *config.ComponentConfig) []error {
	errs := nodeipam.CheckFlagSyntax(c)
	if err := nodeipam.CheckAllocatorType(c.KubeCloudShared.CIDRAllocatorType); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 || !c.KubeCloudShared.AllocateNodeCIDRs || !nodeIPAMEnabled(c.Generic.Controllers) {
		return errs
	}
	_, errs = nodeipam.ParseConfig(c)
	return errs
}

// nodeIPAMEnabled reports whether --controllers selects node-ipam-controller
// (by name or alias), which is enabled by default: the first explicit
// mention wins, then "*".
func nodeIPAMEnabled(selection []string) bool {
	aliases := names.Aliases()
	is := func(s string) bool { return s == names.NodeIpam || aliases[s] == names.NodeIpam }
	star := false
	for _, s := range selection {
		switch {
		case is(s):
			return true
		case strings.HasPrefix(s, "-") && is(s[1:]):
			return false
		case s == "*":
			star = true
		}
	}
	return star
}
