package endpointslicemirroring

import (
	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	netutils "k8s.io/utils/net"
)

// group is the wanted content of the slices of one address type and port
// set.
type group struct {
	ports     []discovery.EndpointPort
	endpoints *endpointSet
}

// desired is what the slices of one Endpoints object should hold.
type desired struct {
	groups map[groupKey]*group
	// invalid counts addresses that are no IP; skipped counts every address
	// not mirrored, invalid ones included.
	invalid, skipped int
	// endpoints counts the mirrored addresses.
	endpoints int
}

// addressTypes are the types every subset gets a group for, so that a
// type whose addresses all went loses its slice.
var addressTypes = []discovery.AddressType{discovery.AddressTypeIPv4, discovery.AddressTypeIPv6}

// desiredFor computes the wanted slices of ep: per canonical subset, its
// ready then not-ready addresses in order, at most max of them (invalid
// IPs are skipped and do not count), split by address type.
func desiredFor(ep *v1.Endpoints, max int) *desired {
	d := &desired{groups: map[groupKey]*group{}}
	for _, sub := range repack(ep.Subsets) {
		keys := d.groupsFor(sub.ports)
		added := 0
		for _, list := range []struct {
			addrs []v1.EndpointAddress
			ready bool
		}{{sub.ready, true}, {sub.notReady, false}} {
			for _, a := range list.addrs {
				if added >= max {
					break
				}
				e, addrType, ok := toEndpoint(a, list.ready)
				if !ok {
					d.invalid++
					continue
				}
				d.groups[keys[addrType]].endpoints.insert(e)
				d.endpoints++
				added++
			}
		}
		d.skipped += len(sub.ready) + len(sub.notReady) - added
	}
	return d
}

// groupsFor makes sure both address types have a group for the ports and
// returns their keys.
func (d *desired) groupsFor(ports []v1.EndpointPort) map[discovery.AddressType]groupKey {
	sorted := slicePorts(ports)
	keys := make(map[discovery.AddressType]groupKey, len(addressTypes))
	for _, t := range addressTypes {
		k := newGroupKey(sorted, t)
		keys[t] = k
		if _, ok := d.groups[k]; !ok {
			d.groups[k] = &group{endpoints: newEndpointSet()}
		}
		d.groups[k].ports = sorted
	}
	return keys
}

// toEndpoint converts an address; ok is false when its IP does not parse.
// The IP is written in canonical form (leading zeros and IPv4-in-IPv6
// notation normalised).
func toEndpoint(a v1.EndpointAddress, ready bool) (discovery.Endpoint, discovery.AddressType, bool) {
	ip := netutils.ParseIPSloppy(a.IP)
	if ip == nil {
		return discovery.Endpoint{}, "", false
	}
	addrType := discovery.AddressTypeIPv4
	if ip.To4() == nil {
		addrType = discovery.AddressTypeIPv6
	}
	e := discovery.Endpoint{
		Addresses:  []string{ip.String()},
		Conditions: discovery.EndpointConditions{Ready: &ready},
		TargetRef:  a.TargetRef,
		NodeName:   a.NodeName,
	}
	if a.Hostname != "" {
		hostname := a.Hostname
		e.Hostname = &hostname
	}
	return e, addrType, true
}
