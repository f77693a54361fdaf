package parity

import (
	"strings"
	"testing"
)

// Two upstream runs split the same endpoints differently; the normalised
// texts are equal.
func TestManagedSlicesMerged(t *testing.T) {
	slice := func(name, eps string) string {
		return `{apiVersion: discovery.k8s.io/v1, kind: EndpointSlice, metadata: {name: ` + name + `, generateName: web-, namespace: ns,
  labels: {kubernetes.io/service-name: web, endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io}},
  addressType: IPv4, ports: [{name: http, port: 8080, protocol: TCP}], endpoints: [` + eps + `]}`
	}
	a := `{addresses: [10.0.0.1], conditions: {ready: true}}`
	b := `{addresses: [10.0.0.2], conditions: {ready: false}}`
	c := `{addresses: [10.0.0.3], conditions: {ready: true}}`
	foreign := `{apiVersion: discovery.k8s.io/v1, kind: EndpointSlice, metadata: {name: web-x, namespace: ns,
  labels: {kubernetes.io/service-name: web, endpointslice.kubernetes.io/managed-by: someone}}, addressType: IPv4}`
	one := normalize(t, nil, &Capture{Objects: objs(t, slice("web-abcde", a+","+b), slice("web-fghjk", c), foreign)})
	two := normalize(t, nil, &Capture{Objects: objs(t, slice("web-zzzzz", c+","+b+","+a), foreign)})
	if one != two {
		t.Errorf("differ:\n%s\n---\n%s", one, two)
	}
	for _, want := range []string{"--- # EndpointSlice ns/web-merged-ipv4-8080", "--- # EndpointSlice ns/web-x"} {
		if !strings.Contains(one, want) {
			t.Errorf("missing %q in\n%s", want, one)
		}
	}
}

func TestEndpointsSubsetsSorted(t *testing.T) {
	ep := func(subsets string) string {
		return `{apiVersion: v1, kind: Endpoints, metadata: {name: web, namespace: ns}, subsets: ` + subsets + `}`
	}
	one := normalize(t, nil, &Capture{Objects: objs(t, ep(`[{addresses: [{ip: 10.0.0.9, targetRef: {name: a}}, {ip: 10.0.0.1, targetRef: {name: b}}], ports: [{port: 80}]},
  {addresses: [{ip: 10.0.0.1, targetRef: {name: b}}], ports: [{port: 90}]}]`))})
	two := normalize(t, nil, &Capture{Objects: objs(t, ep(`[{addresses: [{ip: 10.0.0.5, targetRef: {name: b}}], ports: [{port: 90}]},
  {addresses: [{ip: 10.0.0.5, targetRef: {name: b}}, {ip: 10.0.0.2, targetRef: {name: a}}], ports: [{port: 80}]}]`))})
	if one != two {
		t.Errorf("differ:\n%s\n---\n%s", one, two)
	}
}
