// Package noderoute tests the node-route-controller with the fake cloud
// provider against a real kube-apiserver.
package noderoute

import (
	"context"
	"errors"
	"reflect"
	"sort"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2/ktesting"

	"github.com/kcm-dev/kcm/internal/controller/nodeutil"
	"github.com/kcm-dev/kcm/pkg/cloudcontrollers"
	"github.com/kcm-dev/kcm/pkg/cloudprovider/fakecloud"
	"github.com/kcm-dev/kcm/pkg/controller/noderoute"
	"github.com/kcm-dev/kcm/pkg/features"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 60 * time.Second

type env struct {
	t      *testing.T
	ctx    context.Context
	client kubernetes.Interface
	cloud  *fakecloud.Cloud
	ns     framework.Namespace
}

// start runs the controller with the fake cloud; period is
// --route-reconciliation-period, watchBased the alpha gate.
func start(t *testing.T, cloud *fakecloud.Cloud, period time.Duration, watchBased bool) *env {
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	_, tctx := ktesting.NewTestContext(t)
	cc := framework.NewControllerContext(t, cfg)
	shared := &cc.Config.KubeCloudShared
	shared.ConfigureCloudRoutes = true
	shared.ClusterCIDR = "10.244.0.0/16,fd00:10::/56"
	shared.ClusterName = "kubernetes"
	shared.RouteReconciliationPeriod.Duration = period
	if watchBased {
		fg := featuregate.NewFeatureGate()
		if err := fg.Add(map[featuregate.Feature]featuregate.FeatureSpec{features.CloudControllerManagerWatchBasedRoutesReconciliation: {Default: true, PreRelease: featuregate.Alpha}}); err != nil {
			t.Fatal(err)
		}
		cc.FeatureGate = fg
	}
	if err := cloudcontrollers.Attach(tctx, cc, cloud); err != nil {
		t.Fatal(err)
	}
	c, err := noderoute.New(tctx, cc, cloudcontrollers.NodeRoute)
	if err != nil || c == nil {
		t.Fatalf("New: %v %v", c, err)
	}
	framework.StartController(t, cc, c)
	ctx := context.Background()
	return &env{t: t, ctx: ctx, client: client, cloud: cloud,
		ns: framework.Namespace{T: t, Ctx: ctx, Client: client, Name: metav1.NamespaceDefault}}
}

func (e *env) createNode(name string, cidrs ...string) *v1.Node {
	e.t.Helper()
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.NodeSpec{PodCIDRs: cidrs}}
	if len(cidrs) > 0 {
		n.Spec.PodCIDR = cidrs[0]
	}
	created, err := e.client.CoreV1().Nodes().Create(e.ctx, n, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = e.client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	return created
}

// routes returns "<node> <cidr>" for every route in the fake cloud.
func (e *env) routes() []string {
	var out []string
	for _, r := range e.cloud.RouteList() {
		out = append(out, string(r.TargetNode)+" "+r.DestinationCIDR)
	}
	sort.Strings(out)
	return out
}

func (e *env) waitRoutes(want ...string) {
	e.t.Helper()
	sort.Strings(want)
	framework.Eventually(e.t, timeout, func() (bool, error) { return reflect.DeepEqual(e.routes(), want), nil })
}

func (e *env) waitCondition(name string, status v1.ConditionStatus, reason, message string) {
	e.t.Helper()
	framework.Eventually(e.t, timeout, func() (bool, error) {
		n, err := e.client.CoreV1().Nodes().Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		_, c := nodeutil.GetNodeCondition(&n.Status, v1.NodeNetworkUnavailable)
		return c != nil && c.Status == status && c.Reason == reason && c.Message == message, nil
	})
}

func TestRoutes(t *testing.T) {
	cloud := fakecloud.New()
	// Left by an earlier run: one for a node that is gone, one outside
	// the cluster CIDR that is not ours to delete.
	cloud.AddRoute(cloudprovider.Route{Name: "kubernetes-old", TargetNode: "rt-gone", DestinationCIDR: "10.244.99.0/24"})
	cloud.AddRoute(cloudprovider.Route{Name: "vpn", TargetNode: "rt-gone", DestinationCIDR: "192.168.0.0/16"})
	e := start(t, cloud, 200*time.Millisecond, false)

	a := e.createNode("rt-a", "10.244.1.0/24", "fd00:10:0:1::/64")
	e.createNode("rt-b") // no pod CIDR yet
	e.waitRoutes("rt-a 10.244.1.0/24", "rt-a fd00:10:0:1::/64", "rt-gone 192.168.0.0/16")
	for _, r := range cloud.RouteList() {
		if r.TargetNode == "rt-a" && r.Name != fakecloud.RouteName("kubernetes", string(a.UID)) {
			t.Errorf("route name %q, want the cluster name and the node's UID", r.Name)
		}
	}
	e.waitCondition("rt-a", v1.ConditionFalse, "RouteCreated", "RouteController created a route")
	n, err := e.client.CoreV1().Nodes().Get(e.ctx, "rt-b", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, c := nodeutil.GetNodeCondition(&n.Status, v1.NodeNetworkUnavailable); c != nil {
		t.Errorf("rt-b without a pod CIDR has %+v", c)
	}

	// A pod CIDR assigned later gets its route.
	patch := []byte(`{"spec":{"podCIDR":"10.244.2.0/24","podCIDRs":["10.244.2.0/24"]}}`)
	if _, err := e.client.CoreV1().Nodes().Patch(e.ctx, "rt-b", types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitRoutes("rt-a 10.244.1.0/24", "rt-a fd00:10:0:1::/64", "rt-b 10.244.2.0/24", "rt-gone 192.168.0.0/16")
	e.waitCondition("rt-b", v1.ConditionFalse, "RouteCreated", "RouteController created a route")

	// A deleted node loses its routes.
	if err := e.client.CoreV1().Nodes().Delete(e.ctx, "rt-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitRoutes("rt-b 10.244.2.0/24", "rt-gone 192.168.0.0/16")

	// The provider refuses a route: an Event, NetworkUnavailable, and the
	// next periods try again until it works.
	cloud.SetCreateRouteError("rt-c", errors.New("route quota exceeded"))
	e.createNode("rt-c", "10.244.3.0/24")
	ev := e.ns.WaitEvents("Node", "rt-c", "FailedToCreateRoute", 1, timeout)
	if ev[0].Type != v1.EventTypeWarning || ev[0].Source.Component != noderoute.EventSource {
		t.Errorf("event %+v", ev[0])
	}
	e.waitCondition("rt-c", v1.ConditionTrue, "NoRouteCreated", "RouteController failed to create a route")
	cloud.SetCreateRouteError("rt-c", nil)
	e.waitRoutes("rt-b 10.244.2.0/24", "rt-c 10.244.3.0/24", "rt-gone 192.168.0.0/16")
	e.waitCondition("rt-c", v1.ConditionFalse, "RouteCreated", "RouteController created a route")

	// Listing fails: nothing is done, and the controller keeps going.
	cloud.SetListRoutesError(errors.New("cloud API down"))
	calls := cloud.RouteCalls("ListRoutes")
	framework.Eventually(t, timeout, func() (bool, error) { return cloud.RouteCalls("ListRoutes") > calls+2, nil })
	if n := cloud.RouteCalls("ListRoutes") - calls; n > 40 {
		t.Errorf("%d ListRoutes calls: not paced by the period", n)
	}
	cloud.SetListRoutesError(nil)
	e.createNode("rt-d", "10.244.4.0/24")
	e.waitRoutes("rt-b 10.244.2.0/24", "rt-c 10.244.3.0/24", "rt-d 10.244.4.0/24", "rt-gone 192.168.0.0/16")
}

func TestWatchBased(t *testing.T) {
	cloud := fakecloud.New()
	// A period no test waits for: only node events can trigger passes.
	e := start(t, cloud, time.Hour, true)
	e.createNode("wb-a", "10.244.11.0/24")
	e.waitRoutes("wb-a 10.244.11.0/24")
	e.waitCondition("wb-a", v1.ConditionFalse, "RouteCreated", "RouteController created a route")
	e.createNode("wb-b", "10.244.12.0/24")
	e.waitRoutes("wb-a 10.244.11.0/24", "wb-b 10.244.12.0/24")
	if err := e.client.CoreV1().Nodes().Delete(e.ctx, "wb-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitRoutes("wb-b 10.244.12.0/24")
}
