// Package nodeipam tests the node-ipam-controller against a real
// kube-apiserver. Nodes are cluster-scoped and the control plane is shared,
// so each test starts and ends with no Nodes and names its own.
package nodeipam

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kcm-dev/kcm/pkg/controller/nodeipam"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 30 * time.Second

// flags are the node IPAM flags of one controller run.
type flags struct {
	clusterCIDR, serviceCIDR string
	maskIPv4, maskIPv6       int32
}

// env is one test's control plane access.
type env struct {
	t      *testing.T
	cfg    *rest.Config
	client kubernetes.Interface
}

func newEnv(t *testing.T) *env {
	t.Helper()
	cfg := framework.StartEnv(t)
	e := &env{t: t, cfg: cfg, client: kubernetes.NewForConfigOrDie(cfg)}
	e.deleteAllNodes()
	t.Cleanup(e.deleteAllNodes)
	return e
}

// start runs a node-ipam-controller built by the real constructor with f
// and returns the function stopping it.
func (e *env) start(f flags) func() {
	e.t.Helper()
	cc := framework.NewControllerContext(e.t, e.cfg)
	cc.Config.KubeCloudShared.AllocateNodeCIDRs = true
	cc.Config.KubeCloudShared.CIDRAllocatorType = nodeipam.RangeAllocator
	cc.Config.KubeCloudShared.ClusterCIDR = f.clusterCIDR
	cc.Config.NodeIPAMController.ServiceCIDR, cc.Config.NodeIPAMController.SecondaryServiceCIDR, _ = strings.Cut(f.serviceCIDR, ",")
	cc.Config.NodeIPAMController.NodeCIDRMaskSizeIPv4 = f.maskIPv4
	cc.Config.NodeIPAMController.NodeCIDRMaskSizeIPv6 = f.maskIPv6
	c, err := nodeipam.New(context.Background(), cc, names.NodeIpam)
	if err != nil {
		e.t.Fatalf("New: %v", err)
	}
	if c == nil || c.Name() != names.NodeIpam {
		e.t.Fatalf("New returned %v", c)
	}
	return framework.StartController(e.t, cc, c)
}

func (e *env) deleteAllNodes() {
	ctx := context.Background()
	if err := e.client.CoreV1().Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		e.t.Fatalf("deleting Nodes: %v", err)
	}
	framework.Eventually(e.t, timeout, func() (bool, error) {
		l, err := e.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		return err == nil && len(l.Items) == 0, err
	})
}

func (e *env) createNode(name string, podCIDRs ...string) {
	e.t.Helper()
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if len(podCIDRs) > 0 {
		n.Spec.PodCIDR, n.Spec.PodCIDRs = podCIDRs[0], podCIDRs
	}
	if _, err := e.client.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) deleteNode(name string) {
	e.t.Helper()
	if err := e.client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// podCIDRs waits for the Node's podCIDRs and checks podCIDR is the first.
func (e *env) podCIDRs(name string) []string {
	e.t.Helper()
	var got []string
	framework.Eventually(e.t, timeout, func() (bool, error) {
		n, err := e.client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		got = n.Spec.PodCIDRs
		if len(got) > 0 && n.Spec.PodCIDR != got[0] {
			return false, fmt.Errorf("node %s: podCIDR %q is not podCIDRs[0] of %v", name, n.Spec.PodCIDR, got)
		}
		return len(got) > 0, nil
	})
	return got
}

// allPodCIDRs returns every Node's podCIDRs, failing on a CIDR handed out
// twice.
func (e *env) allPodCIDRs() map[string]string {
	e.t.Helper()
	l, err := e.client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	owner := map[string]string{}
	for _, n := range l.Items {
		for _, c := range n.Spec.PodCIDRs {
			if other, ok := owner[c]; ok {
				e.t.Errorf("%s is held by both %s and %s", c, other, n.Name)
			}
			owner[c] = n.Name
		}
	}
	return owner
}

func inside(t *testing.T, cidr, cluster string) bool {
	t.Helper()
	_, c, err := net.ParseCIDR(cidr)
	if err != nil {
		t.Fatal(err)
	}
	_, cl, err := net.ParseCIDR(cluster)
	if err != nil {
		t.Fatal(err)
	}
	return cl.Contains(c.IP)
}

func TestNodesGetCIDRsOutsideTheServiceRange(t *testing.T) {
	e := newEnv(t)
	e.start(flags{clusterCIDR: "10.244.0.0/16", serviceCIDR: "10.244.0.0/24"})
	want := map[string]string{"get-a": "10.244.1.0/24", "get-b": "10.244.2.0/24", "get-c": "10.244.3.0/24"}
	for _, name := range []string{"get-a", "get-b", "get-c"} {
		e.createNode(name)
		// One at a time, so that the order is upstream's.
		if got := e.podCIDRs(name); !slices.Equal(got, []string{want[name]}) {
			t.Errorf("%s: podCIDRs %v, want [%s]", name, got, want[name])
		}
	}
	e.allPodCIDRs()
}

func TestDualStackNodesGetTwoCIDRs(t *testing.T) {
	e := newEnv(t)
	e.start(flags{clusterCIDR: "10.244.0.0/16,fd00:10:244::/56", serviceCIDR: "10.96.0.0/12,fd00:10:96::/108"})
	e.createNode("dual-a")
	if got := e.podCIDRs("dual-a"); !slices.Equal(got, []string{"10.244.0.0/24", "fd00:10:244::/64"}) {
		t.Errorf("podCIDRs %v", got)
	}
	e.createNode("dual-b")
	if got := e.podCIDRs("dual-b"); !slices.Equal(got, []string{"10.244.1.0/24", "fd00:10:244:1::/64"}) {
		t.Errorf("podCIDRs %v", got)
	}
}

// A cluster CIDR with room for four Nodes: the fifth gets upstream's
// CIDRNotAvailable Event, and the block of a deleted Node once it is freed.
func TestExhaustionThenReuseOfADeletedNodesCIDR(t *testing.T) {
	e := newEnv(t)
	e.start(flags{clusterCIDR: "10.10.0.0/22"})
	held := map[string]string{}
	for i := range 4 {
		name := fmt.Sprintf("full-%d", i)
		e.createNode(name)
		held[name] = e.podCIDRs(name)[0]
	}
	e.createNode("full-late")
	framework.Eventually(t, timeout, func() (bool, error) {
		l, err := e.client.CoreV1().Events(metav1.NamespaceDefault).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, ev := range l.Items {
			if ev.InvolvedObject.Kind == "Node" && ev.InvolvedObject.Name == "full-late" && ev.Reason == "CIDRNotAvailable" {
				want := "Node full-late status is now: CIDRNotAvailable"
				if ev.Message != want || ev.Type != v1.EventTypeNormal || ev.Source.Component != "cidrAllocator" {
					return false, fmt.Errorf("event %s %q from %q, want Normal %q from cidrAllocator", ev.Type, ev.Message, ev.Source.Component, want)
				}
				return true, nil
			}
		}
		return false, nil
	})

	e.deleteNode("full-2")
	if got := e.podCIDRs("full-late"); got[0] != held["full-2"] {
		t.Errorf("full-late got %v, want the deleted Node's %s", got, held["full-2"])
	}
	e.allPodCIDRs()
}

// After a restart, the blocks Nodes hold (set by the controller or by
// hand) are never handed out again, and blocks freed while it was down are.
func TestRestartNeverHandsOutABlockTwice(t *testing.T) {
	e := newEnv(t)
	f := flags{clusterCIDR: "10.20.0.0/21", maskIPv4: 24} // 8 blocks
	stop := e.start(f)
	for _, name := range []string{"restart-a", "restart-b", "restart-c"} {
		e.createNode(name)
		e.podCIDRs(name)
	}
	stop()

	// While it is down: a Node with a block set by hand, one without any,
	// and a Node gone.
	e.createNode("restart-manual", "10.20.4.0/24")
	e.createNode("restart-waiting")
	e.deleteNode("restart-b")

	e.start(f)
	for _, name := range []string{"restart-waiting", "restart-d", "restart-e", "restart-f", "restart-g"} {
		if name != "restart-waiting" {
			e.createNode(name)
		}
		e.podCIDRs(name)
	}
	owner := e.allPodCIDRs()
	if len(owner) != 8 {
		t.Errorf("%d blocks held, want all 8: %v", len(owner), owner)
	}
	for c := range owner {
		if !inside(t, c, f.clusterCIDR) {
			t.Errorf("%s is outside %s", c, f.clusterCIDR)
		}
	}
	if owner["10.20.4.0/24"] != "restart-manual" {
		t.Errorf("10.20.4.0/24 held by %q", owner["10.20.4.0/24"])
	}
}

func TestWithoutAllocateNodeCIDRsThereIsNoController(t *testing.T) {
	cc := framework.NewControllerContext(t, framework.StartEnv(t))
	cc.Config.KubeCloudShared.ClusterCIDR = "10.0.0.0/16"
	c, err := nodeipam.New(context.Background(), cc, names.NodeIpam)
	if c != nil || err != nil {
		t.Errorf("New = %v, %v; want nil, nil", c, err)
	}
}
