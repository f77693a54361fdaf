package endpointslicemirroring

import (
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"

	"github.com/kcm-dev/kcm/internal/testutil/golden"
)

// goldenPortSets are the port sets of testdata/golden-ports.json, which
// hack/tools/k8s/mirroringgolden reads too, printing upstream's values
// below.
func goldenPortSets(t *testing.T) map[string][]v1.EndpointPort {
	return golden.Read[map[string][]v1.EndpointPort](t, "testdata/golden-ports.json")
}

// TestPortOrderGolden: ports are written in upstream's order, and port
// sets keyed as upstream keys them (make golden).
func TestPortOrderGolden(t *testing.T) {
	upstream := map[string]struct{ order, key string }{
		"web":     {order: "dns/53/UDP https/443/TCP http/80/TCP metrics/9090/TCP", key: "abd91580010bb7ab18d2e70488cdd2f9"},
		"unnamed": {order: "/80/TCP", key: "7069dc359c91d7ceee7e7fb1b1f45657"},
		"mixed":   {order: "c/8080/TCP a/80/UDP b/81/SCTP a/80/TCP", key: "b5b579eddcee6816c789e1dc7fd59f7f"},
		"none":    {order: "", key: "b823fa277840572f948b7ebdb09f7a1d"},
	}
	for name, want := range upstream {
		ports := slicePorts(goldenPortSets(t)[name])
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
