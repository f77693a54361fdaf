package local

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	cloudprovider "k8s.io/cloud-provider"
)

func TestParseConfig(t *testing.T) {
	cfg, err := ParseConfig(strings.NewReader("loadBalancerCIDRs: [10.0.0.0/30, 'fd00::/126']\n"))
	if err != nil || len(cfg.LoadBalancerCIDRs) != 2 {
		t.Fatalf("ParseConfig = %v, %v", cfg, err)
	}
	for _, bad := range []string{"loadBalancerCIDR: [10.0.0.0/30]", "loadBalancerCIDRs: 3"} {
		if _, err := ParseConfig(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseConfig(%q) accepted", bad)
		}
	}
	if cfg, err := ParseConfig(nil); err != nil || len(cfg.LoadBalancerCIDRs) != 0 {
		t.Errorf("no config: %v, %v", cfg, err)
	}
	for _, bad := range [][]string{{"10.0.0.0"}, {"10.0.0.0/30", "10.1.0.0/30"}} {
		if _, err := New(Config{LoadBalancerCIDRs: bad}); err == nil {
			t.Errorf("New(%v) accepted", bad)
		}
	}
	if !cloudprovider.IsCloudProvider(ProviderName) {
		t.Errorf("%q is not registered", ProviderName)
	}
}

func svc(name string, created int, families []v1.IPFamily, ips ...string) *v1.Service {
	s := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name),
			CreationTimestamp: metav1.NewTime(time.Unix(int64(created), 0))},
		Spec: v1.ServiceSpec{Type: v1.ServiceTypeLoadBalancer, IPFamilies: families},
	}
	for _, ip := range ips {
		s.Status.LoadBalancer.Ingress = append(s.Status.LoadBalancer.Ingress, v1.LoadBalancerIngress{IP: ip})
	}
	return s
}

func ips(st *v1.LoadBalancerStatus) string {
	var out []string
	for _, ing := range st.Ingress {
		out = append(out, ing.IP)
	}
	return strings.Join(out, ",")
}

// withServices returns a provider whose informer holds services.
func withServices(t *testing.T, cidrs []string, services ...*v1.Service) *Cloud {
	t.Helper()
	c, err := New(Config{LoadBalancerCIDRs: cidrs})
	if err != nil {
		t.Fatal(err)
	}
	f := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	c.SetInformers(f)
	for _, s := range services {
		if err := f.Core().V1().Services().Informer().GetStore().Add(s); err != nil {
			t.Fatal(err)
		}
	}
	c.lb.synced = func() bool { return true }
	return c
}

var v4 = []v1.IPFamily{v1.IPv4Protocol}

func TestAllocation(t *testing.T) {
	ctx := context.Background()
	// .0 and .3 are the network and broadcast addresses of a /30.
	holder := svc("holder", 1, v4, "10.0.0.1")
	c := withServices(t, []string{"10.0.0.0/30", "fd00::/127"}, holder)
	lb, _ := c.LoadBalancer()

	st, err := lb.EnsureLoadBalancer(ctx, "", holder, nil)
	if err != nil || ips(st) != "10.0.0.1" {
		t.Fatalf("holder keeps its address: %v, %v", st, err)
	}
	st, err = lb.EnsureLoadBalancer(ctx, "", svc("b", 2, []v1.IPFamily{v1.IPv6Protocol, v1.IPv4Protocol}), nil)
	if err != nil || ips(st) != "fd00::,10.0.0.2" {
		t.Fatalf("dual stack in family order: %v, %v", st, err)
	}
	if *st.Ingress[0].IPMode != v1.LoadBalancerIPModeVIP {
		t.Errorf("ipMode %v", *st.Ingress[0].IPMode)
	}
	// Asked again, b gets the same addresses (reserved, not yet in status).
	st, err = lb.EnsureLoadBalancer(ctx, "", svc("b", 2, []v1.IPFamily{v1.IPv6Protocol, v1.IPv4Protocol}), nil)
	if err != nil || ips(st) != "fd00::,10.0.0.2" {
		t.Fatalf("b again: %v, %v", st, err)
	}
	_, err = lb.EnsureLoadBalancer(ctx, "", svc("c", 3, v4), nil)
	if err == nil || !strings.Contains(err.Error(), "no free address in load-balancer pool 10.0.0.0/30") {
		t.Fatalf("exhausted pool: %v", err)
	}
	// Releasing b frees its addresses for c.
	if err := lb.EnsureLoadBalancerDeleted(ctx, "", svc("b", 2, nil)); err != nil {
		t.Fatal(err)
	}
	if _, exists, _ := lb.GetLoadBalancer(ctx, "", svc("b", 2, nil)); exists {
		t.Error("b still exists after deletion")
	}
	st, err = lb.EnsureLoadBalancer(ctx, "", svc("c", 3, v4), nil)
	if err != nil || ips(st) != "10.0.0.2" {
		t.Fatalf("c after release: %v, %v", st, err)
	}
	if _, err := lb.EnsureLoadBalancer(ctx, "", svc("v6only", 4, []v1.IPFamily{v1.IPv6Protocol}), nil); err != nil {
		t.Errorf("v6only: %v", err)
	}
}

func TestRecoveryAfterRestart(t *testing.T) {
	ctx := context.Background()
	// A fresh provider sees the addresses in statuses: the newcomer does
	// not get .1 although nothing was reserved.
	old := svc("old", 1, v4, "10.0.0.1")
	c := withServices(t, []string{"10.0.0.0/29"}, old)
	lb, _ := c.LoadBalancer()
	st, err := lb.EnsureLoadBalancer(ctx, "", svc("new", 2, v4), nil)
	if err != nil || ips(st) != "10.0.0.2" {
		t.Fatalf("new: %v, %v", st, err)
	}
	// Two statuses showing one address (written by hand): the older
	// Service keeps it, the younger moves.
	young := svc("young", 5, v4, "10.0.0.1")
	c = withServices(t, []string{"10.0.0.0/29"}, old, young)
	lb, _ = c.LoadBalancer()
	if st, err := lb.EnsureLoadBalancer(ctx, "", young, nil); err != nil || ips(st) == "10.0.0.1" {
		t.Errorf("young: %v, %v", st, err)
	}
	if st, err := lb.EnsureLoadBalancer(ctx, "", old, nil); err != nil || ips(st) != "10.0.0.1" {
		t.Errorf("old: %v, %v", st, err)
	}
	// Not synced: no allocation.
	c.lb.synced = func() bool { return false }
	if _, err := lb.EnsureLoadBalancer(ctx, "", svc("x", 9, v4), nil); err == nil {
		t.Error("allocated before the informer synced")
	}
}

func TestRequestedAddress(t *testing.T) {
	ctx := context.Background()
	c := withServices(t, []string{"10.0.0.0/29"}, svc("holder", 1, v4, "10.0.0.1"))
	lb, _ := c.LoadBalancer()
	for ip, wantErr := range map[string]string{
		"10.0.0.5":  "",
		"10.0.0.1":  "used by another Service",
		"10.9.0.1":  "in no load-balancer pool",
		"not-an-ip": "not an IP address",
	} {
		s := svc("asks-"+ip, 2, v4)
		s.Spec.LoadBalancerIP = ip
		st, err := lb.EnsureLoadBalancer(ctx, "", s, nil)
		switch {
		case wantErr == "" && (err != nil || ips(st) != ip):
			t.Errorf("%s: %v, %v", ip, st, err)
		case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
			t.Errorf("%s: err %v, want %q", ip, err, wantErr)
		}
	}
}

func TestInstancesAndRoutes(t *testing.T) {
	ctx := context.Background()
	c, _ := New(Config{})
	inst, _ := c.InstancesV2()
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{
		v1.LabelInstanceTypeStable: "m1", v1.LabelTopologyZone: "z1", v1.LabelTopologyRegion: "r1"}}}
	md, err := inst.InstanceMetadata(ctx, node)
	if err != nil || md.ProviderID != "local://n1" || md.InstanceType != "m1" || md.Zone != "z1" || md.Region != "r1" {
		t.Errorf("metadata %+v, %v", md, err)
	}
	routes, _ := c.Routes()
	if err := routes.CreateRoute(ctx, "kubernetes", "uid-1", &cloudprovider.Route{TargetNode: "n1", DestinationCIDR: "10.244.0.0/24"}); err != nil {
		t.Fatal(err)
	}
	list, _ := routes.ListRoutes(ctx, "kubernetes")
	if len(list) != 1 || list[0].TargetNode != "n1" {
		t.Fatalf("routes %v", list)
	}
	if err := routes.DeleteRoute(ctx, "kubernetes", list[0]); err != nil {
		t.Fatal(err)
	}
	if list, _ := routes.ListRoutes(ctx, "kubernetes"); len(list) != 0 {
		t.Errorf("routes after delete %v", list)
	}
}

// A dual-stack node's two routes share their name (the node's UID) and
// are kept apart by destination.
func TestDualStackRoutes(t *testing.T) {
	ctx := context.Background()
	c, _ := New(Config{})
	routes, _ := c.Routes()
	for _, cidr := range []string{"10.244.1.0/24", "fd00:10:0:1::/64"} {
		if err := routes.CreateRoute(ctx, "kubernetes", "uid-1", &cloudprovider.Route{TargetNode: "n1", DestinationCIDR: cidr}); err != nil {
			t.Fatal(err)
		}
	}
	list, _ := routes.ListRoutes(ctx, "kubernetes")
	if len(list) != 2 || list[0].Name != list[1].Name {
		t.Fatalf("routes %+v", list)
	}
	if err := routes.DeleteRoute(ctx, "kubernetes", list[0]); err != nil {
		t.Fatal(err)
	}
	if rest, _ := routes.ListRoutes(ctx, "kubernetes"); len(rest) != 1 || rest[0].DestinationCIDR != list[1].DestinationCIDR {
		t.Errorf("after deleting one: %+v", rest)
	}
}
