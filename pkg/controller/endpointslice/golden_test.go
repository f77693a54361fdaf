package endpointslice

import (
	"encoding/json"
	"testing"

	discovery "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/internal/testutil/golden"
)

// goldenPortSets are the port sets of testdata/golden-ports.json, which
// hack/tools/k8s/endpointsgolden reads too; goldenSlicePorts is that
// program's "slicePorts" output: the order upstream leaves in the slices
// it creates.
func goldenPortSets(t *testing.T) map[string][]discovery.EndpointPort {
	return golden.Read[map[string][]discovery.EndpointPort](t, "testdata/golden-ports.json")
}

const goldenSlicePorts = `{"app":[{"appProtocol":"h2c","name":"a","port":8080,"protocol":"TCP"},{"name":"b","port":81,"protocol":"UDP"},{"name":"","port":80,"protocol":"SCTP"}],"web":[{"name":"dns","port":53,"protocol":"UDP"},{"name":"https","port":443,"protocol":"TCP"},{"name":"http","port":80,"protocol":"TCP"},{"name":"metrics","port":9090,"protocol":"TCP"}]}`

func TestPortOrderMatchesUpstream(t *testing.T) {
	got := map[string][]discovery.EndpointPort{}
	for name, ports := range goldenPortSets(t) {
		got[name] = sortPortsByHash(ports)
		// The grouping key does not depend on the order.
		rev := append([]discovery.EndpointPort(nil), ports...)
		for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
			rev[i], rev[j] = rev[j], rev[i]
		}
		if portsKey(rev) != portsKey(ports) {
			t.Errorf("%s: key depends on order", name)
		}
	}
	var want, have any
	b, _ := json.Marshal(got)
	if err := json.Unmarshal(b, &have); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(goldenSlicePorts), &want); err != nil {
		t.Fatal(err)
	}
	wb, _ := json.Marshal(want)
	hb, _ := json.Marshal(have)
	if string(wb) != string(hb) {
		t.Errorf("port order\n got %s\nwant %s", hb, wb)
	}
}

func TestPortsKeyDistinguishesNilAndEmpty(t *testing.T) {
	a := []discovery.EndpointPort{{Name: ptr.To(""), Port: ptr.To(int32(80))}}
	b := []discovery.EndpointPort{{Port: ptr.To(int32(80))}}
	if portsKey(a) == portsKey(b) {
		t.Error("a nil name and an empty one share a key (upstream's hash tells them apart)")
	}
	if portsKey(nil) != portsKey([]discovery.EndpointPort{}) {
		t.Error("nil and empty port lists differ")
	}
}

func TestAllocationsBeforeNodesKnown(t *testing.T) {
	_, ev := newTopologyCache().allocations(10)
	if ev == nil || ev.message != msgNodesReadyInOneZoneOnly {
		t.Errorf("event %+v", ev)
	}
}
