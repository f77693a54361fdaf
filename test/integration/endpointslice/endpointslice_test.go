package endpointslice

import (
	"fmt"
	"reflect"
	"sort"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controller/endpointslice"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

// now deletes at once: there is no kubelet to end a graceful deletion.
var now = metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}

func TestSliceFollowsPods(t *testing.T) {
	e := setup(t, 100)
	e.node("node-a", "zone-a", "4")
	svc := e.service("web", func(s *v1.Service) { s.Labels = map[string]string{"team": "a"} })
	// A Service without pods gets an empty placeholder slice.
	e.waitSlices("web", "placeholder", func(s []discovery.EndpointSlice) bool {
		return len(s) == 1 && len(s[0].Endpoints) == 0
	})
	e.pod("a", "web", "node-a", "10.0.0.1", true)
	e.pod("b", "web", "node-a", "10.0.0.2", false)
	e.pod("pending", "web", "node-a", "", false) // no IP yet
	slices := e.waitSlices("web", "a ready, b not", func(s []discovery.EndpointSlice) bool {
		eps := endpointsByName(s)
		return len(s) == 1 && len(eps) == 2 && *eps["a"].Conditions.Ready && !*eps["b"].Conditions.Ready
	})
	s := slices[0]
	if s.GenerateName != "web-" || s.AddressType != discovery.AddressTypeIPv4 {
		t.Errorf("generateName %q addressType %s", s.GenerateName, s.AddressType)
	}
	wantLabels := map[string]string{"team": "a", discovery.LabelServiceName: "web", discovery.LabelManagedBy: endpointslice.ManagedBy}
	if !reflect.DeepEqual(s.Labels, wantLabels) {
		t.Errorf("labels %v", s.Labels)
	}
	if ref := metav1.GetControllerOf(&s); ref == nil || ref.UID != svc.UID || ref.Kind != "Service" {
		t.Errorf("controller ref %+v", ref)
	}
	if len(s.Ports) != 1 || *s.Ports[0].Port != 8080 || *s.Ports[0].Name != "http" {
		t.Errorf("ports %+v", s.Ports)
	}
	if _, ok := s.Annotations[v1.EndpointsLastChangeTriggerTime]; !ok {
		t.Errorf("annotations %v", s.Annotations)
	}
	ep := endpointsByName(slices)["a"]
	if *ep.NodeName != "node-a" || ep.TargetRef.UID == "" || !reflect.DeepEqual(ep.Addresses, []string{"10.0.0.1"}) {
		t.Errorf("endpoint %+v", ep)
	}

	// The slice is deleted behind the controller's back: recreated.
	if err := e.client.DiscoveryV1().EndpointSlices(e.ns).Delete(e.ctx, s.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitSlices("web", "recreated", func(s []discovery.EndpointSlice) bool {
		return len(s) == 1 && s[0].Name != slices[0].Name && len(s[0].Endpoints) == 2
	})
}

func TestTerminatingPods(t *testing.T) {
	e := setup(t, 100)
	e.node("node-a", "zone-a", "4")
	e.service("web")
	e.service("all", func(s *v1.Service) {
		s.Spec.Selector = map[string]string{"app": "web"}
		s.Spec.PublishNotReadyAddresses = true
	})
	e.pod("a", "web", "node-a", "10.0.0.1", true, func(p *v1.Pod) { p.Finalizers = []string{"example.com/hold"} })
	e.waitSlices("web", "a listed", func(s []discovery.EndpointSlice) bool { return len(endpointsByName(s)) == 1 })
	if err := e.client.CoreV1().Pods(e.ns).Delete(e.ctx, "a", now); err != nil {
		t.Fatal(err)
	}
	cond := func(svc string, ready bool) {
		e.waitSlices(svc, "a terminating", func(s []discovery.EndpointSlice) bool {
			c := endpointsByName(s)["a"].Conditions
			return c.Terminating != nil && *c.Terminating && *c.Serving && *c.Ready == ready
		})
	}
	cond("web", false)
	cond("all", true)
	// The finalizer goes, the pod goes, and so does its endpoint.
	if _, err := e.client.CoreV1().Pods(e.ns).Patch(e.ctx, "a", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitSlices("web", "a gone", func(s []discovery.EndpointSlice) bool { return len(s) == 1 && len(s[0].Endpoints) == 0 })
}

func TestSlicesSplitAndShrink(t *testing.T) {
	e := setup(t, 10)
	e.node("node-a", "zone-a", "4")
	e.service("web")
	for i := 0; i < 25; i++ {
		e.pod(fmt.Sprintf("p%02d", i), "web", "node-a", fmt.Sprintf("10.0.1.%d", i+1), true)
	}
	e.waitSlices("web", "25 endpoints in slices of at most 10", func(s []discovery.EndpointSlice) bool {
		if len(endpointsByName(s)) != 25 {
			return false
		}
		for _, x := range s {
			if len(x.Endpoints) > 10 {
				t.Fatalf("slice of %d endpoints", len(x.Endpoints))
			}
		}
		return len(s) >= 3
	})
	for i := 3; i < 25; i++ {
		if err := e.client.CoreV1().Pods(e.ns).Delete(e.ctx, fmt.Sprintf("p%02d", i), now); err != nil {
			t.Fatal(err)
		}
	}
	e.waitSlices("web", "3 endpoints, no empty slice", func(s []discovery.EndpointSlice) bool {
		for _, x := range s {
			if len(x.Endpoints) == 0 {
				return false
			}
		}
		return len(endpointsByName(s)) == 3
	})
}

func TestNamedPortsTwoVersions(t *testing.T) {
	e := setup(t, 100)
	e.node("node-a", "zone-a", "4")
	e.service("web", func(s *v1.Service) { s.Spec.Ports[0].TargetPort = intstr.FromString("http") })
	e.pod("v1", "web", "node-a", "10.0.0.1", true, withNamedPort("http", 8080))
	e.pod("v2", "web", "node-a", "10.0.0.2", true, withNamedPort("http", 9090))
	e.pod("bad", "web", "node-a", "10.0.0.3", true, withNamedPort("other", 7070))
	slices := e.waitSlices("web", "one slice per port", func(s []discovery.EndpointSlice) bool {
		return len(s) == 3 && len(endpointsByName(s)) == 3
	})
	got := map[string]string{}
	for _, s := range slices {
		port := "none"
		if len(s.Ports) > 0 {
			port = fmt.Sprint(*s.Ports[0].Port)
		}
		for _, ep := range s.Endpoints {
			got[ep.TargetRef.Name] = port
		}
	}
	if want := map[string]string{"v1": "8080", "v2": "9090", "bad": "none"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ports by pod %v", got)
	}
}

func TestHeadlessWithHostnames(t *testing.T) {
	e := setup(t, 100)
	e.node("node-a", "zone-a", "4")
	e.service("db", func(s *v1.Service) { s.Spec.ClusterIP = v1.ClusterIPNone; s.Spec.Ports = nil })
	e.pod("db-0", "db", "node-a", "10.0.0.1", true, func(p *v1.Pod) { p.Spec.Hostname, p.Spec.Subdomain = "db-0", "db" })
	slices := e.waitSlices("db", "db-0 with hostname", func(s []discovery.EndpointSlice) bool {
		ep, ok := endpointsByName(s)["db-0"]
		return ok && ep.Hostname != nil && *ep.Hostname == "db-0"
	})
	if _, ok := slices[0].Labels[v1.IsHeadlessService]; !ok || len(slices[0].Ports) != 0 {
		t.Errorf("labels %v ports %v", slices[0].Labels, slices[0].Ports)
	}
}

func TestTopologyAutoHints(t *testing.T) {
	// Nodes are shared by the package's tests: node-a is zone-a's. They
	// are ready before the controller starts, as after a restart: the
	// zones must be known to the first Service sync (upstream's topology
	// worker races its Service workers there, and a Service synced first
	// keeps no hints until its next change, since only overloaded Services
	// are re-synced when nodes change).
	zones := []string{"zone-a", "zone-b", "zone-c"}
	nodes := []string{"node-a", "node-zone-b", "node-zone-c"}
	client := kubernetes.NewForConfigOrDie(framework.StartEnv(t))
	for i, z := range zones {
		createNode(t, client, nodes[i], z, "4")
	}
	e := setup(t, 100)
	e.service("web", func(s *v1.Service) { s.Annotations = map[string]string{v1.AnnotationTopologyMode: "Auto"} })
	for i := 0; i < 6; i++ {
		e.pod(fmt.Sprintf("p%d", i), "web", nodes[i%3], fmt.Sprintf("10.0.2.%d", i+1), true)
	}
	e.waitSlices("web", "zone hints", func(s []discovery.EndpointSlice) bool {
		eps := endpointsByName(s)
		if len(eps) != 6 {
			return false
		}
		for _, ep := range eps {
			if ep.Hints == nil || len(ep.Hints.ForZones) != 1 || ep.Hints.ForZones[0].Name != *ep.Zone {
				return false
			}
		}
		return true
	})
	ns := framework.Namespace{T: t, Ctx: e.ctx, Client: e.client, Name: e.ns}
	ev := ns.WaitEvents("Service", "web", "TopologyAwareHintsEnabled", 1, timeout)
	if ev[0].Message != "Topology Aware Hints has been enabled, addressType: IPv4" || ev[0].Source.Component != endpointslice.EventComponent {
		t.Errorf("event %q from %q", ev[0].Message, ev[0].Source.Component)
	}
}

func TestForeignSlicesUntouched(t *testing.T) {
	e := setup(t, 100)
	e.node("node-a", "zone-a", "4")
	e.service("web")
	foreign, err := e.client.DiscoveryV1().EndpointSlices(e.ns).Create(e.ctx, &discovery.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "web-manual", Labels: map[string]string{
			discovery.LabelServiceName: "web", discovery.LabelManagedBy: "manual-controller",
		}},
		AddressType: discovery.AddressTypeIPv4,
		Endpoints:   []discovery.Endpoint{{Addresses: []string{"192.0.2.1"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.pod("a", "web", "node-a", "10.0.0.1", true)
	e.waitSlices("web", "a listed", func(s []discovery.EndpointSlice) bool { return len(endpointsByName(s)) == 1 })
	got, err := e.client.DiscoveryV1().EndpointSlices(e.ns).Get(e.ctx, "web-manual", metav1.GetOptions{})
	if err != nil || got.ResourceVersion != foreign.ResourceVersion {
		t.Errorf("foreign slice changed: %v", err)
	}
}

// TestSelectorChurn changes a Service's selector many times in a row; the
// controller must settle on the last one without writing a slice per
// intermediate state it never saw, and without a retry loop.
func TestSelectorChurn(t *testing.T) {
	e := setup(t, 100)
	e.node("node-a", "zone-a", "4")
	for i := 0; i < 4; i++ {
		e.pod(fmt.Sprintf("p%d", i), fmt.Sprintf("v%d", i), "node-a", fmt.Sprintf("10.0.3.%d", i+1), true)
	}
	e.service("web", func(s *v1.Service) { s.Spec.Selector = map[string]string{"app": "v0"} })
	e.waitSlices("web", "p0", func(s []discovery.EndpointSlice) bool { _, ok := endpointsByName(s)["p0"]; return ok })
	for i := 1; i <= 20; i++ {
		svc, err := e.client.CoreV1().Services(e.ns).Get(e.ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		svc.Spec.Selector = map[string]string{"app": fmt.Sprintf("v%d", i%4)}
		if _, err := e.client.CoreV1().Services(e.ns).Update(e.ctx, svc, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond) // a stream of changes, not one
	}
	e.waitSlices("web", "p0 only (20 % 4)", func(s []discovery.EndpointSlice) bool {
		eps := endpointsByName(s)
		_, ok := eps["p0"]
		return len(s) == 1 && len(eps) == 1 && ok
	})
	writes := e.sliceWrites.Load()
	// At most one write per selector change (the slice is updated in
	// place), and then quiet.
	if writes > 22 {
		t.Errorf("%d slice writes for 20 selector changes", writes)
	}
	framework.Consistently(t, 2*time.Second, "no further writes", func() bool { return e.sliceWrites.Load() == writes })
	names := []string{}
	for _, s := range e.slices("web") {
		names = append(names, s.Name)
	}
	sort.Strings(names)
}
