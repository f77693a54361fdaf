package endpointslicemirroring

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/internal/controller/podcontrol"
)

func TestSyncCreatesThenLeavesAlone(t *testing.T) {
	ep := endpoints("svc", v1.EndpointSubset{
		Addresses:         addrs("10.0.0.2", "10.0.0.1"),
		NotReadyAddresses: addrs("10.0.0.3"),
		Ports:             []v1.EndpointPort{port("http", 80)},
	})
	ep.Labels = map[string]string{"app": "x", discovery.LabelServiceName: "other"}
	ep.Annotations = map[string]string{"note": "kept", v1.EndpointsLastChangeTriggerTime: "t", v1.LastAppliedConfigAnnotation: "{}"}
	ep.Subsets[0].Addresses[0].NodeName = ptr.To("node-a")
	ep.Subsets[0].Addresses[0].Hostname = "host-a"
	ep.Subsets[0].Addresses[0].TargetRef = &v1.ObjectReference{Kind: "Pod", Namespace: testNS, Name: "pod-a"}
	f := newFixture(t, 1000, service("svc", nil), ep)

	writes, err := f.sync("ns/svc")
	if err != nil || !slices.Equal(writes, []string{"create"}) {
		t.Fatalf("sync: writes %v, err %v; want one create", writes, err)
	}
	got := f.slices()
	if len(got) != 1 {
		t.Fatalf("%d slices, want 1", len(got))
	}
	s := got[0]
	if s.GenerateName != "svc-" || s.AddressType != discovery.AddressTypeIPv4 {
		t.Errorf("generateName %q, addressType %q", s.GenerateName, s.AddressType)
	}
	wantLabels := map[string]string{"app": "x", discovery.LabelServiceName: "svc", discovery.LabelManagedBy: ControllerName}
	if !maps.Equal(s.Labels, wantLabels) {
		t.Errorf("labels %v, want %v", s.Labels, wantLabels)
	}
	if !maps.Equal(s.Annotations, map[string]string{"note": "kept"}) {
		t.Errorf("annotations %v", s.Annotations)
	}
	wantOwner := metav1.OwnerReference{APIVersion: "v1", Kind: "Endpoints", Name: "svc", UID: ep.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	if len(s.OwnerReferences) != 1 || !equality.Semantic.DeepEqual(s.OwnerReferences[0], wantOwner) {
		t.Errorf("ownerReferences %+v", s.OwnerReferences)
	}
	if len(s.Ports) != 1 || *s.Ports[0].Name != "http" || *s.Ports[0].Port != 80 || *s.Ports[0].Protocol != v1.ProtocolTCP {
		t.Errorf("ports %+v", s.Ports)
	}
	if a := addressesOf(s); a != "10.0.0.1 10.0.0.2 10.0.0.3!" {
		t.Errorf("addresses %q", a)
	}
	e := s.Endpoints[1]
	if ptr.Deref(e.NodeName, "") != "node-a" || ptr.Deref(e.Hostname, "") != "host-a" || e.TargetRef == nil || e.TargetRef.Name != "pod-a" {
		t.Errorf("endpoint 10.0.0.2: %+v", e)
	}
	if ev := f.events(); len(ev) != 0 {
		t.Errorf("events %v", ev)
	}

	f.refresh()
	if writes, err := f.sync("ns/svc"); err != nil || len(writes) != 0 {
		t.Fatalf("second sync: writes %v, err %v; want none", writes, err)
	}
}

func TestSyncUpdatesInPlace(t *testing.T) {
	ep := endpoints("svc", v1.EndpointSubset{Addresses: addrs("10.0.0.1"), Ports: []v1.EndpointPort{port("http", 80)}})
	f := newFixture(t, 1000, service("svc", nil), ep)
	if _, err := f.sync("ns/svc"); err != nil {
		t.Fatal(err)
	}
	f.refresh()
	name := f.slices()[0].Name

	tests := []struct {
		name   string
		change func(ep *v1.Endpoints)
		check  func(t *testing.T, s *discovery.EndpointSlice)
	}{
		{name: "address", change: func(ep *v1.Endpoints) { ep.Subsets[0].Addresses = addrs("10.0.0.9") },
			check: func(t *testing.T, s *discovery.EndpointSlice) {
				if a := addressesOf(s); a != "10.0.0.9" {
					t.Errorf("addresses %q", a)
				}
			}},
		{name: "readiness", change: func(ep *v1.Endpoints) {
			ep.Subsets[0].NotReadyAddresses, ep.Subsets[0].Addresses = ep.Subsets[0].Addresses, nil
		}, check: func(t *testing.T, s *discovery.EndpointSlice) {
			if a := addressesOf(s); a != "10.0.0.9!" {
				t.Errorf("addresses %q", a)
			}
		}},
		{name: "label", change: func(ep *v1.Endpoints) { ep.Labels = map[string]string{"new": "label"} },
			check: func(t *testing.T, s *discovery.EndpointSlice) {
				if s.Labels["new"] != "label" {
					t.Errorf("labels %v", s.Labels)
				}
			}},
		{name: "annotation", change: func(ep *v1.Endpoints) { ep.Annotations = map[string]string{"new": "annotation"} },
			check: func(t *testing.T, s *discovery.EndpointSlice) {
				if s.Annotations["new"] != "annotation" {
					t.Errorf("annotations %v", s.Annotations)
				}
			}},
		{name: "recreated Endpoints", change: func(ep *v1.Endpoints) { ep.UID = "new-uid" },
			check: func(t *testing.T, s *discovery.EndpointSlice) {
				if s.OwnerReferences[0].UID != "new-uid" {
					t.Errorf("owner %+v", s.OwnerReferences)
				}
			}},
	}
	for _, tc := range tests {
		ep = ep.DeepCopy()
		tc.change(ep)
		f.store(ep)
		writes, err := f.sync("ns/svc")
		if err != nil || !slices.Equal(writes, []string{"update"}) {
			t.Fatalf("%s: writes %v, err %v; want one update", tc.name, writes, err)
		}
		f.refresh()
		s := f.slices()[0]
		if s.Name != name || s.GenerateName != "" {
			t.Errorf("%s: slice %q (generateName %q), want %q updated in place", tc.name, s.Name, s.GenerateName, name)
		}
		tc.check(t, s)
		if writes, err := f.sync("ns/svc"); err != nil || len(writes) != 0 {
			t.Fatalf("%s: second sync: writes %v, err %v; want none", tc.name, writes, err)
		}
	}
}

// TestSyncPortChangeRecycles: a new port set is written into the slice of
// the old one (same address type) rather than a create and a delete.
func TestSyncPortChangeRecycles(t *testing.T) {
	ep := endpoints("svc", v1.EndpointSubset{Addresses: addrs("10.0.0.1"), Ports: []v1.EndpointPort{port("http", 80)}})
	f := newFixture(t, 1000, service("svc", nil), ep)
	if _, err := f.sync("ns/svc"); err != nil {
		t.Fatal(err)
	}
	f.refresh()
	name := f.slices()[0].Name
	ep = ep.DeepCopy()
	ep.Subsets[0].Ports = []v1.EndpointPort{port("http", 8080)}
	f.store(ep)
	writes, err := f.sync("ns/svc")
	if err != nil || !slices.Equal(writes, []string{"update"}) {
		t.Fatalf("writes %v, err %v; want one update", writes, err)
	}
	s := f.slices()[0]
	if s.Name != name || s.GenerateName != "svc-" || *s.Ports[0].Port != 8080 {
		t.Errorf("slice %q generateName %q port %d", s.Name, s.GenerateName, *s.Ports[0].Port)
	}
}

func TestSyncDualStackAndCanonicalIPs(t *testing.T) {
	ep := endpoints("svc", v1.EndpointSubset{
		Addresses: addrs("10.0.0.1", "fd00:0::1", "::ffff:10.0.0.5", "010.000.000.002"),
		Ports:     []v1.EndpointPort{port("http", 80)},
	})
	f := newFixture(t, 1000, service("svc", nil), ep)
	writes, err := f.sync("ns/svc")
	if err != nil || !slices.Equal(writes, []string{"create", "create"}) {
		t.Fatalf("writes %v, err %v; want two creates", writes, err)
	}
	got := map[discovery.AddressType]string{}
	for _, s := range f.slices() {
		got[s.AddressType] = addressesOf(s)
	}
	want := map[discovery.AddressType]string{
		discovery.AddressTypeIPv4: "10.0.0.2 10.0.0.1 10.0.0.5",
		discovery.AddressTypeIPv6: "fd00::1",
	}
	if !maps.Equal(got, want) {
		t.Errorf("addresses %v, want %v", got, want)
	}

	// The IPv6 address goes: its slice goes too.
	ep = ep.DeepCopy()
	ep.Subsets[0].Addresses = addrs("10.0.0.1")
	f.store(ep)
	f.refresh()
	writes, err = f.sync("ns/svc")
	if err != nil || !slices.Equal(writes, []string{"update", "delete"}) {
		t.Fatalf("writes %v, err %v; want an update and a delete", writes, err)
	}
}

func TestSyncDeletesWhenNotMirrored(t *testing.T) {
	subset := v1.EndpointSubset{Addresses: addrs("10.0.0.1"), Ports: []v1.EndpointPort{port("http", 80)}}
	tests := []struct {
		name   string
		change func(f *fixture, ep *v1.Endpoints)
	}{
		{name: "skip-mirror label", change: func(f *fixture, ep *v1.Endpoints) {
			ep.Labels = map[string]string{discovery.LabelSkipMirror: "true"}
			f.store(ep)
		}},
		{name: "leader-election record", change: func(f *fixture, ep *v1.Endpoints) {
			ep.Annotations = map[string]string{resourcelock.LeaderElectionRecordAnnotationKey: "{}"}
			f.store(ep)
		}},
		{name: "Service with selector", change: func(f *fixture, _ *v1.Endpoints) { f.store(service("svc", map[string]string{"a": "b"})) }},
		{name: "Service gone", change: func(f *fixture, _ *v1.Endpoints) {
			_ = f.factory.Core().V1().Services().Informer().GetStore().Delete(service("svc", nil))
		}},
		{name: "Endpoints gone", change: func(f *fixture, ep *v1.Endpoints) {
			_ = f.factory.Core().V1().Endpoints().Informer().GetStore().Delete(ep)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ep := endpoints("svc", subset)
			f := newFixture(t, 1000, service("svc", nil), ep)
			// A slice of another manager stays.
			other := &discovery.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: "svc-other",
				Labels: map[string]string{discovery.LabelServiceName: "svc", discovery.LabelManagedBy: "someone"}},
				AddressType: discovery.AddressTypeIPv4}
			if _, err := f.client.DiscoveryV1().EndpointSlices(testNS).Create(f.ctx, other, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := f.sync("ns/svc"); err != nil {
				t.Fatal(err)
			}
			f.refresh()
			tc.change(f, ep.DeepCopy())
			writes, err := f.sync("ns/svc")
			if err != nil || !slices.Equal(writes, []string{"delete"}) {
				t.Fatalf("writes %v, err %v; want one delete", writes, err)
			}
			if got := f.slices(); len(got) != 1 || got[0].Name != "svc-other" {
				t.Errorf("slices left: %d", len(got))
			}
		})
	}
}

func TestSyncOverCapacityAndInvalid(t *testing.T) {
	tests := []struct {
		name      string
		subset    v1.EndpointSubset
		want      string
		wantEvent []string
	}{
		{
			name: "over capacity: ready first, then not ready, in IP order",
			subset: v1.EndpointSubset{Addresses: addrs("10.0.0.3", "10.0.0.1", "10.0.0.2"),
				NotReadyAddresses: addrs("10.0.0.0", "10.0.0.4"), Ports: []v1.EndpointPort{port("", 80)}},
			want:      "10.0.0.1 10.0.0.2",
			wantEvent: []string{"Warning TooManyAddressesToMirror A max of 2 addresses can be mirrored to EndpointSlices per Endpoints subset. 3 addresses were skipped"},
		},
		{
			name:      "invalid IPs are skipped and do not count",
			subset:    v1.EndpointSubset{Addresses: addrs("bogus", "10.0.0.1"), NotReadyAddresses: addrs("10.0.0.2"), Ports: []v1.EndpointPort{port("", 80)}},
			want:      "10.0.0.1 10.0.0.2!",
			wantEvent: []string{"Warning InvalidIPAddress Skipped 1 invalid IP addresses when mirroring to EndpointSlices"},
		},
		{
			name:   "both",
			subset: v1.EndpointSubset{Addresses: addrs("1.1.1.1", "0bogus", "10.0.0.1", "10.0.0.2"), Ports: []v1.EndpointPort{port("", 80)}},
			want:   "1.1.1.1 10.0.0.1",
			wantEvent: []string{
				"Warning InvalidIPAddress Skipped 1 invalid IP addresses when mirroring to EndpointSlices",
				"Warning TooManyAddressesToMirror A max of 2 addresses can be mirrored to EndpointSlices per Endpoints subset. 2 addresses were skipped",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, 2, service("svc", nil), endpoints("svc", tc.subset))
			if _, err := f.sync("ns/svc"); err != nil {
				t.Fatal(err)
			}
			if got := addressesOf(f.slices()[0]); got != tc.want {
				t.Errorf("addresses %q, want %q", got, tc.want)
			}
			if got := f.events(); !slices.Equal(got, tc.wantEvent) {
				t.Errorf("events %q, want %q", got, tc.wantEvent)
			}
			// Every sync reports again, and writes nothing.
			f.refresh()
			writes, err := f.sync("ns/svc")
			if err != nil || len(writes) != 0 {
				t.Fatalf("second sync: writes %v, err %v", writes, err)
			}
			if got := f.events(); len(got) != len(tc.wantEvent) {
				t.Errorf("second sync events %q", got)
			}
		})
	}
}

// TestSyncStaleCache: until the cache has seen the controller's own
// write, a sync writes nothing and asks for a retry.
func TestSyncStaleCache(t *testing.T) {
	ep := endpoints("svc", v1.EndpointSubset{Addresses: addrs("10.0.0.1"), Ports: []v1.EndpointPort{port("http", 80)}})
	f := newFixture(t, 1000, service("svc", nil), ep)
	if _, err := f.sync("ns/svc"); err != nil {
		t.Fatal(err)
	}
	writes, err := f.sync("ns/svc")
	if !errors.Is(err, errStaleCache) || len(writes) != 0 {
		t.Fatalf("writes %v, err %v; want none and errStaleCache", writes, err)
	}
	f.refresh()
	if writes, err := f.sync("ns/svc"); err != nil || len(writes) != 0 {
		t.Fatalf("after refresh: writes %v, err %v", writes, err)
	}
}

// TestSyncManyPortSets: each port set has its own slice; the duplicate of
// a group is deleted, the first kept.
func TestSyncManyPortSets(t *testing.T) {
	ep := endpoints("svc",
		v1.EndpointSubset{Addresses: addrs("10.0.0.1"), Ports: []v1.EndpointPort{port("a", 80)}},
		v1.EndpointSubset{Addresses: addrs("10.0.0.2"), Ports: []v1.EndpointPort{port("b", 81)}},
	)
	f := newFixture(t, 1000, service("svc", nil), ep)
	if _, err := f.sync("ns/svc"); err != nil {
		t.Fatal(err)
	}
	got := f.slices()
	if len(got) != 2 {
		t.Fatalf("%d slices, want 2", len(got))
	}
	dup := got[0].DeepCopy()
	dup.Name, dup.UID = "svc-zzzzz", "dup"
	if _, err := f.client.DiscoveryV1().EndpointSlices(testNS).Create(f.ctx, dup, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.refresh()
	writes, err := f.sync("ns/svc")
	if err != nil || !slices.Equal(writes, []string{"delete"}) {
		t.Fatalf("writes %v, err %v; want the duplicate deleted", writes, err)
	}
	for _, s := range f.slices() {
		if strings.HasSuffix(s.Name, "zzzzz") {
			t.Errorf("duplicate %s kept", s.Name)
		}
	}
}

func TestSyncTerminatingEndpointsCreatesNothing(t *testing.T) {
	ep := endpoints("svc", v1.EndpointSubset{Addresses: addrs("10.0.0.1"), Ports: []v1.EndpointPort{port("http", 80)}})
	ep.DeletionTimestamp = &metav1.Time{}
	ep.Finalizers = []string{"example.com/hold"}
	f := newFixture(t, 1000, service("svc", nil), ep)
	if writes, err := f.sync("ns/svc"); err != nil || len(writes) != 0 {
		t.Fatalf("writes %v, err %v; want none", writes, err)
	}
}

func TestNamePrefix(t *testing.T) {
	if got := podcontrol.GenerateNamePrefix("svc"); got != "svc-" {
		t.Errorf("podcontrol.GenerateNamePrefix(svc) = %q", got)
	}
}
