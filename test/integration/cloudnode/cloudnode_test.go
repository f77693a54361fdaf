// Package cloudnode tests the cloud-node-controller with the fake cloud
// provider against a real kube-apiserver.
package cloudnode

import (
	"context"
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2/ktesting"

	"github.com/kcm-dev/kcm/pkg/cloudcontrollers"
	"github.com/kcm-dev/kcm/pkg/cloudprovider/fakecloud"
	"github.com/kcm-dev/kcm/pkg/controller/cloudnode"
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

// start runs the controller with the fake cloud, addresses refreshed
// every second.
func start(t *testing.T, cloud *fakecloud.Cloud) *env {
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	_, tctx := ktesting.NewTestContext(t)
	cc := framework.NewControllerContext(t, cfg)
	cc.Config.Cloud.NodeStatusUpdateFrequency.Duration = time.Second
	if err := cloudcontrollers.Attach(tctx, cc, cloud); err != nil {
		t.Fatal(err)
	}
	c, err := cloudnode.New(tctx, cc, cloudcontrollers.CloudNode)
	if err != nil || c == nil {
		t.Fatalf("New: %v %v", c, err)
	}
	framework.StartController(t, cc, c)
	ctx := context.Background()
	return &env{t: t, ctx: ctx, client: client, cloud: cloud,
		ns: framework.Namespace{T: t, Ctx: ctx, Client: client, Name: metav1.NamespaceDefault}}
}

func (e *env) createNode(name string, annotations map[string]string) {
	e.t.Helper()
	n := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations},
		Spec: v1.NodeSpec{Taints: []v1.Taint{
			{Key: cloudnode.TaintUninitialized, Value: "true", Effect: v1.TaintEffectNoSchedule},
			{Key: "example.com/other", Effect: v1.TaintEffectNoSchedule},
		}},
	}
	// A kubelet registers with the addresses it knows, its hostname.
	n.Status.Addresses = []v1.NodeAddress{{Type: v1.NodeHostName, Address: name}}
	if _, err := e.client.CoreV1().Nodes().Create(e.ctx, n, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = e.client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

func (e *env) get(name string) *v1.Node {
	e.t.Helper()
	n, err := e.client.CoreV1().Nodes().Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

func initialized(n *v1.Node) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == cloudnode.TaintUninitialized {
			return false
		}
	}
	return true
}

func TestInitializeAndRefresh(t *testing.T) {
	cloud := fakecloud.New()
	cloud.SetInstance("cn-a", fakecloud.Instance{Metadata: cloudprovider.InstanceMetadata{
		ProviderID: "fake://a", InstanceType: "m5.large", Zone: "zone-1", Region: "region-1",
		NodeAddresses:    []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.1"}, {Type: v1.NodeExternalIP, Address: "203.0.113.1"}},
		AdditionalLabels: map[string]string{"cloud.example.com/rack": "r7", "kubernetes.io/hostname": "nope"},
	}})
	e := start(t, cloud)
	e.createNode("cn-a", nil)

	framework.Eventually(t, timeout, func() (bool, error) { return initialized(e.get("cn-a")), nil })
	n := e.get("cn-a")
	if n.Spec.ProviderID != "fake://a" {
		t.Errorf("providerID %q", n.Spec.ProviderID)
	}
	wantLabels := map[string]string{
		v1.LabelInstanceTypeStable: "m5.large", v1.LabelInstanceType: "m5.large",
		v1.LabelTopologyZone: "zone-1", v1.LabelFailureDomainBetaZone: "zone-1",
		v1.LabelTopologyRegion: "region-1", v1.LabelFailureDomainBetaRegion: "region-1",
		"cloud.example.com/rack": "r7",
	}
	if !reflect.DeepEqual(n.Labels, wantLabels) {
		t.Errorf("labels %v, want %v", n.Labels, wantLabels)
	}
	// The API server adds the not-ready taint to new nodes; the other
	// taints stay.
	if len(n.Spec.Taints) == 0 || n.Spec.Taints[0].Key != "example.com/other" {
		t.Errorf("taints %v", n.Spec.Taints)
	}
	want := []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.1"}, {Type: v1.NodeExternalIP, Address: "203.0.113.1"}, {Type: v1.NodeHostName, Address: "cn-a"}}
	framework.Eventually(t, timeout, func() (bool, error) { return reflect.DeepEqual(e.get("cn-a").Status.Addresses, want), nil })
	ev := e.ns.WaitEvents("Node", "cn-a", "Synced", 1, timeout)
	if ev[0].Message != "Node synced successfully" || ev[0].Source.Component != cloudnode.EventSource || ev[0].Type != v1.EventTypeNormal {
		t.Errorf("event %+v", ev[0])
	}

	// The periodic pass follows the cloud's addresses.
	md := cloudprovider.InstanceMetadata{ProviderID: "fake://a", NodeAddresses: []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.2"}}}
	cloud.SetInstance("cn-a", fakecloud.Instance{Metadata: md})
	want = []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.2"}, {Type: v1.NodeHostName, Address: "cn-a"}}
	framework.Eventually(t, timeout, func() (bool, error) { return reflect.DeepEqual(e.get("cn-a").Status.Addresses, want), nil })

	// A beta label edited by hand brings its GA twin along.
	zonePatch := []byte(`{"metadata":{"labels":{"` + v1.LabelFailureDomainBetaZone + `":"zone-2"}}}`)
	if _, err := e.client.CoreV1().Nodes().Patch(e.ctx, "cn-a", types.MergePatchType, zonePatch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, timeout, func() (bool, error) { return e.get("cn-a").Labels[v1.LabelTopologyZone] == "zone-2", nil })
}

func TestInstancesV1AndProvidedNodeIP(t *testing.T) {
	cloud := fakecloud.New()
	cloud.UseInstancesV1(true)
	cloud.SetInstance("cn-v1", fakecloud.Instance{Metadata: cloudprovider.InstanceMetadata{
		ProviderID: "fake://v1", InstanceType: "t3", Zone: "zone-3", Region: "region-3",
		NodeAddresses: []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.1.0.1"}, {Type: v1.NodeInternalIP, Address: "10.1.0.2"}},
	}})
	e := start(t, cloud)
	e.createNode("cn-v1", map[string]string{cloudnode.AnnotationProvidedNodeIP: "10.1.0.2"})
	framework.Eventually(t, timeout, func() (bool, error) { return initialized(e.get("cn-v1")), nil })
	want := []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.1.0.2"}, {Type: v1.NodeHostName, Address: "cn-v1"}}
	framework.Eventually(t, timeout, func() (bool, error) { return reflect.DeepEqual(e.get("cn-v1").Status.Addresses, want), nil })
	n := e.get("cn-v1")
	if n.Spec.ProviderID != "fake://v1" || n.Labels[v1.LabelTopologyZone] != "zone-3" || n.Labels[v1.LabelInstanceTypeStable] != "t3" {
		t.Errorf("node %v %v", n.Spec.ProviderID, n.Labels)
	}
}

func TestBadInput(t *testing.T) {
	cloud := fakecloud.New()
	cloud.SetInstance("cn-ip", fakecloud.Instance{Metadata: cloudprovider.InstanceMetadata{
		ProviderID: "fake://ip", NodeAddresses: []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.2.0.1"}}}})
	e := start(t, cloud)
	// No instance yet, and a node IP the cloud does not have.
	e.createNode("cn-missing", nil)
	e.createNode("cn-ip", map[string]string{cloudnode.AnnotationProvidedNodeIP: "10.2.0.9"})

	for _, name := range []string{"cn-missing", "cn-ip"} {
		ev := e.ns.WaitEvents("Node", name, "FailedToInitializeNode", 1, timeout)
		if ev[0].Type != v1.EventTypeWarning || ev[0].Source.Component != cloudnode.EventSource {
			t.Errorf("%s: event %+v", name, ev[0])
		}
	}
	// Retries back off (upstream's 5ms doubling): once the first burst of
	// quick retries is over (eight each, about 1.3s), three more seconds
	// of failures cost a handful of calls and no new Event, and the nodes
	// keep their taint.
	framework.Eventually(t, timeout, func() (bool, error) { return cloud.Calls("InstanceMetadata") >= 16, nil })
	before := cloud.Calls("InstanceMetadata")
	framework.Consistently(t, 3*time.Second, "nodes stay tainted", func() bool {
		return !initialized(e.get("cn-missing")) && !initialized(e.get("cn-ip"))
	})
	if n := cloud.Calls("InstanceMetadata") - before; n > 8 {
		t.Errorf("%d InstanceMetadata calls in 3s: a hot loop", n)
	}
	for _, name := range []string{"cn-missing", "cn-ip"} {
		if ev := e.ns.WaitEvents("Node", name, "FailedToInitializeNode", 1, timeout); len(ev) != 1 || ev[0].Count != 1 {
			t.Errorf("%s: events %+v", name, ev)
		}
	}

	// The instance appears: the next retry (or the node's next change)
	// initializes the node.
	cloud.SetInstance("cn-missing", fakecloud.Instance{Metadata: cloudprovider.InstanceMetadata{ProviderID: "fake://missing", Zone: "zone-9"}})
	poke := []byte(`{"metadata":{"labels":{"poke":"1"}}}`)
	if _, err := e.client.CoreV1().Nodes().Patch(e.ctx, "cn-missing", types.MergePatchType, poke, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, timeout, func() (bool, error) {
		n := e.get("cn-missing")
		return initialized(n) && n.Spec.ProviderID == "fake://missing" && n.Labels[v1.LabelTopologyZone] == "zone-9", nil
	})
}
