// Command endpointsgolden prints, as JSON, what upstream's code makes of
// the fixed inputs that the golden tests of pkg/controller/endpoints and
// pkg/controller/endpointslice use, so that kcm's orders (visible in every
// Endpoints object and every slice it creates) can be checked against
// upstream's:
//
//   - "subsets": k8s.io/kubernetes/pkg/api/v1/endpoints.RepackSubsets of
//     per-address, per-port subsets as the endpoints-controller builds them;
//   - "slicePorts": the ports of each port set after
//     k8s.io/endpointslice/util.NewPortMapKey, which sorts them in place
//     (the order of a slice the endpointslice-controller creates).
//
// The inputs are pkg/controller/endpoints/testdata/golden-subsets.json and
// pkg/controller/endpointslice/testdata/golden-ports.json, which the tests
// read too. Usage (from hack/tools/k8s; or make golden):
//
//	go run ./endpointsgolden [-root ../../..]
package main

import (
	"encoding/json"
	"fmt"
	"os"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	endpointsliceutil "k8s.io/endpointslice/util"
	"k8s.io/kubernetes/pkg/api/v1/endpoints"

	"github.com/kcm-dev/kcm/hack/tools/k8s/internal/golden"
)

// subsetsInput returns the subsets of golden-subsets.json, their ports'
// AppProtocols shared as the endpoints-controller shares them: it builds
// every address's port from the Service's port, so equal ports point to
// one string. JSON cannot say so, and RepackSubsets depends on it: it keys
// a map by v1.EndpointPort, pointer included.
func subsetsInput() []v1.EndpointSubset {
	var subsets []v1.EndpointSubset
	golden.Read("pkg/controller/endpoints/testdata/golden-subsets.json", &subsets)
	shared := map[string]*string{}
	for i := range subsets {
		for j := range subsets[i].Ports {
			p := &subsets[i].Ports[j]
			if p.AppProtocol == nil {
				continue
			}
			if s, ok := shared[*p.AppProtocol]; ok {
				p.AppProtocol = s
			} else {
				shared[*p.AppProtocol] = p.AppProtocol
			}
		}
	}
	return subsets
}

func portSets() map[string][]discovery.EndpointPort {
	var sets map[string][]discovery.EndpointPort
	golden.Read("pkg/controller/endpointslice/testdata/golden-ports.json", &sets)
	return sets
}

func main() {
	out := map[string]any{"subsets": endpoints.RepackSubsets(subsetsInput())}
	sorted := map[string][]discovery.EndpointPort{}
	for name, ports := range portSets() {
		endpointsliceutil.NewPortMapKey(ports)
		sorted[name] = ports
	}
	out["slicePorts"] = sorted
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
