package endpointslicemirroring

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controller/endpointslicemirroring"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

// TestMirrorLifecycle: custom Endpoints are mirrored per address type with
// the Endpoints' labels and annotations, updated in place, and their slices
// go when the Endpoints is labelled skip-mirror, when the Service gains a
// selector, and when the Endpoints is deleted; each change costs the
// writes it needs and no more.
func TestMirrorLifecycle(t *testing.T) {
	e := setup(t, 1000)
	svc := e.service("custom")
	ep := e.createEndpoints(&v1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Name: "custom",
			Labels: map[string]string{"team": "a"},
			Annotations: map[string]string{"note": "kept", v1.EndpointsLastChangeTriggerTime: "2026-01-01T00:00:00Z",
				v1.LastAppliedConfigAnnotation: "{}"}},
		Subsets: []v1.EndpointSubset{{
			Addresses:         []v1.EndpointAddress{{IP: "10.1.0.2", Hostname: "two", NodeName: ptr.To("node-a")}, {IP: "fd00::1"}},
			NotReadyAddresses: []v1.EndpointAddress{{IP: "10.1.0.1"}},
			Ports:             []v1.EndpointPort{{Name: "http", Port: 8080, Protocol: v1.ProtocolTCP}},
		}},
	})
	var writes int64
	got := e.waitSlices("custom", "mirrored", func(s []discovery.EndpointSlice) bool {
		return len(s) == 2 && addresses(s[0]) == "10.1.0.1! 10.1.0.2" && addresses(s[1]) == "fd00::1"
	})
	if n := e.settle(&writes); n != 2 {
		t.Errorf("%d slice writes for the creation, want 2", n)
	}
	for _, s := range got {
		if s.GenerateName != "custom-" || !strings.HasPrefix(s.Name, "custom-") {
			t.Errorf("name %q generateName %q", s.Name, s.GenerateName)
		}
		wantLabels := map[string]string{"team": "a", discovery.LabelServiceName: "custom", discovery.LabelManagedBy: endpointslicemirroring.ControllerName}
		if !maps.Equal(s.Labels, wantLabels) || !maps.Equal(s.Annotations, map[string]string{"note": "kept"}) {
			t.Errorf("labels %v annotations %v", s.Labels, s.Annotations)
		}
		if ref := metav1.GetControllerOf(&s); ref == nil || ref.Kind != "Endpoints" || ref.UID != ep.UID || !ptr.Deref(ref.BlockOwnerDeletion, false) {
			t.Errorf("controller ref %+v", ref)
		}
		if len(s.Ports) != 1 || *s.Ports[0].Name != "http" || *s.Ports[0].Port != 8080 {
			t.Errorf("ports %+v", s.Ports)
		}
	}
	if svc.Spec.Selector != nil {
		t.Fatal("the Service has a selector")
	}

	// An address changes: the IPv4 slice is updated in place.
	v4 := got[0]
	e.updateEndpoints("custom", func(ep *v1.Endpoints) { ep.Subsets[0].NotReadyAddresses = nil })
	got = e.waitSlices("custom", "updated", func(s []discovery.EndpointSlice) bool {
		return len(s) == 2 && addresses(s[0]) == "10.1.0.2"
	})
	if n := e.settle(&writes); n != 1 {
		t.Errorf("%d slice writes for one address change, want 1", n)
	}
	// Upstream's in-place update sends no generateName: it is cleared.
	if got[0].Name != v4.Name || got[0].GenerateName != "" {
		t.Errorf("updated slice %q generateName %q, want %q in place", got[0].Name, got[0].GenerateName, v4.Name)
	}

	// Labelled skip-mirror: the slices go; unlabelled: they come back.
	e.updateEndpoints("custom", func(ep *v1.Endpoints) { ep.Labels[discovery.LabelSkipMirror] = "true" })
	e.waitSlices("custom", "skip-mirror", func(s []discovery.EndpointSlice) bool { return len(s) == 0 })
	e.updateEndpoints("custom", func(ep *v1.Endpoints) { delete(ep.Labels, discovery.LabelSkipMirror) })
	e.waitSlices("custom", "mirrored again", func(s []discovery.EndpointSlice) bool { return len(s) == 2 })
	if n := e.settle(&writes); n != 4 {
		t.Errorf("%d slice writes for skip-mirror and back, want 4", n)
	}

	// The Service gains a selector: mirroring stops.
	svc, err := e.client.CoreV1().Services(e.ns).Get(e.ctx, "custom", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc.Spec.Selector = map[string]string{"app": "x"}
	if _, err := e.client.CoreV1().Services(e.ns).Update(e.ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitSlices("custom", "selector", func(s []discovery.EndpointSlice) bool { return len(s) == 0 })
	svc, err = e.client.CoreV1().Services(e.ns).Get(e.ctx, "custom", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc.Spec.Selector = nil
	if _, err := e.client.CoreV1().Services(e.ns).Update(e.ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitSlices("custom", "selector removed", func(s []discovery.EndpointSlice) bool { return len(s) == 2 })

	// The Endpoints goes: so do its slices.
	if err := e.client.CoreV1().Endpoints(e.ns).Delete(e.ctx, "custom", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitSlices("custom", "deleted", func(s []discovery.EndpointSlice) bool { return len(s) == 0 })
}

// TestSliceTamperedWith: a mirrored slice edited or deleted by someone
// else is restored; a slice of another manager is left alone.
func TestSliceTamperedWith(t *testing.T) {
	e := setup(t, 1000)
	e.service("custom")
	e.createEndpoints(&v1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "custom"}, Subsets: []v1.EndpointSubset{{
		Addresses: ips("10.2", 3), Ports: []v1.EndpointPort{{Port: 80, Protocol: v1.ProtocolTCP}},
	}}})
	want := "10.2.0.1 10.2.0.2 10.2.0.3"
	got := e.waitSlices("custom", "mirrored", func(s []discovery.EndpointSlice) bool { return len(s) == 1 && addresses(s[0]) == want })

	s := got[0]
	s.Endpoints = s.Endpoints[:1]
	if _, err := e.client.DiscoveryV1().EndpointSlices(e.ns).Update(e.ctx, &s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitSlices("custom", "restored", func(s []discovery.EndpointSlice) bool { return len(s) == 1 && addresses(s[0]) == want })

	if err := e.client.DiscoveryV1().EndpointSlices(e.ns).Delete(e.ctx, s.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitSlices("custom", "recreated", func(s []discovery.EndpointSlice) bool {
		return len(s) == 1 && s[0].Name != got[0].Name && addresses(s[0]) == want
	})

	foreign := &discovery.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "custom-foreign", Namespace: e.ns, Labels: map[string]string{
			discovery.LabelServiceName: "custom", discovery.LabelManagedBy: "someone.example.com"}},
		AddressType: discovery.AddressTypeIPv4,
		Endpoints:   []discovery.Endpoint{{Addresses: []string{"10.9.9.9"}}},
	}
	if _, err := e.client.DiscoveryV1().EndpointSlices(e.ns).Create(e.ctx, foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := e.client.CoreV1().Endpoints(e.ns).Delete(e.ctx, "custom", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitSlices("custom", "deleted", func(s []discovery.EndpointSlice) bool { return len(s) == 0 })
	if _, err := e.client.DiscoveryV1().EndpointSlices(e.ns).Get(e.ctx, "custom-foreign", metav1.GetOptions{}); err != nil {
		t.Errorf("foreign slice: %v", err)
	}
}

// TestOverCapacity: of 5,000 addresses (4,990 ready) the first 1,000 in
// upstream's order are mirrored, a TooManyAddressesToMirror Event says how
// many were not, and nothing is written again while nothing changes.
func TestOverCapacity(t *testing.T) {
	e := setup(t, 1000)
	e.service("big")
	e.createEndpoints(&v1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "big"}, Subsets: []v1.EndpointSubset{{
		Addresses:         ips("10.3", 4990),
		NotReadyAddresses: ips("10.4", 10),
		Ports:             []v1.EndpointPort{{Name: "http", Port: 80, Protocol: v1.ProtocolTCP}},
	}}})
	var writes int64
	got := e.waitSlices("big", "mirrored", func(s []discovery.EndpointSlice) bool { return len(s) == 1 })
	if n := len(got[0].Endpoints); n != 1000 {
		t.Fatalf("%d endpoints, want 1000", n)
	}
	// Ready addresses first, sorted as strings: 10.3.0.1, 10.3.0.10, ...
	mirrored := map[string]bool{}
	for _, ep := range got[0].Endpoints {
		mirrored[ep.Addresses[0]] = true
		if !*ep.Conditions.Ready {
			t.Fatalf("not-ready %s mirrored before ready addresses", ep.Addresses[0])
		}
	}
	all := ips("10.3", 4990)
	var names []string
	for _, a := range all {
		names = append(names, a.IP)
	}
	slices.Sort(names)
	for _, ip := range names[:1000] {
		if !mirrored[ip] {
			t.Fatalf("%s not mirrored; want the first 1000 ready addresses in string order", ip)
		}
	}
	want := []string{"TooManyAddressesToMirror: A max of 1000 addresses can be mirrored to EndpointSlices per Endpoints subset. 4000 addresses were skipped"}
	framework.Eventually(t, timeout, func() (bool, error) {
		ev, err := e.events("Endpoints", "big")
		return slices.Equal(ev, want), err
	})
	if n := e.settle(&writes); n != 1 {
		t.Errorf("%d slice writes, want 1", n)
	}
	framework.Consistently(t, 3*time.Second, "no further slice writes", func() bool { return e.writes.Load() == writes })
}

// TestBadInputBackoff: an Endpoints whose slice the API rejects (a port
// repeated in two subsets, each with an appProtocol, which upstream keeps
// apart and so writes twice) is retried with backoff, not in a hot loop,
// and the Endpoints next to it is mirrored.
func TestBadInputBackoff(t *testing.T) {
	e := setup(t, 1000)
	e.service("bad")
	e.service("good")
	port := v1.EndpointPort{Name: "http", Port: 80, Protocol: v1.ProtocolTCP, AppProtocol: ptr.To("http")}
	e.createEndpoints(&v1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Subsets: []v1.EndpointSubset{
		{Addresses: ips("10.5", 1), Ports: []v1.EndpointPort{port}},
		{Addresses: ips("10.5", 1), Ports: []v1.EndpointPort{port}},
	}})
	e.createEndpoints(&v1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "good"}, Subsets: []v1.EndpointSubset{
		{Addresses: ips("10.6", 1), Ports: []v1.EndpointPort{port}},
	}})
	e.waitSlices("good", "mirrored", func(s []discovery.EndpointSlice) bool { return len(s) == 1 })
	// Retries 1s, 2s, 4s apart: at most three more attempts in six seconds.
	start := e.writes.Load()
	framework.Consistently(t, 6*time.Second, "at most 4 create attempts", func() bool { return e.writes.Load()-start <= 4 })
	if s, err := e.slices("bad"); err != nil || len(s) != 0 {
		t.Errorf("slices of bad: %v, %v", describe(s), err)
	}
}
