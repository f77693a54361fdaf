package servicecidr

import (
	"net/netip"

	networking "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// cidrsWhere returns the cached ServiceCIDRs with a prefix for which match
// holds, once per matching prefix (as upstream counts them).
func (c *Controller) cidrsWhere(match func(netip.Prefix) bool) []*networking.ServiceCIDR {
	all, err := c.cidrLister.List(labels.Everything())
	if err != nil {
		return nil
	}
	var out []*networking.ServiceCIDR
	for _, cidr := range all {
		for _, s := range cidr.Spec.CIDRs {
			if p, err := netip.ParsePrefix(s); err == nil && match(p) {
				out = append(out, cidr)
			}
		}
	}
	return out
}

// cidrsContainingPrefix returns the ServiceCIDRs with a prefix that holds
// all of prefix.
func (c *Controller) cidrsContainingPrefix(prefix netip.Prefix) []*networking.ServiceCIDR {
	return c.cidrsWhere(func(p netip.Prefix) bool { return p.Overlaps(prefix) && p.Bits() <= prefix.Bits() })
}

// cidrsContaining returns the ServiceCIDRs that could have allocated addr.
func (c *Controller) cidrsContaining(addr netip.Addr) []*networking.ServiceCIDR {
	return c.cidrsWhere(func(p netip.Prefix) bool { return prefixContains(p, addr) })
}

// prefixContains reports whether addr lies in prefix and is neither its
// network address nor, for IPv4, its broadcast address: a ServiceCIDR
// never allocates those.
func prefixContains(prefix netip.Prefix, addr netip.Addr) bool {
	if prefix.Masked().Addr() == addr {
		return false
	}
	if addr.Is4() && broadcast(prefix) == addr {
		return false
	}
	return prefix.Contains(addr)
}

// broadcast returns prefix's last address (every host bit set).
func broadcast(prefix netip.Prefix) netip.Addr {
	b := prefix.Masked().Addr().AsSlice()
	hostBits := 8*len(b) - prefix.Bits()
	for i := len(b) - 1; i >= 0 && hostBits > 0; i-- {
		if hostBits >= 8 {
			b[i] = 0xff
			hostBits -= 8
			continue
		}
		b[i] |= byte(0xff) >> (8 - hostBits)
		hostBits = 0
	}
	addr, _ := netip.AddrFromSlice(b)
	return addr
}
