package endpointslicemirroring

import (
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"

	"github.com/kcm-dev/kcm/internal/controller/endpointutil"
)

// groupKey identifies the slices of one address type and port set:
// "<addressType>-<portKey>".
type groupKey string

// newGroupKey returns the key of ports and addrType. It sorts ports in
// place into upstream's order (see sortPorts), which is the order the
// slice's ports are written in.
func newGroupKey(ports []discovery.EndpointPort, addrType discovery.AddressType) groupKey {
	return groupKey(string(addrType) + "-" + portKey(ports))
}

// addressType is the address type a key was made for.
func (k groupKey) addressType() discovery.AddressType {
	if strings.HasPrefix(string(k), string(discovery.AddressTypeIPv6)) {
		return discovery.AddressTypeIPv6
	}
	return discovery.AddressTypeIPv4
}

// portKey sorts ports and returns the hash of the sorted list, as upstream
// keys port sets (nil and empty alike).
func portKey(ports []discovery.EndpointPort) string {
	sortPorts(ports)
	if ports == nil {
		ports = []discovery.EndpointPort{}
	}
	return endpointutil.DeepHashString(ports)
}

// sortPorts orders ports by the hex FNV-128a hash of each port's dump:
// upstream's order, visible in the slices it writes.
func sortPorts(ports []discovery.EndpointPort) {
	type hashed struct {
		hash string
		port discovery.EndpointPort
	}
	hs := make([]hashed, len(ports))
	for i := range ports {
		hs[i] = hashed{endpointutil.DeepHashString(ports[i]), ports[i]}
	}
	sort.SliceStable(hs, func(a, b int) bool { return hs[a].hash < hs[b].hash })
	for i := range hs {
		ports[i] = hs[i].port
	}
}

// slicePorts converts an Endpoints subset's ports into EndpointSlice ports,
// each field set (an empty name stays an empty, not a missing, name).
func slicePorts(ports []v1.EndpointPort) []discovery.EndpointPort {
	out := make([]discovery.EndpointPort, 0, len(ports))
	for _, p := range ports {
		p := *p.DeepCopy()
		out = append(out, discovery.EndpointPort{
			Name:        &p.Name,
			Port:        &p.Port,
			Protocol:    &p.Protocol,
			AppProtocol: p.AppProtocol,
		})
	}
	return out
}
