package endpointslice

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestStaleCacheIsWaitedFor(t *testing.T) {
	h := newHarness(t, 100)
	h.add(service("web"), node("n1", "", "4"), pod("a", "web", "n1", "10.0.0.1"))
	if _, err := h.sync("web"); err != nil {
		t.Fatal(err)
	}
	// The cache has not seen the created slice: a sync must not create
	// another.
	w, err := h.sync("web")
	if !errors.Is(err, errStaleCache) || len(w) != 0 {
		t.Fatalf("sync on a stale cache: err %v, writes %v", err, verbs(w))
	}
	h.catchUp()
	h.add(pod("b", "web", "n1", "10.0.0.2"))
	if _, err := h.sync("web"); err != nil {
		t.Fatal(err)
	}
	// The cache still shows the slice's older generation.
	if _, err := h.sync("web"); !errors.Is(err, errStaleCache) {
		t.Fatalf("older generation cached: err %v", err)
	}
	h.catchUp()
	if w := h.mustSync("web"); len(w) != 0 {
		t.Errorf("caught up: writes %v", verbs(w))
	}
	if got := endpointNames(h.apiSlices()...); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("endpoints %v", got)
	}
}

func TestSliceMetadata(t *testing.T) {
	h := newHarness(t, 100)
	svc := service("web", func(s *v1.Service) {
		s.Labels = map[string]string{"team": "a", discovery.LabelManagedBy: "someone", discovery.LabelServiceName: "x"}
	})
	h.add(svc, node("n1", "", "4"), pod("a", "web", "n1", "10.0.0.1"))
	h.mustSync("web")
	s := h.apiSlices()[0]
	wantLabels := map[string]string{"team": "a", discovery.LabelManagedBy: ManagedBy, discovery.LabelServiceName: "web"}
	if !reflect.DeepEqual(s.Labels, wantLabels) {
		t.Errorf("labels %v", s.Labels)
	}
	ref := s.OwnerReferences
	if len(ref) != 1 || ref[0].Kind != "Service" || ref[0].APIVersion != "v1" || ref[0].Name != "web" || ref[0].UID != svc.UID ||
		ref[0].Controller == nil || !*ref[0].Controller || ref[0].BlockOwnerDeletion == nil || !*ref[0].BlockOwnerDeletion {
		t.Errorf("ownerReferences %+v", ref)
	}
	if _, ok := s.Annotations[v1.EndpointsLastChangeTriggerTime]; !ok {
		t.Errorf("no trigger time on the first write: %v", s.Annotations)
	}
	ep := s.Endpoints[0]
	if *ep.NodeName != "n1" || ep.Zone != nil || ep.Hostname != nil || ep.TargetRef.Kind != "Pod" || ep.TargetRef.UID != "pod-a" ||
		!*ep.Conditions.Ready || !*ep.Conditions.Serving || *ep.Conditions.Terminating {
		t.Errorf("endpoint %+v", ep)
	}

	// A label change on the Service alone rewrites the slice.
	h.add(service("web", func(s *v1.Service) { s.Labels = map[string]string{"team": "b"} }))
	if got := verbs(h.mustSync("web")); !reflect.DeepEqual(got, map[string]int{"update": 1}) {
		t.Errorf("relabel: writes %v", got)
	}
	if l := h.apiSlices()[0].Labels; l["team"] != "b" {
		t.Errorf("labels after relabel %v", l)
	}
}

func TestHeadlessServiceWithHostnames(t *testing.T) {
	h := newHarness(t, 100)
	h.add(service("db", func(s *v1.Service) {
		s.Spec.ClusterIP = v1.ClusterIPNone
		s.Spec.Ports = nil
	}), node("n1", "zone-a", "4"))
	p := pod("db-0", "db", "n1", "10.0.0.1")
	p.Spec.Hostname, p.Spec.Subdomain = "db-0", "db"
	other := pod("db-1", "db", "n1", "10.0.0.2")
	other.Spec.Hostname, other.Spec.Subdomain = "db-1", "elsewhere"
	h.add(p, other)
	h.mustSync("db")
	s := h.apiSlices()[0]
	if _, ok := s.Labels[v1.IsHeadlessService]; !ok {
		t.Errorf("no headless label: %v", s.Labels)
	}
	if len(s.Ports) != 0 {
		t.Errorf("ports %v", s.Ports)
	}
	for _, ep := range s.Endpoints {
		want := ep.TargetRef.Name == "db-0"
		if (ep.Hostname != nil) != want || (want && *ep.Hostname != "db-0") {
			t.Errorf("%s: hostname %v", ep.TargetRef.Name, ep.Hostname)
		}
		if ep.Zone == nil || *ep.Zone != "zone-a" {
			t.Errorf("%s: zone %v", ep.TargetRef.Name, ep.Zone)
		}
	}
}

func TestDualStack(t *testing.T) {
	h := newHarness(t, 100)
	h.add(service("web", func(s *v1.Service) {
		s.Spec.IPFamilies = []v1.IPFamily{v1.IPv6Protocol, v1.IPv4Protocol}
	}), node("n1", "", "4"))
	h.add(pod("a", "web", "n1", "10.0.0.1", "fd00::0001"), pod("b", "web", "n1", "10.0.0.2"))
	h.mustSync("web")
	got := map[discovery.AddressType][]string{}
	for _, s := range h.apiSlices() {
		for _, ep := range s.Endpoints {
			got[s.AddressType] = append(got[s.AddressType], ep.TargetRef.Name+"="+strings.Join(ep.Addresses, ","))
		}
	}
	want := map[discovery.AddressType][]string{
		discovery.AddressTypeIPv4: {"a=10.0.0.1", "b=10.0.0.2"},
		discovery.AddressTypeIPv6: {"a=fd00::1"}, // canonical form
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// Back to single stack: the IPv6 slice goes.
	h.add(service("web"))
	w := h.mustSync("web")
	if got := verbs(w); !reflect.DeepEqual(got, map[string]int{"delete": 1}) {
		t.Errorf("single stack: writes %v", got)
	}
}

func TestEndpointConditions(t *testing.T) {
	for _, tc := range []struct {
		name                        string
		pod                         *v1.Pod
		publish                     bool
		ready, serving, terminating bool
	}{
		{"ready", pod("p", "web", "n1", "10.0.0.1"), false, true, true, false},
		{"not ready", notReady(pod("p", "web", "n1", "10.0.0.1")), false, false, false, false},
		{"not ready, published", notReady(pod("p", "web", "n1", "10.0.0.1")), true, true, false, false},
		{"terminating, still ready", terminating(pod("p", "web", "n1", "10.0.0.1")), false, false, true, true},
		{"terminating, published", terminating(pod("p", "web", "n1", "10.0.0.1")), true, true, true, true},
		{"terminating, not ready", terminating(notReady(pod("p", "web", "n1", "10.0.0.1"))), false, false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, 100)
			h.add(service("web", func(s *v1.Service) { s.Spec.PublishNotReadyAddresses = tc.publish }), node("n1", "", "4"), tc.pod)
			h.mustSync("web")
			c := h.apiSlices()[0].Endpoints[0].Conditions
			if *c.Ready != tc.ready || *c.Serving != tc.serving || *c.Terminating != tc.terminating {
				t.Errorf("ready %v serving %v terminating %v", *c.Ready, *c.Serving, *c.Terminating)
			}
		})
	}
}

func TestMissingNode(t *testing.T) {
	h := newHarness(t, 100)
	h.add(service("web"), node("n1", "", "4"), pod("a", "web", "n1", "10.0.0.1"), pod("b", "web", "gone", "10.0.0.2"))
	_, err := h.sync("web")
	if err == nil || !strings.Contains(err.Error(), "skipping Pod b for Service ns/web: Node gone Not Found") {
		t.Fatalf("err %v", err)
	}
	h.catchUp()
	if got := endpointNames(h.apiSlices()...); !reflect.DeepEqual(got, []string{"a"}) {
		t.Errorf("endpoints %v: the pod on the missing node is left out, the rest written", got)
	}
	if ev := h.events(); len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning FailedToUpdateEndpointSlices Error updating Endpoint Slices for Service ns/web: skipping Pod b") {
		t.Errorf("events %q", ev)
	}
	// Published not-ready addresses: the pod is listed anyway.
	h.add(service("web", func(s *v1.Service) { s.Spec.PublishNotReadyAddresses = true }))
	h.mustSync("web")
	if got := endpointNames(h.apiSlices()...); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("published: endpoints %v", got)
	}
}

func TestServicesWithoutManagedSlices(t *testing.T) {
	h := newHarness(t, 100)
	h.add(service("ext", func(s *v1.Service) { s.Spec.Type = v1.ServiceTypeExternalName }),
		service("manual", func(s *v1.Service) { s.Spec.Selector = nil }),
		node("n1", "", "4"), pod("a", "ext", "n1", "10.0.0.1"))
	for _, name := range []string{"ext", "manual", "gone"} {
		if w := h.mustSync(name); len(w) != 0 {
			t.Errorf("%s: writes %v", name, verbs(w))
		}
	}
}

func TestOtherManagersSlicesUntouched(t *testing.T) {
	h := newHarness(t, 100)
	foreign := &discovery.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-custom", UID: "foreign", Labels: map[string]string{
			discovery.LabelServiceName: "web", discovery.LabelManagedBy: "someone-else",
		}},
		AddressType: discovery.AddressTypeIPv4,
		Endpoints:   []discovery.Endpoint{{Addresses: []string{"192.0.2.1"}}},
	}
	h.add(service("web"), node("n1", "", "4"), pod("a", "web", "n1", "10.0.0.1"), foreign)
	w := h.mustSync("web")
	for _, a := range w {
		if strings.Contains(a.GetResource().Resource, "endpointslices") && a.GetVerb() != "create" {
			t.Errorf("foreign slice touched: %v", a)
		}
	}
	if len(h.apiSlices()) != 2 {
		t.Errorf("%d slices", len(h.apiSlices()))
	}
}

func TestSliceOfRecreatedServiceReplaced(t *testing.T) {
	h := newHarness(t, 100)
	h.add(service("web"), node("n1", "", "4"), pod("a", "web", "n1", "10.0.0.1"))
	h.mustSync("web")
	old := h.apiSlices()[0].Name
	// The Service is recreated under the same name: the old one's slice,
	// about to be garbage-collected, is deleted, not updated.
	h.add(service("web", func(s *v1.Service) { s.UID = "svc-web-2" }))
	w := h.mustSync("web")
	if got := verbs(w); !reflect.DeepEqual(got, map[string]int{"create": 1, "delete": 1}) {
		t.Fatalf("writes %v", got)
	}
	if s := h.apiSlices(); len(s) != 1 || s[0].Name == old || s[0].OwnerReferences[0].UID != "svc-web-2" {
		t.Errorf("slices %+v", s)
	}
}

func TestTriggerTimeAnnotation(t *testing.T) {
	h := newHarness(t, 100)
	created := metav1.NewTime(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	h.add(service("web", func(s *v1.Service) { s.CreationTimestamp = created }), node("n1", "", "4"))
	p := pod("a", "web", "n1", "10.0.0.1")
	h.add(p)
	h.mustSync("web")
	if got := h.apiSlices()[0].Annotations[v1.EndpointsLastChangeTriggerTime]; got != "2025-01-01T00:00:00Z" {
		t.Errorf("first sync: %q, want the Service's creation", got)
	}
	readyAt := metav1.NewTime(time.Date(2025, 1, 1, 0, 1, 0, 123000000, time.UTC))
	q := pod("b", "web", "n1", "10.0.0.2")
	q.Status.Conditions[0].LastTransitionTime = readyAt
	h.add(q)
	h.mustSync("web")
	if got := h.apiSlices()[0].Annotations[v1.EndpointsLastChangeTriggerTime]; got != "2025-01-01T00:01:00.123Z" {
		t.Errorf("pod became ready: %q", got)
	}
	// A change without a trigger (a pod deleted) removes the annotation.
	h.deletePod("a")
	h.mustSync("web")
	if got, ok := h.apiSlices()[0].Annotations[v1.EndpointsLastChangeTriggerTime]; ok {
		t.Errorf("no trigger: annotation %q kept", got)
	}
}
