package local

import (
	"fmt"
	"net/netip"

	v1 "k8s.io/api/core/v1"
)

// pool is one CIDR of load-balancer addresses. An IPv4 pool of /30 or
// wider leaves out its network and broadcast addresses.
type pool struct {
	prefix      netip.Prefix
	first, last netip.Addr
}

func parsePools(cidrs []string) (map[v1.IPFamily]pool, error) {
	pools := map[v1.IPFamily]pool{}
	for _, s := range cidrs {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("loadBalancerCIDRs: %q: %w", s, err)
		}
		p = p.Masked()
		family := familyOf(p.Addr())
		if _, dup := pools[family]; dup {
			return nil, fmt.Errorf("loadBalancerCIDRs: %q: only one %s pool is allowed", s, family)
		}
		pools[family] = newPool(p)
	}
	return pools, nil
}

func newPool(p netip.Prefix) pool {
	first := p.Addr()
	last := lastAddr(p)
	if first.Is4() && p.Bits() <= 30 {
		first, last = first.Next(), last.Prev()
	}
	return pool{prefix: p, first: first, last: last}
}

// lastAddr returns the highest address of p.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 1 << (7 - i%8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

func (p pool) contains(a netip.Addr) bool {
	return p.prefix.Contains(a) && a.Compare(p.first) >= 0 && a.Compare(p.last) <= 0
}

// firstFree returns the lowest address of p that taken does not hold.
func (p pool) firstFree(taken map[netip.Addr]bool) (netip.Addr, bool) {
	for a := p.first; a.IsValid() && a.Compare(p.last) <= 0; a = a.Next() {
		if !taken[a] {
			return a, true
		}
	}
	return netip.Addr{}, false
}

func familyOf(a netip.Addr) v1.IPFamily {
	if a.Unmap().Is4() {
		return v1.IPv4Protocol
	}
	return v1.IPv6Protocol
}
