package cloudnode

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2/ktesting"

	"github.com/kcm-dev/kcm/pkg/cloudprovider/fakecloud"
)

var uninitialized = v1.Taint{Key: TaintUninitialized, Value: "true", Effect: v1.TaintEffectNoSchedule}

type fixture struct {
	t        *testing.T
	ctx      context.Context
	client   *fake.Clientset
	cloud    *fakecloud.Cloud
	c        *Controller
	recorder *record.FakeRecorder
}

func newFixture(t *testing.T, nodes ...*v1.Node) *fixture {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	objs := make([]any, 0, len(nodes))
	client := fake.NewClientset()
	for _, n := range nodes {
		if _, err := client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, n)
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	inf := factory.Core().V1().Nodes()
	cloud := fakecloud.New()
	c, err := newController("cloud-node-controller", client, cloud, inf, time.Minute, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if err := inf.Informer().GetIndexer().Add(o); err != nil {
			t.Fatal(err)
		}
	}
	rec := record.NewFakeRecorder(20)
	c.recorder = rec
	return &fixture{t: t, ctx: ctx, client: client, cloud: cloud, c: c, recorder: rec}
}

func (f *fixture) node(name string) *v1.Node {
	f.t.Helper()
	n, err := f.client.CoreV1().Nodes().Get(f.ctx, name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

func (f *fixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func tainted(name string) *v1.Node {
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"keep": "me", "team": "a"}},
		Spec:       v1.NodeSpec{Taints: []v1.Taint{uninitialized, {Key: "other", Effect: v1.TaintEffectNoExecute}}},
		Status:     v1.NodeStatus{Addresses: []v1.NodeAddress{{Type: v1.NodeHostName, Address: name + ".local"}}},
	}
}

var cloudAddrs = []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.1"}, {Type: v1.NodeInternalIP, Address: "10.0.0.2"}, {Type: v1.NodeExternalIP, Address: "203.0.113.1"}}

func TestInitializeInstancesV2(t *testing.T) {
	f := newFixture(t, tainted("n1"))
	f.cloud.SetInstance("n1", fakecloud.Instance{Metadata: cloudprovider.InstanceMetadata{
		ProviderID: "fake://i-1", InstanceType: "m5.large", Zone: "z1", Region: "r1", NodeAddresses: cloudAddrs,
		AdditionalLabels: map[string]string{"cloud.example/rack": "7", "node.kubernetes.io/evil": "x", "k8s.io/evil": "y", "team": "b"},
	}})
	if err := f.c.sync(f.ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	n := f.node("n1")
	if n.Spec.ProviderID != "fake://i-1" {
		t.Errorf("providerID %q", n.Spec.ProviderID)
	}
	want := map[string]string{
		"keep": "me", "team": "a", "cloud.example/rack": "7",
		v1.LabelInstanceType: "m5.large", v1.LabelInstanceTypeStable: "m5.large",
		v1.LabelFailureDomainBetaZone: "z1", v1.LabelTopologyZone: "z1",
		v1.LabelFailureDomainBetaRegion: "r1", v1.LabelTopologyRegion: "r1",
	}
	if !reflect.DeepEqual(n.Labels, want) {
		t.Errorf("labels %v, want %v", n.Labels, want)
	}
	if len(n.Spec.Taints) != 1 || n.Spec.Taints[0].Key != "other" {
		t.Errorf("taints %v", n.Spec.Taints)
	}
	wantAddrs := append(append([]v1.NodeAddress(nil), cloudAddrs...), v1.NodeAddress{Type: v1.NodeHostName, Address: "n1.local"})
	if !reflect.DeepEqual(n.Status.Addresses, wantAddrs) {
		t.Errorf("addresses %v, want %v", n.Status.Addresses, wantAddrs)
	}
	if ev := f.events(); !reflect.DeepEqual(ev, []string{"Normal Synced Node synced successfully"}) {
		t.Errorf("events %v", ev)
	}
}

func TestInitializeInstancesV1(t *testing.T) {
	f := newFixture(t, tainted("n1"), tainted("n2"))
	f.cloud.UseInstancesV1(true)
	f.cloud.SetInstance("n1", fakecloud.Instance{Metadata: cloudprovider.InstanceMetadata{
		ProviderID: "fake://i-1", InstanceType: "t3", Zone: "z1", Region: "r1", NodeAddresses: cloudAddrs[:1]}})
	// A provider without provider IDs: the node goes by its name.
	f.cloud.SetInstance("n2", fakecloud.Instance{Metadata: cloudprovider.InstanceMetadata{InstanceType: "t4", Zone: "z2", NodeAddresses: cloudAddrs[2:]}})
	for _, name := range []string{"n1", "n2"} {
		if err := f.c.sync(f.ctx, name); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	n1, n2 := f.node("n1"), f.node("n2")
	if n1.Spec.ProviderID != "fake://i-1" || n1.Labels[v1.LabelInstanceTypeStable] != "t3" || n1.Labels[v1.LabelTopologyRegion] != "r1" || n1.Status.Addresses[0].Address != "10.0.0.1" {
		t.Errorf("n1 %+v %+v", n1.Spec, n1.ObjectMeta.Labels)
	}
	if n2.Spec.ProviderID != "" || n2.Labels[v1.LabelTopologyZone] != "z2" || hasCloudTaint(n2) || n2.Status.Addresses[0].Address != "203.0.113.1" {
		t.Errorf("n2 %+v %v %v", n2.Spec, n2.Labels, n2.Status.Addresses)
	}
	if _, ok := n2.Labels[v1.LabelTopologyRegion]; ok {
		t.Errorf("n2 has a region label: %v", n2.Labels)
	}
	if f.cloud.Calls("InstanceMetadata") != 0 {
		t.Errorf("InstancesV2 asked")
	}
}

func TestInitializeFailures(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(*fixture, *v1.Node)
		want  string
	}{
		{"instance not found", func(*fixture, *v1.Node) {}, "instance not found"},
		{"provider error", func(f *fixture, _ *v1.Node) {
			f.cloud.SetInstance("n1", fakecloud.Instance{})
			f.cloud.SetError(errors.New("boom"))
		}, "boom"},
		{"no provider ID anywhere", func(f *fixture, _ *v1.Node) {
			f.cloud.SetInstance("n1", fakecloud.Instance{Metadata: cloudprovider.InstanceMetadata{InstanceType: "x"}})
		}, "cloud provider does not set node provider ID for node n1"},
		{"node IP unknown to the cloud", func(f *fixture, n *v1.Node) {
			f.cloud.SetInstance("n1", fakecloud.Instance{Metadata: cloudprovider.InstanceMetadata{ProviderID: "fake://1", NodeAddresses: cloudAddrs}})
		}, "provided node ip for node \"n1\" is not valid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := tainted("n1")
			if tc.name == "node IP unknown to the cloud" {
				n.Annotations = map[string]string{AnnotationProvidedNodeIP: "192.0.2.9"}
			}
			f := newFixture(t, n)
			tc.setup(f, n)
			err := f.c.sync(f.ctx, "n1")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if got := f.node("n1"); !hasCloudTaint(got) || got.Spec.ProviderID != "" {
				t.Errorf("node changed: %+v", got.Spec)
			}
			ev := f.events()
			if len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning FailedToInitializeNode Failed to initialize node n1 with the cloud provider: ") {
				t.Errorf("events %v", ev)
			}
			// A retry of the same streak records nothing new.
			f.c.queue.AddRateLimited("n1")
			if err := f.c.sync(f.ctx, "n1"); err == nil {
				t.Fatal("no error on retry")
			}
			if ev := f.events(); len(ev) != 0 {
				t.Errorf("events on retry %v", ev)
			}
		})
	}
}

func TestNodeProviderIDKept(t *testing.T) {
	n := tainted("n1")
	n.Spec.ProviderID = "kubelet://given"
	f := newFixture(t, n)
	f.cloud.SetInstance("n1", fakecloud.Instance{Metadata: cloudprovider.InstanceMetadata{ProviderID: "fake://other"}})
	if err := f.c.sync(f.ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	if got := f.node("n1"); got.Spec.ProviderID != "kubelet://given" || hasCloudTaint(got) {
		t.Errorf("node %+v", got.Spec)
	}
	// No addresses from the cloud: the kubelet's stay.
	if got := f.node("n1"); len(got.Status.Addresses) != 1 {
		t.Errorf("addresses %v", got.Status.Addresses)
	}
}

func TestProvidedNodeIP(t *testing.T) {
	n := tainted("n1")
	n.Annotations = map[string]string{AnnotationProvidedNodeIP: "10.0.0.2"}
	f := newFixture(t, n)
	f.cloud.SetInstance("n1", fakecloud.Instance{Metadata: cloudprovider.InstanceMetadata{ProviderID: "fake://1", NodeAddresses: cloudAddrs}})
	if err := f.c.sync(f.ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	want := []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.2"}, {Type: v1.NodeExternalIP, Address: "203.0.113.1"}, {Type: v1.NodeHostName, Address: "n1.local"}}
	if got := f.node("n1").Status.Addresses; !reflect.DeepEqual(got, want) {
		t.Errorf("addresses %v, want %v", got, want)
	}
}

func TestWithProvidedNodeIP(t *testing.T) {
	dual := []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.1"}, {Type: v1.NodeInternalIP, Address: "fd00::1"}, {Type: v1.NodeInternalIP, Address: "10.0.0.2"}, {Type: v1.NodeHostName, Address: "h"}}
	for _, tc := range []struct {
		ip      string
		want    []string
		wantErr bool
	}{
		{"10.0.0.2", []string{"10.0.0.2", "h"}, false},
		{"10.0.0.2,fd00::1", []string{"10.0.0.2", "fd00::1", "h"}, false},
		{"10.0.0.9", nil, true},
		{"not-an-ip", nil, true},
	} {
		n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{AnnotationProvidedNodeIP: tc.ip}}}
		got, err := withProvidedNodeIP(n, dual)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: error %v", tc.ip, err)
			continue
		}
		var addrs []string
		for _, a := range got {
			addrs = append(addrs, a.Address)
		}
		if !reflect.DeepEqual(addrs, tc.want) {
			t.Errorf("%s: %v, want %v", tc.ip, addrs, tc.want)
		}
	}
}

func TestAddressesChanged(t *testing.T) {
	a := []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "1"}, {Type: v1.NodeHostName, Address: "h"}}
	b := []v1.NodeAddress{{Type: v1.NodeHostName, Address: "h"}, {Type: v1.NodeInternalIP, Address: "1"}}
	if addressesChanged(a, b) {
		t.Error("order counted as a change")
	}
	if !addressesChanged(a, a[:1]) || !addressesChanged(a, []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "2"}, {Type: v1.NodeHostName, Address: "h"}}) {
		t.Error("change not seen")
	}
}

func TestReconcileLabels(t *testing.T) {
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{
		v1.LabelFailureDomainBetaZone: "z1", v1.LabelTopologyZone: "old", v1.LabelInstanceType: "t",
	}}}
	f := newFixture(t, n)
	if err := f.c.sync(f.ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	got := f.node("n1").Labels
	want := map[string]string{v1.LabelFailureDomainBetaZone: "z1", v1.LabelTopologyZone: "z1", v1.LabelInstanceType: "t", v1.LabelInstanceTypeStable: "t"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("labels %v, want %v", got, want)
	}
	if f.cloud.Calls("InstanceMetadata") != 0 {
		t.Error("the cloud was asked about an initialized node")
	}
}

func TestUpdateAllAddresses(t *testing.T) {
	done := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "done"}, Status: v1.NodeStatus{Addresses: []v1.NodeAddress{
		{Type: v1.NodeInternalIP, Address: "10.0.0.1"}, {Type: v1.NodeHostName, Address: "done.local"}}}}
	same := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "same"}, Status: v1.NodeStatus{Addresses: []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.5"}}}}
	f := newFixture(t, done, same, tainted("waiting"))
	f.cloud.SetInstance("done", fakecloud.Instance{Metadata: cloudprovider.InstanceMetadata{NodeAddresses: []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.9"}}}})
	f.cloud.SetInstance("same", fakecloud.Instance{Metadata: cloudprovider.InstanceMetadata{NodeAddresses: same.Status.Addresses}})
	f.cloud.SetInstance("waiting", fakecloud.Instance{Metadata: cloudprovider.InstanceMetadata{NodeAddresses: cloudAddrs}})
	f.client.ClearActions()
	f.c.updateAllAddresses(f.ctx)
	want := []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.9"}, {Type: v1.NodeHostName, Address: "done.local"}}
	if got := f.node("done").Status.Addresses; !reflect.DeepEqual(got, want) {
		t.Errorf("addresses %v, want %v", got, want)
	}
	var patched []string
	for _, a := range f.client.Actions() {
		if a.GetVerb() == "patch" {
			patched = append(patched, a.(interface{ GetName() string }).GetName())
		}
	}
	if !reflect.DeepEqual(patched, []string{"done"}) {
		t.Errorf("patched %v, want only done", patched)
	}
	if got := f.node("waiting").Status.Addresses; len(got) != 1 {
		t.Errorf("tainted node's addresses changed: %v", got)
	}
}
