package nodeipam

import (
	"slices"
	"strings"
	"testing"

	"github.com/kcm-dev/kcm/pkg/controllermanager/config"
)

// cfg builds a ComponentConfig with --allocate-node-cidrs and the given
// cluster CIDR, service range and mask sizes (plain, IPv4, IPv6).
func cfg(cluster, service string, masks ...int32) *config.ComponentConfig {
	c := &config.ComponentConfig{}
	c.KubeCloudShared.AllocateNodeCIDRs = true
	c.KubeCloudShared.ClusterCIDR = cluster
	c.NodeIPAMController.ServiceCIDR, c.NodeIPAMController.SecondaryServiceCIDR, _ = strings.Cut(service, ",")
	for i, m := range masks {
		switch i {
		case 0:
			c.NodeIPAMController.NodeCIDRMaskSize = m
		case 1:
			c.NodeIPAMController.NodeCIDRMaskSizeIPv4 = m
		case 2:
			c.NodeIPAMController.NodeCIDRMaskSizeIPv6 = m
		}
	}
	return c
}

func TestParseConfig(t *testing.T) {
	cases := []struct {
		name    string
		c       *config.ComponentConfig
		masks   []int  // want, when no error
		wantErr string // substring of the only error
	}{
		{"IPv4 default", cfg("10.244.0.0/16", ""), []int{24}, ""},
		{"IPv6 default", cfg("fd00::/48", ""), []int{64}, ""},
		{"plain mask", cfg("10.244.0.0/16", "", 26), []int{26}, ""},
		{"plain mask IPv6", cfg("fd00::/56", "", 64), []int{64}, ""},
		{"IPv4 flag on IPv4", cfg("10.244.0.0/16", "", 0, 25), []int{25}, ""},
		{"IPv6 flag on IPv6", cfg("fd00::/56", "", 0, 0, 70), []int{70}, ""},
		{"dual stack defaults", cfg("10.244.0.0/16,fd00::/48", "10.96.0.0/12,fd01::/108"), []int{24, 64}, ""},
		{"dual stack IPv6 first", cfg("fd00::/48,10.244.0.0/16", "", 0, 25, 60), []int{60, 25}, ""},
		{"service range beside", cfg("10.244.0.0/16", "10.96.0.0/12"), []int{24}, ""},

		{"no cluster cidr", cfg("", ""), nil, "--allocate-node-cidrs=true requires --cluster-cidr"},
		{"bad cluster cidr", cfg("10.244.0.0/33", ""), nil, "--cluster-cidr=10.244.0.0/33: invalid CIDR address"},
		{"two IPv4", cfg("10.0.0.0/16,10.1.0.0/16", ""), nil, "--cluster-cidr=10.0.0.0/16,10.1.0.0/16: len of ClusterCIDRs==2 and they are not configured as dual stack"},
		{"three CIDRs", cfg("10.0.0.0/16,fd00::/48,10.1.0.0/16", ""), nil, "length of clusterCIDRs is:3 more than max allowed of 2"},
		{"plain mask dual stack", cfg("10.244.0.0/16,fd00::/48", "", 24), nil, "--node-cidr-mask-size=24: usage of --node-cidr-mask-size is not allowed with dual-stack clusters"},
		{"plain and family mask", cfg("10.244.0.0/16", "", 24, 24), nil, "--node-cidr-mask-size=24: usage of --node-cidr-mask-size-ipv4 and --node-cidr-mask-size-ipv6 is not allowed if --node-cidr-mask-size is set"},
		{"IPv4 mask on IPv6", cfg("fd00::/48", "", 0, 24), nil, "--node-cidr-mask-size-ipv4=24: usage of --node-cidr-mask-size-ipv4 is not allowed for a single-stack IPv6 cluster"},
		{"IPv6 mask on IPv4", cfg("10.0.0.0/8", "", 0, 0, 64), nil, "--node-cidr-mask-size-ipv6=64: usage of --node-cidr-mask-size-ipv6 is not allowed for a single-stack IPv4 cluster"},
		{"mask shorter than cluster", cfg("10.0.0.0/16", "", 8), nil, "--cluster-cidr=10.0.0.0/16: mask size of cluster CIDR must be less than or equal to --node-cidr-mask-size=8 configured for CIDR family"},
		{"default mask shorter than cluster", cfg("10.0.0.0/26", ""), nil, "less than or equal to --node-cidr-mask-size (default 24)"},
		{"negative mask", cfg("10.0.0.0/16", "", -1), nil, "--node-cidr-mask-size=-1"},
		{"IPv4 mask too long", cfg("10.0.0.0/16", "", 0, 33), nil, "--node-cidr-mask-size-ipv4=33: must not be greater than 32"},
		{"IPv6 default too far", cfg("fd00::/32", ""), nil, "--node-cidr-mask-size (default 64): New CIDR set failed; the node CIDR size is too big"},
		{"IPv6 dual too far", cfg("10.0.0.0/8,fd00::/40", "", 0, 0, 64), nil, "--node-cidr-mask-size-ipv6=64: New CIDR set failed"},
		{"same family services", cfg("10.244.0.0/16", "10.96.0.0/12,10.112.0.0/12"), nil, "--service-cluster-ip-range=10.96.0.0/12,10.112.0.0/12: serviceCIDR and secondaryServiceCIDR are not dualstack"},
		{"bad service", cfg("10.244.0.0/16", "nope"), nil, "--service-cluster-ip-range=nope"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, errs := ParseConfig(tc.c)
			if tc.wantErr == "" {
				if len(errs) > 0 {
					t.Fatalf("errors: %v", errs)
				}
				if !slices.Equal(got.NodeMaskSizes, tc.masks) {
					t.Errorf("mask sizes %v, want %v", got.NodeMaskSizes, tc.masks)
				}
				return
			}
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.wantErr) {
				t.Fatalf("errors %v, want one containing %q", errs, tc.wantErr)
			}
			if strings.Contains(errs[0].Error(), "\n") {
				t.Errorf("error spans lines: %q", errs[0])
			}
		})
	}
}

func TestCheckFlagSyntax(t *testing.T) {
	cases := []struct {
		cluster, service string
		want             []string
	}{
		{"", "", nil},
		{"10.244.0.0/16,fd00::/48", "10.96.0.0/12,fd01::/108", nil},
		// Family rules are node-ipam's business, checked only when it runs.
		{"10.0.0.0/16,10.1.0.0/16", "10.96.0.0/12,10.112.0.0/12", nil},
		{"10.244.0.0/33", "", []string{"--cluster-cidr=10.244.0.0/33"}},
		{"", "not-a-cidr", []string{"--service-cluster-ip-range=not-a-cidr"}},
		{"", "10.0.0.0/16,fd00::/108,10.1.0.0/16", []string{"--service-cluster-ip-range=10.0.0.0/16,fd00::/108,10.1.0.0/16 can not contain more than two entries"}},
		{"x", "y", []string{"--cluster-cidr=x", "--service-cluster-ip-range=y"}},
	}
	for _, tc := range cases {
		c := cfg(tc.cluster, tc.service)
		c.KubeCloudShared.AllocateNodeCIDRs = false
		errs := CheckFlagSyntax(c)
		if len(errs) != len(tc.want) {
			t.Errorf("%q %q: errors %v, want %d", tc.cluster, tc.service, errs, len(tc.want))
			continue
		}
		for i, w := range tc.want {
			if !strings.Contains(errs[i].Error(), w) {
				t.Errorf("%q %q: error %q lacks %q", tc.cluster, tc.service, errs[i], w)
			}
		}
	}
}

func TestCheckAllocatorType(t *testing.T) {
	for _, ok := range []string{"", "RangeAllocator"} {
		if err := CheckAllocatorType(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"CloudAllocator", "IPAMFromCloud"} {
		if err := CheckAllocatorType(bad); err == nil || !strings.Contains(err.Error(), "--cidr-allocator-type="+bad) {
			t.Errorf("%q: err = %v", bad, err)
		}
	}
}
