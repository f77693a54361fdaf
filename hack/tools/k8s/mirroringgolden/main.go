// Command mirroringgolden prints the order in which upstream's
// EndpointSlice code (k8s.io/endpointslice/util.NewPortMapKey, as the
// endpointslice-mirroring-controller calls it) sorts the ports of a slice,
// and the port-set key it computes, for the fixed port sets that
// pkg/controller/endpointslicemirroring's golden test uses, so that kcm's
// order (visible in every mirrored slice) can be checked against upstream's.
//
// The port sets are
// pkg/controller/endpointslicemirroring/testdata/golden-ports.json, which
// the test reads too. Usage (from hack/tools/k8s; or make golden):
//
//	go run ./mirroringgolden [-root ../../..]
package main

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	endpointsliceutil "k8s.io/endpointslice/util"

	"github.com/kcm-dev/kcm/hack/tools/k8s/internal/golden"
)

func portSets() map[string][]v1.EndpointPort {
	var sets map[string][]v1.EndpointPort
	golden.Read("pkg/controller/endpointslicemirroring/testdata/golden-ports.json", &sets)
	return sets
}

// slicePorts is upstream's epPortsToEpsPorts.
func slicePorts(ports []v1.EndpointPort) []discovery.EndpointPort {
	out := []discovery.EndpointPort{}
	for _, p := range ports {
		p := p.DeepCopy()
		out = append(out, discovery.EndpointPort{Name: &p.Name, Port: &p.Port, Protocol: &p.Protocol, AppProtocol: p.AppProtocol})
	}
	return out
}

func main() {
	for _, name := range []string{"web", "unnamed", "mixed", "none"} {
		ports := slicePorts(portSets()[name])
		key := endpointsliceutil.NewPortMapKey(ports)
		order := make([]string, len(ports))
		for i, p := range ports {
			order[i] = fmt.Sprintf("%s/%d/%s", *p.Name, *p.Port, *p.Protocol)
		}
		fmt.Printf("%q: {order: %q, key: %q},\n", name, strings.Join(order, " "), key)
	}
}
