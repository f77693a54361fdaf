package nodeipam

import (
	"errors"
	"fmt"
	"net"
	"strings"

	kcmv1alpha1 "k8s.io/kube-controller-manager/config/v1alpha1"
	netutils "k8s.io/utils/net"

	"github.com/kcm-dev/kcm/pkg/controllermanager/config"
)

const (
	// RangeAllocator is the only --cidr-allocator-type without a cloud
	// provider, and the default.
	RangeAllocator = "RangeAllocator"
	// Upstream's default node mask sizes per IP family.
	defaultNodeMaskSizeIPv4 = 24
	defaultNodeMaskSizeIPv6 = 64
)

// Config is the node IPAM configuration, parsed and checked.
type Config struct {
	// ClusterCIDRs holds one CIDR, or one per IP family in a dual-stack
	// cluster, in the order given.
	ClusterCIDRs []*net.IPNet
	// NodeMaskSizes holds the node mask size of each cluster CIDR.
	NodeMaskSizes []int
	// ServiceCIDRs holds the primary and secondary service CIDRs given.
	ServiceCIDRs []*net.IPNet
}

// CheckFlagSyntax checks what is wrong whatever controllers run: CIDRs
// that do not parse and more than two service ranges.
func CheckFlagSyntax(c *config.ComponentConfig) []error {
	var errs []error
	if v := c.KubeCloudShared.ClusterCIDR; strings.TrimSpace(v) != "" {
		if _, err := parseCIDRs(v); err != nil {
			errs = append(errs, fmt.Errorf("--cluster-cidr=%s: %w", v, err))
		}
	}
	svc := serviceFlag(c.NodeIPAMController)
	if len(strings.Split(svc, ",")) > 2 {
		return append(errs, fmt.Errorf("--service-cluster-ip-range=%s can not contain more than two entries", svc))
	}
	if _, err := parseServiceCIDRs(c.NodeIPAMController); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// CheckAllocatorType rejects the allocator types that need a cloud
// provider, which kube-controller-manager no longer has.
func CheckAllocatorType(t string) error {
	if t == "" || t == RangeAllocator {
		return nil
	}
	return fmt.Errorf("--cidr-allocator-type=%s: built-in cloud providers are disabled. The ipam %s is not available", t, t)
}

// ParseConfig checks the flags as upstream does when node-ipam-controller
// starts with --allocate-node-cidrs, and returns the parsed configuration
// or one error per problem, each naming the flag and its value.
func ParseConfig(c *config.ComponentConfig) (*Config, []error) {
	clusterCIDRs, err := parseClusterCIDRs(c.KubeCloudShared.ClusterCIDR)
	if err != nil {
		return nil, []error{err}
	}
	var errs []error
	services, err := parseServiceCIDRs(c.NodeIPAMController)
	if err == nil && len(services) == 2 {
		if dual, _ := netutils.IsDualStackCIDRs(services); !dual {
			err = fmt.Errorf("--service-cluster-ip-range=%s: serviceCIDR and secondaryServiceCIDR are not dualstack (from different IPfamiles)", serviceFlag(c.NodeIPAMController))
		}
	}
	if err != nil {
		errs = append(errs, err)
	}
	masks, err := nodeMaskSizes(c.NodeIPAMController, clusterCIDRs)
	if err != nil {
		return nil, append(errs, err)
	}
	for i, cidr := range clusterCIDRs {
		if err := checkMaskSize(cidr, masks[i]); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	sizes := make([]int, len(masks))
	for i, m := range masks {
		sizes[i] = m.size
	}
	return &Config{ClusterCIDRs: clusterCIDRs, NodeMaskSizes: sizes, ServiceCIDRs: services}, nil
}

// parseClusterCIDRs parses --cluster-cidr: one CIDR, or two of different
// IP families.
func parseClusterCIDRs(v string) ([]*net.IPNet, error) {
	if strings.TrimSpace(v) == "" {
		return nil, errors.New("--allocate-node-cidrs=true requires --cluster-cidr")
	}
	cidrs, err := parseCIDRs(v)
	if err != nil {
		return nil, fmt.Errorf("--cluster-cidr=%s: %w", v, err)
	}
	dual, _ := netutils.IsDualStackCIDRs(cidrs)
	if len(cidrs) > 1 && !dual {
		return nil, fmt.Errorf("--cluster-cidr=%s: len of ClusterCIDRs==%d and they are not configured as dual stack (at least one from each IPFamily)", v, len(cidrs))
	}
	if len(cidrs) > 2 {
		return nil, fmt.Errorf("--cluster-cidr=%s: length of clusterCIDRs is:%d more than max allowed of 2", v, len(cidrs))
	}
	return cidrs, nil
}

// parseCIDRs parses a comma-separated list of CIDRs, as upstream does
// (leading zeros allowed, no blanks around commas).
func parseCIDRs(v string) ([]*net.IPNet, error) {
	var cidrs []*net.IPNet
	for _, s := range strings.Split(strings.TrimSpace(v), ",") {
		_, cidr, err := netutils.ParseCIDRSloppy(s)
		if err != nil {
			return nil, err
		}
		cidrs = append(cidrs, cidr)
	}
	return cidrs, nil
}

// serviceFlag rebuilds the --service-cluster-ip-range value.
func serviceFlag(o kcmv1alpha1.NodeIPAMControllerConfiguration) string {
	if o.SecondaryServiceCIDR == "" {
		return o.ServiceCIDR
	}
	return o.ServiceCIDR + "," + o.SecondaryServiceCIDR
}

// parseServiceCIDRs parses the primary and secondary service CIDR; blank
// ones are left out.
func parseServiceCIDRs(o kcmv1alpha1.NodeIPAMControllerConfiguration) ([]*net.IPNet, error) {
	var cidrs []*net.IPNet
	for _, s := range []string{o.ServiceCIDR, o.SecondaryServiceCIDR} {
		if strings.TrimSpace(s) == "" {
			continue
		}
		_, cidr, err := netutils.ParseCIDRSloppy(s)
		if err != nil {
			return nil, fmt.Errorf("--service-cluster-ip-range=%s: %w", serviceFlag(o), err)
		}
		cidrs = append(cidrs, cidr)
	}
	return cidrs, nil
}

// maskSize is the node mask size of one cluster CIDR and where it came
// from, for error messages.
type maskSize struct {
	size int
	flag string
	set  bool
}

func (m maskSize) String() string {
	if m.set {
		return fmt.Sprintf("--%s=%d", m.flag, m.size)
	}
	return fmt.Sprintf("--%s (default %d)", m.flag, m.size)
}

// nodeMaskSizes picks each cluster CIDR's node mask size with upstream's
// rules: --node-cidr-mask-size for single-stack clusters only, the family
// flags only for a family the cluster has, both never together; unset
// sizes default to 24 (IPv4) and 64 (IPv6).
func nodeMaskSizes(o kcmv1alpha1.NodeIPAMControllerConfiguration, clusterCIDRs []*net.IPNet) ([]maskSize, error) {
	v4 := maskSize{size: defaultNodeMaskSizeIPv4, flag: "node-cidr-mask-size-ipv4"}
	v6 := maskSize{size: defaultNodeMaskSizeIPv6, flag: "node-cidr-mask-size-ipv6"}
	if o.NodeCIDRMaskSizeIPv4 != 0 {
		v4.size, v4.set = int(o.NodeCIDRMaskSizeIPv4), true
	}
	if o.NodeCIDRMaskSizeIPv6 != 0 {
		v6.size, v6.set = int(o.NodeCIDRMaskSizeIPv6), true
	}
	single := maskSize{flag: "node-cidr-mask-size"}
	switch {
	case len(clusterCIDRs) > 1:
		if o.NodeCIDRMaskSize != 0 {
			return nil, fmt.Errorf("--node-cidr-mask-size=%d: usage of --node-cidr-mask-size is not allowed with dual-stack clusters", o.NodeCIDRMaskSize)
		}
	case o.NodeCIDRMaskSize != 0:
		if v4.set || v6.set {
			return nil, fmt.Errorf("--node-cidr-mask-size=%d: usage of --node-cidr-mask-size-ipv4 and --node-cidr-mask-size-ipv6 is not allowed if --node-cidr-mask-size is set. For dual-stack clusters please unset it and use IPFamily specific flags", o.NodeCIDRMaskSize)
		}
		single.size, single.set = int(o.NodeCIDRMaskSize), true
		v4, v6 = single, single
	case netutils.IsIPv6CIDR(clusterCIDRs[0]):
		if v4.set {
			return nil, fmt.Errorf("--node-cidr-mask-size-ipv4=%d: usage of --node-cidr-mask-size-ipv4 is not allowed for a single-stack IPv6 cluster", v4.size)
		}
		if !v6.set {
			v6.flag = single.flag
		}
	default:
		if v6.set {
			return nil, fmt.Errorf("--node-cidr-mask-size-ipv6=%d: usage of --node-cidr-mask-size-ipv6 is not allowed for a single-stack IPv4 cluster", v6.size)
		}
		if !v4.set {
			v4.flag = single.flag
		}
	}
	sizes := make([]maskSize, len(clusterCIDRs))
	for i, cidr := range clusterCIDRs {
		sizes[i] = v4
		if netutils.IsIPv6CIDR(cidr) {
			sizes[i] = v6
		}
	}
	return sizes, nil
}

// checkMaskSize checks a node mask size against its cluster CIDR: not
// shorter than the cluster's mask (upstream's check), not longer than an
// address, and for IPv6 at most 16 bits longer (upstream's bitmap limit).
func checkMaskSize(cidr *net.IPNet, m maskSize) error {
	prefix, width := cidr.Mask.Size()
	switch {
	case prefix > m.size:
		return fmt.Errorf("--cluster-cidr=%s: mask size of cluster CIDR must be less than or equal to %s configured for CIDR family", cidr, m)
	case m.size > width:
		return fmt.Errorf("%s: must not be greater than %d for cluster CIDR %s", m, width, cidr)
	case width == 128 && m.size-prefix > maxIPv6MaskDiff:
		return fmt.Errorf("%s: %v: it may be at most %d bits longer than the mask of cluster CIDR %s", m, ErrSubNetTooBig, maxIPv6MaskDiff, cidr)
	}
	return nil
}
