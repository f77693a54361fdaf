package servicelb

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func lbService(mutate ...func(*v1.Service)) *v1.Service {
	s := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s", UID: "u1"},
		Spec:       v1.ServiceSpec{Type: v1.ServiceTypeLoadBalancer, Ports: []v1.ServicePort{{Port: 80, NodePort: 30080}}},
	}
	for _, m := range mutate {
		m(s)
	}
	return s
}

func TestWantsAndCleanup(t *testing.T) {
	class := "x"
	now := metav1.Now()
	for _, tc := range []struct {
		name           string
		svc            *v1.Service
		wants, cleanup bool
	}{
		{"load balancer", lbService(), true, false},
		{"with class", lbService(func(s *v1.Service) { s.Spec.LoadBalancerClass = &class }), false, false},
		{"cluster IP with finalizer", lbService(func(s *v1.Service) {
			s.Spec.Type = v1.ServiceTypeClusterIP
			s.Finalizers = []string{Finalizer}
		}), false, true},
		{"deleted with finalizer", lbService(func(s *v1.Service) {
			s.DeletionTimestamp = &now
			s.Finalizers = []string{Finalizer}
		}), true, true},
		{"deleted without finalizer", lbService(func(s *v1.Service) { s.DeletionTimestamp = &now }), true, false},
	} {
		if got := wantsLoadBalancer(tc.svc); got != tc.wants {
			t.Errorf("%s: wantsLoadBalancer = %v", tc.name, got)
		}
		if got := needsCleanup(tc.svc); got != tc.cleanup {
			t.Errorf("%s: needsCleanup = %v", tc.name, got)
		}
	}
}

func TestNeedsUpdate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*v1.Service)
		want   bool
	}{
		{"nothing", func(*v1.Service) {}, false},
		{"status only", func(s *v1.Service) { s.Status.LoadBalancer.Ingress = []v1.LoadBalancerIngress{{IP: "1.2.3.4"}} }, false},
		{"labels only", func(s *v1.Service) { s.Labels = map[string]string{"a": "b"} }, false},
		{"type", func(s *v1.Service) { s.Spec.Type = v1.ServiceTypeNodePort }, true},
		{"node port", func(s *v1.Service) { s.Spec.Ports[0].NodePort = 30081 }, true},
		{"source ranges", func(s *v1.Service) { s.Spec.LoadBalancerSourceRanges = []string{"10.0.0.0/8"} }, true},
		{"annotation", func(s *v1.Service) { s.Annotations = map[string]string{"a": "b"} }, true},
		{"external IPs", func(s *v1.Service) { s.Spec.ExternalIPs = []string{"1.1.1.1"} }, true},
		{"traffic policy", func(s *v1.Service) { s.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal }, true},
		{"families", func(s *v1.Service) { s.Spec.IPFamilies = []v1.IPFamily{v1.IPv4Protocol} }, true},
		{"uid", func(s *v1.Service) { s.UID = "u2" }, true},
	} {
		cur := lbService(tc.mutate)
		if got := needsUpdate(lbService(), cur); got != tc.want {
			t.Errorf("%s: needsUpdate = %v, want %v", tc.name, got, tc.want)
		}
	}
	// Neither wants a load balancer: nothing matters.
	a := lbService(func(s *v1.Service) { s.Spec.Type = v1.ServiceTypeClusterIP })
	b := lbService(func(s *v1.Service) { s.Spec.Type = v1.ServiceTypeClusterIP; s.Spec.Ports[0].Port = 81 })
	if needsUpdate(a, b) {
		t.Error("needsUpdate between two ClusterIP Services")
	}
}

func TestNodeSet(t *testing.T) {
	now := metav1.Now()
	node := func(name string, m func(*v1.Node)) *v1.Node {
		n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if m != nil {
			m(n)
		}
		return n
	}
	nodes := []*v1.Node{
		node("plain", nil),
		node("not-ready", func(n *v1.Node) {
			n.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionFalse}}
		}),
		node("excluded", func(n *v1.Node) { n.Labels = map[string]string{v1.LabelNodeExcludeBalancers: "true"} }),
		node("excluded-garbage", func(n *v1.Node) { n.Labels = map[string]string{v1.LabelNodeExcludeBalancers: "yes please"} }),
		node("included-false", func(n *v1.Node) { n.Labels = map[string]string{v1.LabelNodeExcludeBalancers: "false"} }),
		node("autoscaler", func(n *v1.Node) {
			n.Spec.Taints = []v1.Taint{{Key: ToBeDeletedTaint, Effect: v1.TaintEffectNoSchedule}}
		}),
		node("deleting", func(n *v1.Node) { n.DeletionTimestamp = &now }),
	}
	var got []string
	for _, n := range filterNodes(nodes) {
		got = append(got, n.Name)
	}
	want := []string{"plain", "not-ready", "included-false"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("node set %v, want %v", got, want)
	}
	withID := node("plain", func(n *v1.Node) { n.Spec.ProviderID = "local://plain" })
	if sameNodes([]*v1.Node{nodes[0]}, []*v1.Node{withID}) || !sameNodes([]*v1.Node{nodes[0]}, []*v1.Node{node("plain", nil)}) {
		t.Error("sameNodes does not compare provider IDs")
	}
	many := make([]*v1.Node, 25)
	for i := range many {
		many[i] = node(string(rune('a'+i)), nil)
	}
	if names := nodeNames(many); len(names) != 21 || names[20] != "<5 more>" {
		t.Errorf("nodeNames = %v", names)
	}
}
