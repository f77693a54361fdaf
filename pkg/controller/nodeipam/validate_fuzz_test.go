package nodeipam

import (
	"strings"
	"testing"

	"github.com/kcm-dev/kcm/pkg/controllermanager/config"
)

// FuzzParseConfig checks the node IPAM flags on any value: malformed ones
// give errors, never a panic; a configuration that passes has one or two
// cluster CIDRs (two of different families), a mask size for each from
// which a CIDR set can be made, and at most two service CIDRs; and the
// flag syntax check never rejects what ParseConfig accepts.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []struct {
		cluster, service, secondary string
		plain, v4, v6               int32
	}{
		{"10.244.0.0/16", "", "", 0, 0, 0},
		{"10.244.0.0/16,fd00::/48", "10.96.0.0/12", "fd01::/108", 0, 25, 60},
		{"fd00::/32", "", "", 0, 0, 0},
		{"fd00::/48,10.244.0.0/16", "", "", 24, 0, 0},
		{"010.244.000.000/16", "10.96.0.0/12", "", 0, 0, 0},
		{"10.0.0.0/16,10.1.0.0/16", "", "", 0, 0, 0},
		{"10.0.0.0/16,fd00::/48,10.1.0.0/16", "a", "b", 0, 0, 0},
		{"", "", "", 0, 0, 0},
		{" ", " ", " ", -1, -1, -1},
		{",", ",", ",", 0, 0, 0},
		{"10.0.0.0/33", "::/129", "1.2.3.4", 2147483647, -2147483648, 0},
		{"0.0.0.0/0", "0.0.0.0/0", "::/0", 32, 0, 0},
		{"::/0", "", "", 16, 0, 0},
		{"::ffff:10.0.0.0/104", "", "", 0, 0, 120},
		{"10.0.0.0/8 ", "10.96.0.0/12, fd00::/108", "", 0, 0, 0},
		{"日本", "\x00", "", 0, 0, 0},
	} {
		f.Add(s.cluster, s.service, s.secondary, s.plain, s.v4, s.v6)
	}
	f.Fuzz(func(t *testing.T, cluster, service, secondary string, plain, v4, v6 int32) {
		c := &config.ComponentConfig{}
		c.KubeCloudShared.AllocateNodeCIDRs = true
		c.KubeCloudShared.ClusterCIDR = cluster
		c.NodeIPAMController.ServiceCIDR = service
		c.NodeIPAMController.SecondaryServiceCIDR = secondary
		c.NodeIPAMController.NodeCIDRMaskSize = plain
		c.NodeIPAMController.NodeCIDRMaskSizeIPv4 = v4
		c.NodeIPAMController.NodeCIDRMaskSizeIPv6 = v6

		syntaxErrs := CheckFlagSyntax(c)
		parsed, errs := ParseConfig(c)
		if (parsed == nil) == (len(errs) == 0) {
			t.Fatalf("ParseConfig: config %v with errors %v", parsed, errs)
		}
		for _, err := range append(errs, syntaxErrs...) {
			if err == nil || err.Error() == "" {
				t.Fatalf("ParseConfig: an empty error among %v", errs)
			}
		}
		if parsed == nil {
			return
		}
		if len(syntaxErrs) != 0 {
			t.Fatalf("ParseConfig accepts %q, %q, %q; CheckFlagSyntax rejects it: %v", cluster, service, secondary, syntaxErrs)
		}
		n := len(parsed.ClusterCIDRs)
		if n < 1 || n > 2 || len(parsed.NodeMaskSizes) != n || len(parsed.ServiceCIDRs) > 2 {
			t.Fatalf("ParseConfig(%q): %d cluster CIDRs, %d mask sizes, %d service CIDRs", cluster, n, len(parsed.NodeMaskSizes), len(parsed.ServiceCIDRs))
		}
		if n == 2 && (parsed.ClusterCIDRs[0].IP.To4() == nil) == (parsed.ClusterCIDRs[1].IP.To4() == nil) {
			t.Fatalf("ParseConfig(%q): two cluster CIDRs of one family", cluster)
		}
		for i, cidr := range parsed.ClusterCIDRs {
			s, err := NewCIDRSet(cidr, parsed.NodeMaskSizes[i])
			if err != nil {
				t.Fatalf("ParseConfig(%q) accepts mask size %d for %v, but: %v", cluster, parsed.NodeMaskSizes[i], cidr, err)
			}
			forgetSetMetrics(s)
			if !strings.Contains(cluster, "/") || !cidr.IP.Mask(cidr.Mask).Equal(cidr.IP) {
				t.Fatalf("ParseConfig(%q): cluster CIDR %v is not a masked network", cluster, cidr)
			}
			for _, svc := range parsed.ServiceCIDRs {
				// Two CIDRs of a family overlap when one holds the other.
				if _, w := svc.Mask.Size(); w == widthOf(cidr) && s.Overlaps(svc) != (cidr.Contains(svc.IP) || svc.Contains(cidr.IP)) {
					t.Fatalf("cluster %v, service %v: Overlaps = %v", cidr, svc, s.Overlaps(svc))
				}
			}
		}
	})
}
