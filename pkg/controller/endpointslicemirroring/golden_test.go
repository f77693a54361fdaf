package endpointslicemirroring

import (
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"
)

// goldenPortSets must stay identical to the port sets of
// hack/tools/k8s/mirroringgolden, which prints upstream's values below.
func goldenPortSets() map[string][]v1.EndpointPort {
	return map[string][]v1.EndpointPort{
		"web": {
			{Name: "http", Port: 80, Protocol: v1.ProtocolTCP},
			{Name: "https", Port: 443, Protocol: v1.ProtocolTCP},
			{Name: "dns", Port: 53, Protocol: v1.ProtocolUDP},
			{Name: "metrics", Port: 9090, Protocol: v1.ProtocolTCP},
		},
		"unnamed": {{Port: 80, Protocol: v1.ProtocolTCP}},
		"mixed": {
			{Name: "a", Port: 80, Protocol: v1.ProtocolTCP, AppProtocol: ptr.To("h2c")},
			{Name: "a", Port: 80, Protocol: v1.ProtocolUDP},
			{Name: "b", Port: 81, Protocol: v1.ProtocolSCTP},
			{Name: "c", Port: 8080, Protocol: v1.ProtocolTCP, AppProtocol: ptr.To("kubernetes.io/h2c")},
		},
		"none": nil,
	}
}

// TestPortOrderGolden: ports are written in upstream's order, and port
// sets keyed as upstream keys them (go run ./mirroringgolden in
// hack/tools/k8s).
func TestPortOrderGolden(t *testing.T) {
	golden := map[string]struct{ order, key string }{
		"web":     {order: "dns/53/UDP https/443/TCP http/80/TCP metrics/9090/TCP", key: "abd91580010bb7ab18d2e70488cdd2f9"},
		"unnamed": {order: "/80/TCP", key: "7069dc359c91d7ceee7e7fb1b1f45657"},
		"mixed":   {order: "c/8080/TCP a/80/UDP b/81/SCTP a/80/TCP", key: "b5b579eddcee6816c789e1dc7fd59f7f"},
		"none":    {order: "", key: "b823fa277840572f948b7ebdb09f7a1d"},
	}
	for name, want := range golden {
		ports := slicePorts(goldenPortSets()[name])
		key := portKey(ports)
		if key != want.key {
			t.Errorf("%s: key %s, upstream's %s", name, key, want.key)
		}
		if got := portOrder(ports); got != want.order {
			t.Errorf("%s: order %q, upstream's %q", name, got, want.order)
		}
	}
}

func portOrder(ports []discovery.EndpointPort) string {
	order := make([]string, len(ports))
	for i, p := range ports {
		order[i] = fmt.Sprintf("%s/%d/%s", *p.Name, *p.Port, *p.Protocol)
	}
	return strings.Join(order, " ")
}
