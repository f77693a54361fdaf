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

// A generateName longer than 58 characters is cut by the apiserver before
// the suffix: the name still counts as generated, whether it carries its
// generateName or only its owner's name.
func TestNormalizeCutGenerateName(t *testing.T) {
	owner := strings.Repeat("r", 70)
	pod := func(name, generateName string) string {
		return `{apiVersion: v1, kind: Pod, metadata: {name: ` + name + `, generateName: "` + generateName + `", namespace: ns,
  creationTimestamp: "2026-01-01T00:00:01Z",
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: ` + owner + `, uid: u1, controller: true}]}}`
	}
	base := owner[:58]
	for _, gn := range []string{owner + "-", ""} {
		got := normalize(t, nil, &Capture{Objects: objs(t, pod(base+"x7k2p", gn))})
		if strings.Contains(got, "x7k2p") || !strings.Contains(got, base+"<1>") {
			t.Errorf("generateName %q: name not normalised:\n%s", gn, got)
		}
	}
}
