package endpointslicemirroring

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// render prints canonical subsets sorted, one a line:
// "ports | ready | not ready".
func render(subsets []subset) string {
	var lines []string
	for _, s := range subsets {
		var ports, ready, notReady []string
		for _, p := range s.ports {
			ports = append(ports, fmt.Sprintf("%s:%d", p.Name, p.Port))
		}
		sort.Strings(ports)
		for _, a := range s.ready {
			ready = append(ready, a.IP)
		}
		for _, a := range s.notReady {
			notReady = append(notReady, a.IP)
		}
		lines = append(lines, strings.Join(ports, ",")+" | "+strings.Join(ready, ",")+" | "+strings.Join(notReady, ","))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func TestRepack(t *testing.T) {
	tests := []struct {
		name string
		in   []v1.EndpointSubset
		want string
	}{
		{
			name: "subsets of the same ports merge; addresses sorted bytewise",
			in: []v1.EndpointSubset{
				{Addresses: addrs("10.0.0.9"), Ports: []v1.EndpointPort{port("a", 80)}},
				{Addresses: addrs("10.0.0.10", "10.0.0.1"), Ports: []v1.EndpointPort{port("a", 80)}},
			},
			want: "a:80 | 10.0.0.1,10.0.0.10,10.0.0.9 | ",
		},
		{
			name: "not ready wins over ready",
			in: []v1.EndpointSubset{
				{Addresses: addrs("10.0.0.1", "10.0.0.2"), Ports: []v1.EndpointPort{port("a", 80)}},
				{NotReadyAddresses: addrs("10.0.0.1"), Ports: []v1.EndpointPort{port("a", 80)}},
			},
			want: "a:80 | 10.0.0.2 | 10.0.0.1",
		},
		{
			name: "ports offered by the same addresses share a subset",
			in: []v1.EndpointSubset{
				{Addresses: addrs("10.0.0.1"), Ports: []v1.EndpointPort{port("a", 80), port("b", 81)}},
				{Addresses: addrs("10.0.0.1", "10.0.0.2"), Ports: []v1.EndpointPort{port("c", 82)}},
			},
			want: "a:80,b:81 | 10.0.0.1 | \nc:82 | 10.0.0.1,10.0.0.2 | ",
		},
		{
			name: "addresses without ports are kept",
			in:   []v1.EndpointSubset{{Addresses: addrs("10.0.0.1")}},
			want: " | 10.0.0.1 | ",
		},
		{
			name: "the same IP with two targets is two addresses",
			in: []v1.EndpointSubset{{Addresses: []v1.EndpointAddress{
				{IP: "10.0.0.1", TargetRef: &v1.ObjectReference{UID: "b"}},
				{IP: "10.0.0.1", TargetRef: &v1.ObjectReference{UID: "a"}},
				{IP: "10.0.0.1"},
			}, Ports: []v1.EndpointPort{port("a", 80)}}},
			want: "a:80 | 10.0.0.1,10.0.0.1,10.0.0.1 | ",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := render(repack(tc.in)); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestRepackOrdersTargets(t *testing.T) {
	got := repack([]v1.EndpointSubset{{Addresses: []v1.EndpointAddress{
		{IP: "10.0.0.1", TargetRef: &v1.ObjectReference{UID: "b"}},
		{IP: "10.0.0.1", TargetRef: &v1.ObjectReference{UID: "a"}},
		{IP: "10.0.0.1"},
	}}})
	var order []string
	for _, a := range got[0].ready {
		uid := "-"
		if a.TargetRef != nil {
			uid = string(a.TargetRef.UID)
		}
		order = append(order, uid)
	}
	if s := strings.Join(order, ","); s != "-,a,b" {
		t.Errorf("order %s, want -,a,b", s)
	}
}
