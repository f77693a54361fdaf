package endpointslicemirroring

import (
	"bytes"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// subset is one canonical Endpoints subset: a set of ports and the
// addresses that offer exactly those ports, each list sorted.
type subset struct {
	ports           []v1.EndpointPort
	ready, notReady []v1.EndpointAddress
}

// addressID identifies an address across subsets: its IP and the uid of
// its target (two pods may share a node's IP).
type addressID struct {
	ip  string
	uid types.UID
}

// noPort stands for "no ports" so that a subset without ports keeps its
// addresses.
var noPort = v1.EndpointPort{Port: -1}

// repack brings subsets into the canonical form upstream mirrors from
// (its RepackSubsets): each address offering the same set of ports lands in
// one subset; an address listed both ready and not ready for a port is not
// ready; addresses are sorted by IP (as bytes), then target uid. The order
// of the subsets themselves is left open: mirroring does not depend on it.
func repack(in []v1.EndpointSubset) []subset {
	addrs := map[addressID]*v1.EndpointAddress{}
	// Ports are compared as values, as upstream compares them: an
	// appProtocol pointer makes two equal-looking ports different.
	byPort := map[v1.EndpointPort]map[addressID]bool{}
	add := func(port v1.EndpointPort, a *v1.EndpointAddress, ready bool) {
		id := addressID{ip: a.IP}
		if a.TargetRef != nil {
			id.uid = a.TargetRef.UID
		}
		if _, ok := addrs[id]; !ok {
			addrs[id] = a
		}
		set := byPort[port]
		if set == nil {
			set = map[addressID]bool{}
			byPort[port] = set
		}
		if wasReady, seen := set[id]; !seen || wasReady {
			set[id] = ready
		}
	}
	for i := range in {
		ports := in[i].Ports
		if len(ports) == 0 {
			ports = []v1.EndpointPort{noPort}
		}
		for _, port := range ports {
			for j := range in[i].Addresses {
				add(port, &in[i].Addresses[j], true)
			}
			for j := range in[i].NotReadyAddresses {
				add(port, &in[i].NotReadyAddresses[j], false)
			}
		}
	}
	return groupByAddressSet(byPort, addrs)
}

// groupByAddressSet turns port → addresses into address set → ports.
func groupByAddressSet(byPort map[v1.EndpointPort]map[addressID]bool, addrs map[addressID]*v1.EndpointAddress) []subset {
	groups := map[string]*subset{}
	for port, set := range byPort {
		key := addressSetKey(set)
		g, ok := groups[key]
		if !ok {
			g = &subset{}
			for id, ready := range set {
				if ready {
					g.ready = append(g.ready, *addrs[id])
				} else {
					g.notReady = append(g.notReady, *addrs[id])
				}
			}
			sortAddresses(g.ready)
			sortAddresses(g.notReady)
			groups[key] = g
		}
		if port.Port > 0 {
			g.ports = append(g.ports, port)
		}
	}
	out := make([]subset, 0, len(groups))
	for _, g := range groups {
		out = append(out, *g)
	}
	return out
}

// addressSetKey is a canonical string of a set of addresses with their
// readiness.
func addressSetKey(set map[addressID]bool) string {
	parts := make([]string, 0, len(set))
	for id, ready := range set {
		r := "0"
		if ready {
			r = "1"
		}
		parts = append(parts, id.ip+"\x00"+string(id.uid)+"\x00"+r)
	}
	sort.Strings(parts)
	return strings.Join(parts, "\x01")
}

// sortAddresses orders addresses by IP (bytewise), then by target uid, an
// address without target first.
func sortAddresses(a []v1.EndpointAddress) {
	sort.Slice(a, func(i, j int) bool { return lessAddress(&a[i], &a[j]) })
}

func lessAddress(a, b *v1.EndpointAddress) bool {
	if c := bytes.Compare([]byte(a.IP), []byte(b.IP)); c != 0 {
		return c < 0
	}
	if b.TargetRef == nil {
		return false
	}
	if a.TargetRef == nil {
		return true
	}
	return a.TargetRef.UID < b.TargetRef.UID
}
