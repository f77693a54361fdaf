package parity

import (
	"strings"
	"testing"
)

// A slice updated without generateName (as the mirroring controller's
// updates are) is still recognised as generated from its owner's name.
func TestNormalizeGenerateNameCleared(t *testing.T) {
	slice := func(name, generateName string) string {
		return `{apiVersion: discovery.k8s.io/v1, kind: EndpointSlice, metadata: {name: ` + name + `, generateName: "` + generateName + `", namespace: ns,
  creationTimestamp: "2026-01-01T00:00:01Z",
  ownerReferences: [{apiVersion: v1, kind: Endpoints, name: custom, uid: u1, controller: true}]}, addressType: IPv4}`
	}
	one := normalize(t, nil, &Capture{Objects: objs(t, slice("custom-x7k2p", ""))})
	two := normalize(t, nil, &Capture{Objects: objs(t, slice("custom-bq5zz", "custom-"))})
	if !strings.Contains(one, "--- # EndpointSlice ns/custom-<1>") {
		t.Errorf("name not normalised:\n%s", one)
	}
	if strings.Contains(two, "bq5zz") {
		t.Errorf("second not normalised:\n%s", two)
	}
	// Not an owner's name: left alone.
	other := normalize(t, nil, &Capture{Objects: objs(t, slice("other-x7k2p", ""))})
	if !strings.Contains(other, "ns/other-x7k2p") {
		t.Errorf("unowned name normalised:\n%s", other)
	}
}
