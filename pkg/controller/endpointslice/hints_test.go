package endpointslice

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"
)

// zonedHarness has nodes n-a, n-b, n-c in zones a, b, c with the given
// CPUs, and the topology synced.
func zonedHarness(t *testing.T, cpus ...string) *harness {
	h := newHarness(t, 100)
	for i, cpu := range cpus {
		z := string(rune('a' + i))
		h.add(node("n-"+z, z, cpu))
	}
	if err := h.c.syncTopology(h.ctx, topologyKey); err != nil {
		t.Fatal(err)
	}
	return h
}

func hintsOf(slices []*discovery.EndpointSlice) map[string]string {
	out := map[string]string{}
	for _, s := range slices {
		for _, ep := range s.Endpoints {
			h := "-"
			if ep.Hints != nil {
				var parts []string
				for _, z := range ep.Hints.ForZones {
					parts = append(parts, "zone:"+z.Name)
				}
				for _, n := range ep.Hints.ForNodes {
					parts = append(parts, "node:"+n.Name)
				}
				h = strings.Join(parts, ",")
			}
			out[ep.TargetRef.Name] = h
		}
	}
	return out
}

func auto(s *v1.Service) { s.Annotations = map[string]string{v1.AnnotationTopologyMode: "Auto"} }

func TestTopologyAutoBalancedZones(t *testing.T) {
	h := zonedHarness(t, "4", "4", "4")
	h.add(service("web", auto))
	for i, z := range []string{"a", "b", "c", "a", "b", "c"} {
		h.add(pod(fmt.Sprintf("p%d", i), "web", "n-"+z, fmt.Sprintf("10.0.0.%d", i+1)))
	}
	h.mustSync("web")
	for name, hint := range hintsOf(h.apiSlices()) {
		i := int(name[1] - '0')
		if want := "zone:" + []string{"a", "b", "c"}[i%3]; hint != want {
			t.Errorf("%s: hint %s, want %s", name, hint, want)
		}
	}
	if ev := h.events(); !reflect.DeepEqual(ev, []string{"Normal TopologyAwareHintsEnabled Topology Aware Hints has been enabled, addressType: IPv4"}) {
		t.Errorf("events %q", ev)
	}
	if w := h.mustSync("web"); len(w) != 0 || len(h.events()) != 0 {
		t.Errorf("second sync: writes %v", verbs(w))
	}
	// The annotation goes: hints are removed, with an Event.
	h.add(service("web"))
	h.mustSync("web")
	for name, hint := range hintsOf(h.apiSlices()) {
		if hint != "-" {
			t.Errorf("%s: hint %s left", name, hint)
		}
	}
	if ev := h.events(); !reflect.DeepEqual(ev, []string{"Warning TopologyAwareHintsDisabled Topology Aware Hints has been disabled, addressType: IPv4"}) {
		t.Errorf("events %q", ev)
	}
}

func TestTopologyAutoRedistributes(t *testing.T) {
	// Zone a has half the CPU but two endpoints of twelve.
	h := zonedHarness(t, "8", "4", "4")
	h.add(service("web", auto))
	for i, z := range strings.Split("aabbbbbbcccc", "") {
		h.add(pod(fmt.Sprintf("p%02d", i), "web", "n-"+z, fmt.Sprintf("10.0.0.%d", i+1)))
	}
	h.mustSync("web")
	count := map[string]int{}
	for _, hint := range hintsOf(h.apiSlices()) {
		count[hint]++
	}
	// Desired: a 6, b 3, c 3; b gives three, c one.
	if !reflect.DeepEqual(count, map[string]int{"zone:a": 6, "zone:b": 3, "zone:c": 3}) {
		t.Errorf("hints per zone %v", count)
	}
}

func TestTopologyAutoDisabled(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cpus   []string
		zones  []string
		nozone bool
		want   string
	}{
		// Fewer than two zones void the node information.
		{"one zone", []string{"4"}, []string{"a", "a", "a"}, false, "Insufficient Node information: allocatable CPU or zone not specified on one or more nodes, addressType: IPv4"},
		{"too few endpoints", []string{"4", "4", "4"}, []string{"a", "b"}, false, "Insufficient number of endpoints (2 endpoints, 3 zones), addressType: IPv4"},
		{"minimum over threshold", []string{"1", "1", "1"}, []string{"a", "b", "c", "a"}, false, "Unable to allocate minimum required endpoints to each zone without exceeding overload threshold (4 endpoints, 3 zones), addressType: IPv4"},
		{"node without zone", []string{"4", "4"}, []string{"a", "b"}, true, "Insufficient Node information: allocatable CPU or zone not specified on one or more nodes, addressType: IPv4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := zonedHarness(t, tc.cpus...)
			if tc.nozone {
				h.add(node("n-x", "", "4"))
				if err := h.c.syncTopology(h.ctx, topologyKey); err != nil {
					t.Fatal(err)
				}
			}
			h.add(service("web", auto))
			for i, z := range tc.zones {
				h.add(pod(fmt.Sprintf("p%d", i), "web", "n-"+z, fmt.Sprintf("10.0.0.%d", i+1)))
			}
			h.mustSync("web")
			for name, hint := range hintsOf(h.apiSlices()) {
				if hint != "-" {
					t.Errorf("%s: hint %s", name, hint)
				}
			}
			if ev := h.events(); !reflect.DeepEqual(ev, []string{"Warning TopologyAwareHintsDisabled " + tc.want}) {
				t.Errorf("events %q", ev)
			}
		})
	}
}

func TestTopologyOverloadRequeues(t *testing.T) {
	h := zonedHarness(t, "4", "4", "4")
	h.add(service("web", auto))
	for i, z := range []string{"a", "b", "c"} {
		h.add(pod(fmt.Sprintf("p%d", i), "web", "n-"+z, fmt.Sprintf("10.0.0.%d", i+1)))
	}
	h.mustSync("web")
	// Zone a grows: one endpoint per zone no longer fits its share.
	h.add(node("n-a", "a", "40"))
	if err := h.c.syncTopology(h.ctx, topologyKey); err != nil {
		t.Fatal(err)
	}
	if got := h.c.queue.Len(); got != 1 {
		t.Fatalf("queue length %d, want the overloaded Service", got)
	}
}

func TestTrafficDistribution(t *testing.T) {
	for _, tc := range []struct {
		td   string
		want string
	}{
		{v1.ServiceTrafficDistributionPreferClose, "zone:b"},
		{v1.ServiceTrafficDistributionPreferSameZone, "zone:b"},
		{v1.ServiceTrafficDistributionPreferSameNode, "zone:b,node:n-b"},
		{"Bogus", "-"},
	} {
		t.Run(tc.td, func(t *testing.T) {
			h := zonedHarness(t, "4", "4")
			h.add(service("web", func(s *v1.Service) { s.Spec.TrafficDistribution = ptr.To(tc.td) }))
			h.add(pod("ready", "web", "n-b", "10.0.0.1"), notReady(pod("unready", "web", "n-b", "10.0.0.2")))
			h.mustSync("web")
			got := hintsOf(h.apiSlices())
			if got["ready"] != tc.want || got["unready"] != "-" {
				t.Errorf("hints %v, want %s on the ready endpoint only", got, tc.want)
			}
			if len(h.events()) != 0 {
				t.Error("Events for trafficDistribution")
			}
			// Back to none: hints removed.
			h.add(service("web"))
			h.mustSync("web")
			for name, hint := range hintsOf(h.apiSlices()) {
				if hint != "-" {
					t.Errorf("%s: hint %s left", name, hint)
				}
			}
		})
	}
}

func TestAnnotationWinsOverTrafficDistribution(t *testing.T) {
	h := zonedHarness(t, "4", "4")
	h.add(service("web", auto, func(s *v1.Service) {
		s.Spec.TrafficDistribution = ptr.To(v1.ServiceTrafficDistributionPreferSameNode)
	}))
	h.add(pod("a", "web", "n-a", "10.0.0.1"), pod("b", "web", "n-b", "10.0.0.2"))
	h.mustSync("web")
	if got := hintsOf(h.apiSlices()); !reflect.DeepEqual(got, map[string]string{"a": "zone:a", "b": "zone:b"}) {
		t.Errorf("hints %v", got)
	}
}

func TestGivingAndReceiving(t *testing.T) {
	// Upstream's table (topologycache utils_test).
	for _, tc := range []struct {
		allocs                  map[string]allocation
		allocated               zoneCounts
		wantGiving, wantReceive zoneCounts
	}{
		{map[string]allocation{"a": {desired: 5.1}, "b": {desired: 5.1}, "c": {desired: 5.8}}, zoneCounts{"a": 16},
			zoneCounts{"a": 10}, zoneCounts{"b": 5, "c": 5}},
		{map[string]allocation{"a": {desired: 5.0}, "b": {desired: 5.6}, "c": {desired: 5.4}}, zoneCounts{"a": 16},
			zoneCounts{"a": 11}, zoneCounts{"b": 6, "c": 5}},
		{map[string]allocation{"a": {desired: 5.0}, "b": {desired: 5.6}, "c": {desired: 5.4}}, zoneCounts{"b": 8, "c": 8},
			zoneCounts{"b": 2, "c": 3}, zoneCounts{"a": 5}},
		{map[string]allocation{"a": {desired: 5}, "b": {desired: 5}, "c": {desired: 5}}, zoneCounts{"a": -40, "b": 20, "c": 20},
			zoneCounts{"b": 15, "c": 15}, zoneCounts{"a": 30}},
	} {
		g, r := givingAndReceiving(tc.allocs, tc.allocated)
		if !reflect.DeepEqual(g, tc.wantGiving) || !reflect.DeepEqual(r, tc.wantReceive) {
			t.Errorf("%v/%v: giving %v receiving %v", tc.allocs, tc.allocated, g, r)
		}
	}
}

func TestOverloaded(t *testing.T) {
	ratios := map[string]float64{"a": 0.5, "b": 0.5}
	for _, tc := range []struct {
		counts zoneCounts
		want   bool
	}{
		{zoneCounts{}, false},
		{zoneCounts{"a": 5, "b": 5}, false},
		{zoneCounts{"a": 6, "b": 5}, false}, // 5 >= ceil(5.5/1.2)
		{zoneCounts{"a": 6, "b": 4}, true},  // 4 < ceil(5/1.2)
		{zoneCounts{"a": 10}, true},
	} {
		if got := overloaded(tc.counts, ratios); got != tc.want {
			t.Errorf("%v: %v", tc.counts, got)
		}
	}
}
