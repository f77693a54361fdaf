package endpointslice

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestSlicesSplitAtMax(t *testing.T) {
	h := newHarness(t, 100)
	h.add(service("web"), node("n1", "", "4"))
	addObjs(h, pods(250, "web", "n1"))
	w := h.mustSync("web")
	if got := verbs(w); !reflect.DeepEqual(got, map[string]int{"create": 3}) {
		t.Fatalf("writes %v", got)
	}
	slices := h.apiSlices()
	if got := sizes(slices); !reflect.DeepEqual(got, []int{100, 100, 50}) {
		t.Errorf("sizes %v", got)
	}
	for _, s := range slices {
		if !strings.HasPrefix(s.Name, "web-") || s.GenerateName != "web-" {
			t.Errorf("name %q generateName %q", s.Name, s.GenerateName)
		}
	}
	if w := h.mustSync("web"); len(w) != 0 {
		t.Errorf("second sync wrote %v", verbs(w))
	}
}

func TestFillsExistingBeforeCreating(t *testing.T) {
	h := newHarness(t, 100)
	h.add(service("web"), node("n1", "", "4"))
	all := pods(180, "web", "n1")
	addObjs(h, all[:150])
	h.mustSync("web") // 100 + 50
	addObjs(h, all[150:])
	w := h.mustSync("web")
	if got := verbs(w); !reflect.DeepEqual(got, map[string]int{"update": 1}) {
		t.Fatalf("30 more pods: writes %v, want one update of the slice with room", got)
	}
	if got := sizes(h.apiSlices()); !reflect.DeepEqual(got, []int{100, 80}) {
		t.Errorf("sizes %v", got)
	}
}

func TestCreatesWhenNoSliceFits(t *testing.T) {
	h := newHarness(t, 100)
	h.add(service("web"), node("n1", "", "4"))
	all := pods(260, "web", "n1")
	addObjs(h, all[:190])
	h.mustSync("web") // 100 + 90
	addObjs(h, all[190:])
	w := h.mustSync("web")
	// 70 more: the 90-slice cannot take them, so a new one is created
	// rather than rewriting two slices.
	if got := verbs(w); !reflect.DeepEqual(got, map[string]int{"create": 1}) {
		t.Fatalf("writes %v", got)
	}
	if got := sizes(h.apiSlices()); !reflect.DeepEqual(got, []int{100, 90, 70}) {
		t.Errorf("sizes %v", got)
	}
}

func TestChangedSlicesFilledFirst(t *testing.T) {
	h := newHarness(t, 100)
	h.add(service("web"), node("n1", "", "4"))
	all := pods(210, "web", "n1")
	addObjs(h, all[:150])
	h.mustSync("web") // 100 + 50
	// One pod of the full slice goes; 60 arrive. The full slice, written
	// anyway, takes one first; the other 59 do not fit into the 50-slice,
	// which stays unchanged, and go into a new one.
	full := h.apiSlices()[0]
	if len(full.Endpoints) != 100 {
		full = h.apiSlices()[1]
	}
	h.deletePod(full.Endpoints[0].TargetRef.Name)
	addObjs(h, all[150:])
	w := h.mustSync("web")
	if got := verbs(w); !reflect.DeepEqual(got, map[string]int{"update": 1, "create": 1}) {
		t.Fatalf("writes %v", got)
	}
	if got := sizes(h.apiSlices()); !reflect.DeepEqual(got, []int{100, 59, 50}) {
		t.Errorf("sizes %v", got)
	}
	if n := len(endpointNames(h.apiSlices()...)); n != 209 {
		t.Errorf("%d endpoints, want 209", n)
	}
}

func TestOnlyTheChangedSliceIsWritten(t *testing.T) {
	h := newHarness(t, 100)
	h.add(service("web"), node("n1", "", "4"))
	all := pods(250, "web", "n1")
	addObjs(h, all)
	h.mustSync("web")
	h.add(notReady(pod(all[7].Name, "web", "n1", all[7].Status.PodIP)))
	w := h.mustSync("web")
	if got := verbs(w); !reflect.DeepEqual(got, map[string]int{"update": 1}) {
		t.Fatalf("writes %v", got)
	}
	for _, s := range h.apiSlices() {
		for _, ep := range s.Endpoints {
			if ep.TargetRef.Name == all[7].Name && (*ep.Conditions.Ready || *ep.Conditions.Serving) {
				t.Errorf("not-ready pod: %+v", ep.Conditions)
			}
		}
	}
}

func TestEmptiedSliceReusedForNewEndpoints(t *testing.T) {
	h := newHarness(t, 2)
	h.add(service("web"), node("n1", "", "4"))
	all := pods(6, "web", "n1")
	addObjs(h, all[:4])
	h.mustSync("web") // two slices of two
	for _, p := range all[:2] {
		h.deletePod(p.Name)
	}
	addObjs(h, all[4:])
	w := h.mustSync("web")
	// Either the emptied slice is refilled, or it is deleted and a new
	// one created: upstream turns that create into an update.
	if got := verbs(w); got["create"] != 0 || got["delete"] != 0 {
		t.Fatalf("writes %v, want updates only", got)
	}
	if got := endpointNames(h.apiSlices()...); !reflect.DeepEqual(got, []string{"web-002", "web-003", "web-004", "web-005"}) {
		t.Errorf("endpoints %v", got)
	}
}

func TestPlaceholderSlice(t *testing.T) {
	h := newHarness(t, 100)
	h.add(service("web"))
	w := h.mustSync("web")
	slices := h.apiSlices()
	if got := verbs(w); !reflect.DeepEqual(got, map[string]int{"create": 1}) || len(slices) != 1 {
		t.Fatalf("writes %v, %d slices", got, len(slices))
	}
	if len(slices[0].Endpoints) != 0 || len(slices[0].Ports) != 0 || slices[0].AddressType != discovery.AddressTypeIPv4 {
		t.Errorf("placeholder %+v", slices[0])
	}
	if w := h.mustSync("web"); len(w) != 0 {
		t.Errorf("placeholder rewritten: %v", verbs(w))
	}
	// Pods arrive: the placeholder becomes the slice (an update, not a
	// delete and a create).
	h.add(node("n1", "", "4"), pod("a", "web", "n1", "10.0.0.1"))
	if got := verbs(h.mustSync("web")); !reflect.DeepEqual(got, map[string]int{"update": 1}) {
		t.Errorf("first pod: writes %v", got)
	}
	h.deletePod("a")
	if got := verbs(h.mustSync("web")); !reflect.DeepEqual(got, map[string]int{"update": 1}) {
		t.Errorf("last pod gone: writes %v", got)
	}
	if s := h.apiSlices(); len(s) != 1 || len(s[0].Endpoints) != 0 || len(s[0].Ports) != 0 {
		t.Errorf("back to a placeholder: %+v", s)
	}
}

func TestNamedPortsGroupPods(t *testing.T) {
	h := newHarness(t, 100)
	h.add(service("web", func(s *v1.Service) {
		s.Spec.Ports[0].TargetPort = intstr.FromString("http")
	}), node("n1", "", "4"))
	h.add(withPort(pod("v1-a", "web", "n1", "10.0.0.1"), "http", 8080),
		withPort(pod("v1-b", "web", "n1", "10.0.0.2"), "http", 8080),
		withPort(pod("v2-a", "web", "n1", "10.0.0.3"), "http", 9090),
		pod("noport", "web", "n1", "10.0.0.4"))
	h.mustSync("web")
	byPort := map[string][]string{}
	for _, s := range h.apiSlices() {
		key := "none"
		if len(s.Ports) == 1 {
			key = fmt.Sprint(*s.Ports[0].Port)
		}
		byPort[key] = endpointNames(s)
	}
	want := map[string][]string{"8080": {"v1-a", "v1-b"}, "9090": {"v2-a"}, "none": {"noport"}}
	if !reflect.DeepEqual(byPort, want) {
		t.Errorf("slices by port %v, want %v", byPort, want)
	}
}

func TestPodsWithoutIPOrTerminal(t *testing.T) {
	h := newHarness(t, 100)
	h.add(service("web"), node("n1", "", "4"))
	done := pod("done", "web", "n1", "10.0.0.3")
	done.Status.Phase = v1.PodSucceeded
	h.add(pod("noip", "web", "n1"), pod("ok", "web", "n1", "10.0.0.1"), done)
	h.mustSync("web")
	if got := endpointNames(h.apiSlices()...); !reflect.DeepEqual(got, []string{"ok"}) {
		t.Errorf("endpoints %v", got)
	}
}
