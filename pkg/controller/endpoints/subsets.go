package endpoints

import (
	"bytes"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kcm-dev/kcm/internal/controller/endpointutil"
)

// repackSubsets expands subsets to (address, port) pairs and packs them
// into upstream's canonical layout: one subset per distinct set of
// addresses, holding every port those addresses serve. An address is
// identified by IP and target UID; one not ready on any port is not ready
// on all of them. The result is sorted as upstream sorts it (sortSubsets).
func repackSubsets(subsets []v1.EndpointSubset) []v1.EndpointSubset {
	type addrKey struct {
		ip  string
		uid types.UID
	}
	addrs := map[addrKey]*v1.EndpointAddress{}
	// Per port (by value; -1 stands for "no port"), address → ready.
	byPort := map[portKey]map[*v1.EndpointAddress]bool{}
	var portOrder []portKey
	portOf := map[portKey]v1.EndpointPort{}
	add := func(a *v1.EndpointAddress, port v1.EndpointPort, ready bool) {
		k := addrKey{ip: a.IP}
		if a.TargetRef != nil {
			k.uid = a.TargetRef.UID
		}
		addr := addrs[k]
		if addr == nil {
			c := *a
			addr = &c
			addrs[k] = addr
		}
		pk := keyOfPort(port)
		set := byPort[pk]
		if set == nil {
			set = map[*v1.EndpointAddress]bool{}
			byPort[pk] = set
			portOrder = append(portOrder, pk)
			portOf[pk] = port
		}
		if wasReady, seen := set[addr]; !seen || wasReady {
			set[addr] = ready
		}
	}
	for i := range subsets {
		ss := &subsets[i]
		ports := ss.Ports
		if len(ports) == 0 {
			ports = []v1.EndpointPort{{Port: -1}}
		}
		for _, port := range ports {
			for j := range ss.Addresses {
				add(&ss.Addresses[j], port, true)
			}
			for j := range ss.NotReadyAddresses {
				add(&ss.NotReadyAddresses[j], port, false)
			}
		}
	}

	// Ports that share their set of addresses (and readiness) share a
	// subset.
	type group struct {
		set   map[*v1.EndpointAddress]bool
		ports []v1.EndpointPort
	}
	groups := map[string]*group{}
	var order []string
	for _, pk := range portOrder {
		set := byPort[pk]
		k := setKey(set)
		g := groups[k]
		if g == nil {
			g = &group{set: set}
			groups[k] = g
			order = append(order, k)
		}
		if p := portOf[pk]; p.Port > 0 {
			g.ports = append(g.ports, p)
		}
	}
	out := make([]v1.EndpointSubset, 0, len(order))
	for _, k := range order {
		g := groups[k]
		var ready, notReady []v1.EndpointAddress
		for a, r := range g.set {
			if r {
				ready = append(ready, *a)
			} else {
				notReady = append(notReady, *a)
			}
		}
		out = append(out, v1.EndpointSubset{Addresses: ready, NotReadyAddresses: notReady, Ports: g.ports})
	}
	return sortSubsets(out)
}

// portKey is an EndpointPort by value.
type portKey struct {
	name, protocol, appProtocol string
	hasAppProtocol              bool
	port                        int32
}

func keyOfPort(p v1.EndpointPort) portKey {
	k := portKey{name: p.Name, protocol: string(p.Protocol), port: p.Port}
	if p.AppProtocol != nil {
		k.hasAppProtocol, k.appProtocol = true, *p.AppProtocol
	}
	return k
}

// setKey identifies a set of addresses with their readiness.
func setKey(set map[*v1.EndpointAddress]bool) string {
	parts := make([]string, 0, len(set))
	for a, ready := range set {
		uid := ""
		if a.TargetRef != nil {
			uid = string(a.TargetRef.UID)
		}
		r := "0"
		if ready {
			r = "1"
		}
		parts = append(parts, a.IP+"\x00"+uid+"\x00"+r)
	}
	sort.Strings(parts)
	return strings.Join(parts, "\x01")
}

// sortSubsets sorts, as upstream does, each subset's addresses by IP and
// target UID, its ports by their deep hash, and the subsets by theirs.
func sortSubsets(subsets []v1.EndpointSubset) []v1.EndpointSubset {
	for i := range subsets {
		ss := &subsets[i]
		sort.Slice(ss.Addresses, func(a, b int) bool { return lessAddress(&ss.Addresses[a], &ss.Addresses[b]) })
		sort.Slice(ss.NotReadyAddresses, func(a, b int) bool {
			return lessAddress(&ss.NotReadyAddresses[a], &ss.NotReadyAddresses[b])
		})
		ss.Ports = sortedByHash(ss.Ports)
	}
	return sortedByHash(subsets)
}

// lessAddress orders addresses by IP (bytewise), then by target UID, an
// address without target first.
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

// sortedByHash returns items ordered by their deep hash, each hashed once.
func sortedByHash[T any](items []T) []T {
	if len(items) < 2 {
		return items
	}
	hashes := make([]string, len(items))
	idx := make([]int, len(items))
	for i := range items {
		hashes[i] = endpointutil.DeepHashString(items[i])
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return hashes[idx[a]] < hashes[idx[b]] })
	out := make([]T, len(items))
	for i, j := range idx {
		out[i] = items[j]
	}
	return out
}
