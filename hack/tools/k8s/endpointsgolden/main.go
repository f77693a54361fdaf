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
// The inputs must stay identical to goldenSubsetsInput in
// pkg/controller/endpoints/golden_test.go and goldenPortSets in
// pkg/controller/endpointslice/golden_test.go. Usage (from hack/tools/k8s):
//
//	go run ./endpointsgolden
package main

import (
	"encoding/json"
	"fmt"
	"os"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	endpointsliceutil "k8s.io/endpointslice/util"
	"k8s.io/kubernetes/pkg/api/v1/endpoints"
	"k8s.io/utils/ptr"
)

func addr(ip, node, pod, uid string) v1.EndpointAddress {
	return v1.EndpointAddress{IP: ip, NodeName: ptr.To(node), TargetRef: &v1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: pod, UID: types.UID(uid)}}
}

func subsetsInput() []v1.EndpointSubset {
	h2c := ptr.To("kubernetes.io/h2c")
	http := v1.EndpointPort{Name: "http", Port: 8080, Protocol: v1.ProtocolTCP}
	https := v1.EndpointPort{Name: "https", Port: 8443, Protocol: v1.ProtocolTCP, AppProtocol: h2c}
	dns := v1.EndpointPort{Name: "dns", Port: 53, Protocol: v1.ProtocolUDP}
	a := addr("10.0.0.3", "n1", "a", "uid-a")
	b := addr("10.0.0.1", "n2", "b", "uid-b")
	c := addr("10.0.0.2", "n1", "c", "uid-c")
	d := addr("10.0.0.10", "n3", "d", "uid-d")
	d.Hostname = "d"
	var out []v1.EndpointSubset
	ready := func(x v1.EndpointAddress, p v1.EndpointPort) {
		out = append(out, v1.EndpointSubset{Addresses: []v1.EndpointAddress{x}, Ports: []v1.EndpointPort{p}})
	}
	notReady := func(x v1.EndpointAddress, p v1.EndpointPort) {
		out = append(out, v1.EndpointSubset{NotReadyAddresses: []v1.EndpointAddress{x}, Ports: []v1.EndpointPort{p}})
	}
	for _, p := range []v1.EndpointPort{http, https, dns} {
		ready(a, p)
		ready(b, p)
		notReady(c, p)
	}
	// d serves only http (its named https/dns ports do not resolve).
	ready(d, http)
	return out
}

func portSets() map[string][]discovery.EndpointPort {
	p := func(name string, port int32, proto v1.Protocol, app *string) discovery.EndpointPort {
		return discovery.EndpointPort{Name: ptr.To(name), Port: ptr.To(port), Protocol: ptr.To(proto), AppProtocol: app}
	}
	return map[string][]discovery.EndpointPort{
		"web": {p("http", 80, v1.ProtocolTCP, nil), p("https", 443, v1.ProtocolTCP, nil), p("dns", 53, v1.ProtocolUDP, nil), p("metrics", 9090, v1.ProtocolTCP, nil)},
		"app": {p("a", 8080, v1.ProtocolTCP, ptr.To("h2c")), p("", 80, v1.ProtocolSCTP, nil), p("b", 81, v1.ProtocolUDP, nil)},
	}
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
