package noderoute

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/controller-manager/pkg/clientbuilder"
	"k8s.io/klog/v2/ktesting"

	"github.com/kcm-dev/kcm/internal/controller/nodeutil"
	"github.com/kcm-dev/kcm/pkg/cloudprovider/fakecloud"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/controllermanager/config"
)

type fixture struct {
	t        *testing.T
	ctx      context.Context
	client   *fake.Clientset
	cloud    *fakecloud.Cloud
	c        *Controller
	recorder *record.FakeRecorder
	indexer  cache.Indexer
}

// syncCache copies the nodes from the client into the informer's cache,
// as the watch would.
func (f *fixture) syncCache() {
	f.t.Helper()
	list, err := f.client.CoreV1().Nodes().List(f.ctx, metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	for i := range list.Items {
		if err := f.indexer.Update(&list.Items[i]); err != nil {
			f.t.Fatal(err)
		}
	}
}

func newFixture(t *testing.T, clusterCIDR string, nodes ...*v1.Node) *fixture {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	client := fake.NewClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	inf := factory.Core().V1().Nodes()
	cidrs, err := ParseClusterCIDRs(clusterCIDR)
	if err != nil {
		t.Fatal(err)
	}
	cloud := fakecloud.New()
	c, err := newController("node-route-controller", client, cloud, "kubernetes", cidrs, time.Second, false, inf)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if _, err := client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := inf.Informer().GetIndexer().Add(n); err != nil {
			t.Fatal(err)
		}
	}
	rec := record.NewFakeRecorder(20)
	c.recorder = rec
	return &fixture{t: t, ctx: ctx, client: client, cloud: cloud, c: c, recorder: rec, indexer: inf.Informer().GetIndexer()}
}

func node(name string, cidrs ...string) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)}, Spec: v1.NodeSpec{PodCIDRs: cidrs},
		Status: v1.NodeStatus{Addresses: []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "192.0.2." + name[1:]}}}}
}

func route(name, target, cidr string) cloudprovider.Route {
	return cloudprovider.Route{Name: name, TargetNode: types.NodeName(target), DestinationCIDR: cidr}
}

func (f *fixture) routes() []string {
	var out []string
	for _, r := range f.cloud.RouteList() {
		out = append(out, string(r.TargetNode)+" "+r.DestinationCIDR)
	}
	return out
}

func (f *fixture) condition(name string) *v1.NodeCondition {
	f.t.Helper()
	n, err := f.client.CoreV1().Nodes().Get(f.ctx, name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	_, c := nodeutil.GetNodeCondition(&n.Status, v1.NodeNetworkUnavailable)
	return c
}

func (f *fixture) wantCondition(name string, status v1.ConditionStatus, reason string) {
	f.t.Helper()
	c := f.condition(name)
	if c == nil || c.Status != status || c.Reason != reason {
		f.t.Errorf("%s: NetworkUnavailable %+v, want %s %s", name, c, status, reason)
	}
}

func TestReconcile(t *testing.T) {
	f := newFixture(t, "10.244.0.0/16,fd00:10::/56",
		node("n1", "10.244.1.0/24"),
		node("n2", "10.244.2.0/24", "fd00:10:0:2::/64"),
		node("n3"), // no CIDR yet
		node("n4"), // no CIDR, but a route targets it
	)
	f.cloud.AddRoute(route("kubernetes-uid-n1", "n1", "10.244.1.0/24"))                                    // kept
	f.cloud.AddRoute(route("gone", "n9", "10.244.9.0/24"))                                                 // node gone: deleted
	f.cloud.AddRoute(route("foreign", "n9", "192.168.0.0/24"))                                             // outside the cluster CIDR: kept
	f.cloud.AddRoute(route("stale", "n1", "10.244.7.0/24"))                                                // CIDR no longer n1's: deleted
	f.cloud.AddRoute(route("old-n4", "n4", "10.244.4.0/24"))                                               // n4 has no CIDR: deleted
	f.cloud.AddRoute(cloudprovider.Route{Name: "hole", DestinationCIDR: "10.244.8.0/24", Blackhole: true}) // deleted
	if err := f.c.reconcile(f.ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{"n9 192.168.0.0/24", "n1 10.244.1.0/24", "n2 10.244.2.0/24", "n2 fd00:10:0:2::/64"}
	if got := f.routes(); !reflect.DeepEqual(got, want) {
		t.Errorf("routes %v, want %v", got, want)
	}
	for _, r := range f.cloud.RouteList() {
		if r.TargetNode == "n2" && r.Name != "kubernetes-uid-n2" {
			t.Errorf("route name %q", r.Name)
		}
	}
	f.wantCondition("n1", v1.ConditionFalse, ReasonRouteCreated)
	f.wantCondition("n2", v1.ConditionFalse, ReasonRouteCreated)
	f.wantCondition("n4", v1.ConditionTrue, ReasonNoRouteCreated)
	if c := f.condition("n3"); c != nil {
		t.Errorf("n3 has a condition: %+v", c)
	}
	if c := f.condition("n1"); c.Message != "RouteController created a route" {
		t.Errorf("message %q", c.Message)
	}

	// A second pass changes nothing and writes nothing.
	f.syncCache()
	f.client.ClearActions()
	creates := f.cloud.RouteCalls("CreateRoute")
	if err := f.c.reconcile(f.ctx); err != nil {
		t.Fatal(err)
	}
	if n := f.cloud.RouteCalls("CreateRoute"); n != creates {
		t.Errorf("%d more CreateRoute calls", n-creates)
	}
	if a := f.client.Actions(); len(a) != 0 {
		t.Errorf("second pass wrote: %v", a)
	}
}

func TestCreateFailure(t *testing.T) {
	f := newFixture(t, "10.244.0.0/16", node("n1", "10.244.1.0/24"), node("n2", "10.244.2.0/24"))
	f.cloud.SetCreateRouteError("n1", errors.New("quota exceeded"))
	if err := f.c.reconcile(f.ctx); err != nil {
		t.Fatal(err)
	}
	f.wantCondition("n1", v1.ConditionTrue, ReasonNoRouteCreated)
	f.wantCondition("n2", v1.ConditionFalse, ReasonRouteCreated)
	select {
	case e := <-f.recorder.Events:
		if !strings.HasPrefix(e, "Warning FailedToCreateRoute Could not create route uid-n1 10.244.1.0/24 for node n1 after ") || !strings.HasSuffix(e, ": quota exceeded") {
			t.Errorf("event %q", e)
		}
	default:
		t.Error("no event")
	}
	// Fixed: the next pass creates it and flips the condition.
	f.cloud.SetCreateRouteError("n1", nil)
	if err := f.c.reconcile(f.ctx); err != nil {
		t.Fatal(err)
	}
	f.wantCondition("n1", v1.ConditionFalse, ReasonRouteCreated)
}

func TestListFailure(t *testing.T) {
	f := newFixture(t, "10.244.0.0/16", node("n1", "10.244.1.0/24"))
	f.cloud.SetListRoutesError(errors.New("unavailable"))
	if err := f.c.reconcile(f.ctx); err == nil {
		t.Fatal("no error")
	}
	if f.cloud.RouteCalls("CreateRoute") != 0 || f.condition("n1") != nil {
		t.Error("acted without a route list")
	}
}

func TestNodeAddressesChange(t *testing.T) {
	n := node("n1", "10.244.1.0/24")
	f := newFixture(t, "10.244.0.0/16", n)
	f.cloud.SetRoutesWithNodeAddresses(true)
	old := route("kubernetes-uid-n1", "n1", "10.244.1.0/24")
	old.EnableNodeAddresses = true
	old.TargetNodeAddresses = []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "198.51.100.1"}}
	f.cloud.AddRoute(old)
	if err := f.c.reconcile(f.ctx); err != nil {
		t.Fatal(err)
	}
	rs := f.cloud.RouteList()
	if len(rs) != 1 || !reflect.DeepEqual(rs[0].TargetNodeAddresses, n.Status.Addresses) {
		t.Errorf("routes %+v", rs)
	}
	if f.cloud.RouteCalls("DeleteRoute") != 1 || f.cloud.RouteCalls("CreateRoute") != 1 {
		t.Errorf("delete %d create %d", f.cloud.RouteCalls("DeleteRoute"), f.cloud.RouteCalls("CreateRoute"))
	}
}

func TestParseClusterCIDRs(t *testing.T) {
	for in, ok := range map[string]bool{
		"10.0.0.0/8": true, "10.0.0.0/8,fd00::/48": true, " 10.0.0.0/8 ": true,
		"10.0.0.0/8,11.0.0.0/8": false, "10.0.0.0/8,fd00::/48,11.0.0.0/8": false, "nope": false, "": false,
	} {
		if _, err := ParseClusterCIDRs(in); (err == nil) != ok {
			t.Errorf("%q: error %v", in, err)
		}
	}
}

func TestIntervalLimiter(t *testing.T) {
	now := time.Unix(1000, 0)
	l := newIntervalLimiter(10 * time.Second)
	l.now = func() time.Time { return now }
	for i, want := range []time.Duration{0, 10 * time.Second, 10 * time.Second} {
		if got := l.When("k"); got != want {
			t.Errorf("call %d: %v, want %v", i, got, want)
		}
	}
	now = now.Add(time.Minute)
	if got := l.When("k"); got != 0 {
		t.Errorf("after a quiet minute: %v", got)
	}
}

func TestStartConditions(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	cc := func(configure bool, cidr string) *controllermanager.ControllerContext {
		cfg := &config.ComponentConfig{}
		cfg.KubeCloudShared.ConfigureCloudRoutes = configure
		cfg.KubeCloudShared.ClusterCIDR = cidr
		return &controllermanager.ControllerContext{
			ClientBuilder:   clientbuilder.SimpleControllerClientBuilder{ClientConfig: &rest.Config{Host: "https://127.0.0.1:1"}},
			InformerFactory: informers.NewSharedInformerFactory(fake.NewClientset(), 0),
			Config:          cfg,
			Cloud:           fakecloud.New(),
		}
	}
	for _, tc := range []struct {
		name      string
		cc        *controllermanager.ControllerContext
		want, err bool
	}{
		{"configured", cc(true, "10.244.0.0/16"), true, false},
		{"--configure-cloud-routes=false", cc(false, "10.244.0.0/16"), false, false},
		{"no cluster CIDR", cc(true, ""), false, false},
		{"bad cluster CIDR", cc(true, "10.244.0.0/16,10.245.0.0/16"), false, true},
		{"no provider", func() *controllermanager.ControllerContext { c := cc(true, "10.0.0.0/8"); c.Cloud = nil; return c }(), false, false},
	} {
		c, err := New(ctx, tc.cc, "node-route-controller")
		if (err != nil) != tc.err || (c != nil) != tc.want {
			t.Errorf("%s: controller %v, error %v", tc.name, c, err)
		}
	}
}
