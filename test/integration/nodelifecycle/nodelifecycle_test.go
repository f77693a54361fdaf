// Package nodelifecycle tests the node-lifecycle-controller against a real
// kube-apiserver, with grace periods of seconds instead of minutes.
package nodelifecycle

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/internal/controller/nodeutil"
	"github.com/kcm-dev/kcm/pkg/controller/nodelifecycle"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const (
	timeout        = 30 * time.Second
	gracePeriod    = 3 * time.Second
	heartbeatEvery = 300 * time.Millisecond
)

// setup starts the controller through its real constructor with short
// periods and returns an admin client.
func setup(t *testing.T) kubernetes.Interface {
	t.Helper()
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	cc := framework.NewControllerContext(t, cfg)
	nlc := &cc.Config.NodeLifecycleController
	nlc.NodeMonitorPeriod = metav1.Duration{Duration: 200 * time.Millisecond}
	nlc.NodeMonitorGracePeriod = metav1.Duration{Duration: gracePeriod}
	nlc.NodeStartupGracePeriod = metav1.Duration{Duration: 2 * gracePeriod}
	nlc.NodeEvictionRate = 10
	nlc.SecondaryNodeEvictionRate = 1
	nlc.LargeClusterSizeThreshold = 50
	nlc.UnhealthyZoneThreshold = 0.55
	c, err := nodelifecycle.New(context.Background(), cc, names.NodeLifecycle)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if c.Name() != names.NodeLifecycle {
		t.Errorf("Name() = %q", c.Name())
	}
	framework.StartController(t, cc, c)
	return client
}

// kubelet plays a node's kubelet: it registers the node Ready and renews
// its Lease until stopped.
type kubelet struct {
	t      *testing.T
	client kubernetes.Interface
	name   string
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
}

// startKubelet registers a Ready node in zone and starts heartbeating.
func startKubelet(t *testing.T, client kubernetes.Interface, name, zone string, conds ...v1.NodeCondition) *kubelet {
	t.Helper()
	ctx := context.Background()
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		v1.LabelTopologyZone: zone, v1.LabelOSStable: "linux", v1.LabelArchStable: "amd64",
	}}}
	created, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	now := metav1.Now()
	ready := append([]v1.NodeCondition{{
		Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status",
		LastHeartbeatTime: now, LastTransitionTime: now,
	}}, conds...)
	// The controller may write the new node (its not-ready taint) first.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		created.Status.Conditions = ready
		_, err := client.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			if fresh, getErr := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{}); getErr == nil {
				created = fresh
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	lease := &coordv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: v1.NamespaceNodeLease, Name: name},
		Spec:       coordv1.LeaseSpec{HolderIdentity: ptr.To(name), LeaseDurationSeconds: ptr.To[int32](40), RenewTime: ptr.To(metav1.NowMicro())},
	}
	if _, err := client.CoordinationV1().Leases(v1.NamespaceNodeLease).Create(ctx, lease, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.CoordinationV1().Leases(v1.NamespaceNodeLease).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	k := &kubelet{t: t, client: client, name: name, stop: make(chan struct{}), done: make(chan struct{})}
	go k.heartbeat()
	t.Cleanup(k.Stop)
	return k
}

func (k *kubelet) heartbeat() {
	defer close(k.done)
	ticker := time.NewTicker(heartbeatEvery)
	defer ticker.Stop()
	for {
		select {
		case <-k.stop:
			return
		case <-ticker.C:
		}
		ctx := context.Background()
		lease, err := k.client.CoordinationV1().Leases(v1.NamespaceNodeLease).Get(ctx, k.name, metav1.GetOptions{})
		if err != nil {
			continue
		}
		lease.Spec.RenewTime = ptr.To(metav1.NowMicro())
		_, _ = k.client.CoordinationV1().Leases(v1.NamespaceNodeLease).Update(ctx, lease, metav1.UpdateOptions{})
	}
}

// Stop stops heartbeating, as a dead kubelet.
func (k *kubelet) Stop() {
	k.once.Do(func() { close(k.stop) })
	<-k.done
}

func getNode(t *testing.T, client kubernetes.Interface, name string) *v1.Node {
	t.Helper()
	n, err := client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func hasTaint(n *v1.Node, key string, effect v1.TaintEffect) bool {
	return nodeutil.TaintExists(n.Spec.Taints, &v1.Taint{Key: key, Effect: effect})
}

// waitForTaints waits until the node has every taint in want and none in
// absent.
func waitForTaints(t *testing.T, client kubernetes.Interface, name string, want, absent []v1.Taint) {
	t.Helper()
	framework.Eventually(t, timeout, func() (bool, error) {
		n := getNode(t, client, name)
		for i := range want {
			if !nodeutil.TaintExists(n.Spec.Taints, &want[i]) {
				return false, nil
			}
		}
		for i := range absent {
			if nodeutil.TaintExists(n.Spec.Taints, &absent[i]) {
				return false, nil
			}
		}
		return true, nil
	})
}

func noSchedule(key string) v1.Taint { return v1.Taint{Key: key, Effect: v1.TaintEffectNoSchedule} }
func noExecute(key string) v1.Taint  { return v1.Taint{Key: key, Effect: v1.TaintEffectNoExecute} }

// TestHeartbeatingNodeUntainted: the not-ready taint the API server puts on
// a new node goes once the node is Ready, and the beta labels follow.
func TestHeartbeatingNodeUntainted(t *testing.T) {
	client := setup(t)
	startKubelet(t, client, "alive", "z1")
	if n := getNode(t, client, "alive"); !hasTaint(n, v1.TaintNodeNotReady, v1.TaintEffectNoSchedule) {
		t.Logf("the API server did not taint the new node: %v", n.Spec.Taints)
	}
	waitForTaints(t, client, "alive", nil, []v1.Taint{noSchedule(v1.TaintNodeNotReady), noExecute(v1.TaintNodeNotReady)})
	framework.Eventually(t, timeout, func() (bool, error) {
		n := getNode(t, client, "alive")
		return n.Labels["beta.kubernetes.io/os"] == "linux" && n.Labels["beta.kubernetes.io/arch"] == "amd64", nil
	})
	// Stays healthy well past the grace period, thanks to its Lease.
	time.Sleep(2 * gracePeriod)
	n := getNode(t, client, "alive")
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady && c.Status != v1.ConditionTrue {
			t.Errorf("heartbeating node is %s: %s", c.Status, c.Message)
		}
	}
	if len(n.Spec.Taints) != 0 {
		t.Errorf("heartbeating node tainted: %v", n.Spec.Taints)
	}
}

// TestNodeStopsReporting: a node whose Lease stops gets its kubelet
// conditions Unknown, the unreachable taints, and its pods marked not
// ready.
func TestNodeStopsReporting(t *testing.T) {
	client := setup(t)
	ctx := context.Background()
	startKubelet(t, client, "survivor", "z2") // keeps the zone from full disruption
	dead := startKubelet(t, client, "dead", "z2")
	waitForTaints(t, client, "dead", nil, []v1.Taint{noSchedule(v1.TaintNodeNotReady)})

	ns := createNamespace(t, client)
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p"},
		Spec: v1.PodSpec{
			NodeName:                     "dead",
			AutomountServiceAccountToken: ptr.To(false),
			Containers:                   []v1.Container{{Name: "c", Image: "example.com/c"}},
		},
	}
	created, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.Now()}}
	if _, err := client.CoreV1().Pods(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	dead.Stop()
	framework.Eventually(t, timeout, func() (bool, error) {
		n := getNode(t, client, "dead")
		for _, ct := range []v1.NodeConditionType{v1.NodeReady, v1.NodeMemoryPressure, v1.NodeDiskPressure, v1.NodePIDPressure} {
			_, c := nodeutil.GetNodeCondition(&n.Status, ct)
			if c == nil || c.Status != v1.ConditionUnknown {
				return false, nil
			}
			if ct == v1.NodeReady && (c.Reason != "NodeStatusUnknown" || c.Message != "Kubelet stopped posting node status.") {
				return false, fmt.Errorf("Ready condition %+v", c)
			}
		}
		return true, nil
	})
	waitForTaints(t, client, "dead",
		[]v1.Taint{noSchedule(v1.TaintNodeUnreachable), noExecute(v1.TaintNodeUnreachable)},
		[]v1.Taint{noSchedule(v1.TaintNodeNotReady), noExecute(v1.TaintNodeNotReady)})
	framework.Eventually(t, timeout, func() (bool, error) {
		p, err := client.CoreV1().Pods(ns).Get(ctx, "p", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodReady {
				return c.Status == v1.ConditionFalse, nil
			}
		}
		return false, nil
	})
	waitForEvent(t, client, "default", "NodeNotReady", "Node dead status is now: NodeNotReady")
	waitForEvent(t, client, ns, "NodeNotReady", "Node is not ready")

	survivor := getNode(t, client, "survivor")
	if len(survivor.Spec.Taints) != 0 {
		t.Errorf("survivor tainted: %v", survivor.Spec.Taints)
	}
}

func waitForEvent(t *testing.T, client kubernetes.Interface, ns, reason, message string) {
	t.Helper()
	framework.Eventually(t, timeout, func() (bool, error) {
		evs, err := client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, e := range evs.Items {
			if e.Reason == reason && e.Message == message && e.Source.Component == "node-controller" {
				return true, nil
			}
		}
		return false, nil
	})
}

func createNamespace(t *testing.T, client kubernetes.Interface) string {
	t.Helper()
	ctx := context.Background()
	ns, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "nlc-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The ServiceAccount admission plugin wants the default ServiceAccount.
	sa := &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if _, err := client.CoreV1().ServiceAccounts(ns.Name).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	return ns.Name
}

// TestCordon: spec.unschedulable adds the unschedulable taint; uncordoning
// removes it.
func TestCordon(t *testing.T) {
	client := setup(t)
	startKubelet(t, client, "cordoned", "z3")
	setUnschedulable := func(v bool) {
		t.Helper()
		n := getNode(t, client, "cordoned")
		n.Spec.Unschedulable = v
		if _, err := client.CoreV1().Nodes().Update(context.Background(), n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitForTaints(t, client, "cordoned", nil, []v1.Taint{noSchedule(v1.TaintNodeNotReady)})
	setUnschedulable(true)
	waitForTaints(t, client, "cordoned", []v1.Taint{noSchedule(v1.TaintNodeUnschedulable)}, nil)
	setUnschedulable(false)
	waitForTaints(t, client, "cordoned", nil, []v1.Taint{noSchedule(v1.TaintNodeUnschedulable)})
}

// TestConditionClears: a pressure condition taints the node until it
// clears; taints of others are left alone.
func TestConditionClears(t *testing.T) {
	client := setup(t)
	ctx := context.Background()
	now := metav1.Now()
	startKubelet(t, client, "pressured", "z4", v1.NodeCondition{
		Type: v1.NodeMemoryPressure, Status: v1.ConditionTrue, Reason: "KubeletHasInsufficientMemory",
		LastHeartbeatTime: now, LastTransitionTime: now,
	})
	foreign := v1.Taint{Key: "example.com/dedicated", Value: "x", Effect: v1.TaintEffectNoSchedule}
	n := getNode(t, client, "pressured")
	n.Spec.Taints = append(n.Spec.Taints, foreign)
	if _, err := client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForTaints(t, client, "pressured", []v1.Taint{noSchedule(v1.TaintNodeMemoryPressure), foreign}, []v1.Taint{noSchedule(v1.TaintNodeNotReady)})

	n = getNode(t, client, "pressured")
	_, c := nodeutil.GetNodeCondition(&n.Status, v1.NodeMemoryPressure)
	c.Status, c.Reason, c.LastTransitionTime = v1.ConditionFalse, "KubeletHasSufficientMemory", metav1.Now()
	if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForTaints(t, client, "pressured", []v1.Taint{foreign}, []v1.Taint{noSchedule(v1.TaintNodeMemoryPressure)})
}

// TestPatchNodeStaleCopy checks against the real API server that a patch
// computed from an outdated copy is rejected and redone on a fresh read,
// keeping the taint added meanwhile, while a status update meanwhile does
// not get in the way.
func TestPatchNodeStaleCopy(t *testing.T) {
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	node, err := client.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "patched"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.CoreV1().Nodes().Delete(context.Background(), "patched", metav1.DeleteOptions{}) })
	stale := node.DeepCopy()

	// Someone else adds a taint and the kubelet posts a status.
	foreign := v1.Taint{Key: "example.com/a", Effect: v1.TaintEffectNoSchedule}
	node.Spec.Taints = append(node.Spec.Taints, foreign)
	node, err = client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, LastHeartbeatTime: metav1.Now()}}
	if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	mine := v1.Taint{Key: "example.com/b", Effect: v1.TaintEffectNoExecute}
	patched, err := nodeutil.PatchNode(ctx, client, stale, func(n *v1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, mine)
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		n.Labels["example.com/l"] = "v"
	})
	if err != nil {
		t.Fatal(err)
	}
	if !nodeutil.TaintExists(patched.Spec.Taints, &foreign) || !nodeutil.TaintExists(patched.Spec.Taints, &mine) || patched.Labels["example.com/l"] != "v" {
		t.Errorf("patched node: taints %v, labels %v", patched.Spec.Taints, patched.Labels)
	}

	// A status update alone does not fail the patch's test: one request.
	fresh := getNode(t, client, "patched")
	fresh.Status.Conditions[0].LastHeartbeatTime = metav1.NewTime(time.Now().Add(time.Second))
	if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, fresh, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	patched, err = nodeutil.PatchNode(ctx, client, fresh, func(n *v1.Node) { n.Spec.Taints = nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(patched.Spec.Taints) != 0 {
		t.Errorf("taints left: %v", patched.Spec.Taints)
	}
}
