// Package daemonset tests the daemonset-controller against a real
// kube-apiserver. There is no scheduler or kubelet: a fake one binds each
// daemon pod to the node it is pinned to, marks it Running and Ready, and
// finishes graceful deletions. Nodes are cluster-wide and the apiserver is
// shared by the package's tests, so each test labels its nodes with its
// namespace and its DaemonSets select them.
package daemonset

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controller/daemonset"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const (
	timeout = 60 * time.Second
	// nodeLabel marks a test's nodes (value: its namespace).
	nodeLabel = "daemonset.test/ns"
	// brokenImage is an image whose pods the fake kubelet lets fail.
	brokenImage = "registry.example/agent:broken"
)

var podLabels = map[string]string{"app": "agent"}

// env is one test's view of the cluster.
type env struct {
	t      *testing.T
	ctx    context.Context
	cfg    *rest.Config
	client kubernetes.Interface
	ns     string
	// kubelet turns the fake kubelet's readiness on and off.
	kubelet atomic.Bool
	// stopController stops the controller setup started.
	stopController func()
}

// setup creates a namespace, starts the controller through its real
// constructor, and the fake kubelet.
func setup(t *testing.T) *env {
	t.Helper()
	cfg := framework.StartEnv(t)
	e := &env{t: t, ctx: context.Background(), cfg: cfg, client: kubernetes.NewForConfigOrDie(cfg)}
	e.kubelet.Store(true)
	ns, err := e.client.CoreV1().Namespaces().Create(e.ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "ds-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.ns = ns.Name
	t.Cleanup(func() {
		_ = e.client.CoreV1().Nodes().DeleteCollection(context.Background(), metav1.DeleteOptions{},
			metav1.ListOptions{LabelSelector: nodeLabel + "=" + e.ns})
	})
	e.stopController = e.startController()
	e.startKubelet()
	return e
}

// startController starts a daemonset-controller with its own informers;
// the returned function stops it.
func (e *env) startController() (stop func()) {
	e.t.Helper()
	cc := framework.NewControllerContext(e.t, e.cfg)
	cc.Config.DaemonSetController.ConcurrentDaemonSetSyncs = 2
	c, err := daemonset.New(context.Background(), cc, names.DaemonSet)
	if err != nil {
		e.t.Fatalf("New: %v", err)
	}
	if c.Name() != names.DaemonSet {
		e.t.Errorf("Name() = %q", c.Name())
	}
	return framework.StartController(e.t, cc, c)
}

// startKubelet binds the namespace's pods to the node they are pinned
// to, marks bound ones Running and Ready (Failed for brokenImage) while
// e.kubelet is set, and finishes graceful deletions, until the test ends.
func (e *env) startKubelet() {
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan struct{})
	e.t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			pods, err := e.client.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				continue
			}
			for i := range pods.Items {
				e.kubeletStep(ctx, &pods.Items[i])
			}
		}
	}()
}

func (e *env) kubeletStep(ctx context.Context, p *v1.Pod) {
	pods := e.client.CoreV1().Pods(e.ns)
	switch {
	case p.DeletionTimestamp != nil:
		_ = pods.Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	case p.Spec.NodeName == "":
		node := pinnedNode(p)
		if node == "" {
			return
		}
		_ = pods.Bind(ctx, &v1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name}, Target: v1.ObjectReference{Kind: "Node", Name: node}}, metav1.CreateOptions{})
	case !e.kubelet.Load() || p.Status.Phase != v1.PodPending && p.Status.Phase != "":
	case p.Spec.Containers[0].Image == brokenImage:
		p.Status.Phase = v1.PodFailed
		_, _ = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{})
	default:
		p.Status.Phase = v1.PodRunning
		p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.Now()}}
		_, _ = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{})
	}
}

// pinnedNode is the node a daemon pod's required node affinity names.
func pinnedNode(p *v1.Pod) string {
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range term.MatchFields {
			if f.Key == "metadata.name" && len(f.Values) == 1 {
				return f.Values[0]
			}
		}
	}
	return ""
}

// createNode creates a node of the test with extra labels, and removes
// the not-ready taint the apiserver's TaintNodesByCondition admission
// gives every new node (no node-lifecycle-controller runs here), so that
// the node looks Ready.
func (e *env) createNode(name string, extra map[string]string) *v1.Node {
	e.t.Helper()
	lbls := map[string]string{nodeLabel: e.ns}
	for k, v := range extra {
		lbls[k] = v
	}
	n := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: e.ns + "-" + name, Labels: lbls},
		Status:     v1.NodeStatus{Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}},
	}
	n, err := e.client.CoreV1().Nodes().Create(e.ctx, n, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	n.Spec.Taints = nil
	if n, err = e.client.CoreV1().Nodes().Update(e.ctx, n, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	return n
}

type dsOpt func(*apps.DaemonSet)

// createDS creates a DaemonSet selecting the test's nodes.
func (e *env) createDS(name string, opts ...dsOpt) *apps.DaemonSet {
	e.t.Helper()
	ds := &apps.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec: apps.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: podLabels},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
				Spec: v1.PodSpec{
					NodeSelector: map[string]string{nodeLabel: e.ns},
					Containers:   []v1.Container{{Name: "c", Image: "registry.example/agent:1"}},
				},
			},
		},
	}
	for _, o := range opts {
		o(ds)
	}
	ds, err := e.client.AppsV1().DaemonSets(e.ns).Create(e.ctx, ds, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return ds
}

// updateDS applies mutate, retrying on conflicts with status writes.
func (e *env) updateDS(name string, mutate func(*apps.DaemonSet)) *apps.DaemonSet {
	e.t.Helper()
	var out *apps.DaemonSet
	framework.Eventually(e.t, timeout, func() (bool, error) {
		ds, err := e.client.AppsV1().DaemonSets(e.ns).Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		mutate(ds)
		out, err = e.client.AppsV1().DaemonSets(e.ns).Update(e.ctx, ds, metav1.UpdateOptions{})
		return err == nil, nil
	})
	return out
}

func setImage(img string) func(*apps.DaemonSet) {
	return func(ds *apps.DaemonSet) { ds.Spec.Template.Spec.Containers[0].Image = img }
}

// waitDS waits until cond holds for the DaemonSet and returns it.
func (e *env) waitDS(name, what string, cond func(*apps.DaemonSet) bool) *apps.DaemonSet {
	e.t.Helper()
	var ds *apps.DaemonSet
	deadline := time.Now().Add(timeout)
	for {
		var err error
		ds, err = e.client.AppsV1().DaemonSets(e.ns).Get(e.ctx, name, metav1.GetOptions{})
		if err == nil && cond(ds) {
			return ds
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("DaemonSet %s: %s: not within %v (status %+v, err %v)", name, what, timeout, ds.Status, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// rolledOut reports what kubectl rollout status waits for: the current
// generation observed, every desired node running an updated, available
// pod.
func rolledOut(ds *apps.DaemonSet) bool {
	st := ds.Status
	return st.ObservedGeneration >= ds.Generation && st.UpdatedNumberScheduled == st.DesiredNumberScheduled &&
		st.NumberAvailable == st.DesiredNumberScheduled && st.CurrentNumberScheduled == st.DesiredNumberScheduled &&
		st.NumberMisscheduled == 0
}

// pods returns the daemon pods that are not being deleted, by node.
func (e *env) pods() map[string][]v1.Pod {
	e.t.Helper()
	list, err := e.client.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(podLabels).String()})
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string][]v1.Pod{}
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			node := p.Spec.NodeName
			if node == "" {
				node = pinnedNode(&p)
			}
			out[node] = append(out[node], p)
		}
	}
	return out
}

// waitPodsOn waits until exactly the named nodes (of the test) each run
// one pod and returns them by node.
func (e *env) waitPodsOn(nodes ...string) map[string]v1.Pod {
	e.t.Helper()
	var got map[string][]v1.Pod
	framework.Eventually(e.t, timeout, func() (bool, error) {
		got = e.pods()
		if len(got) != len(nodes) {
			return false, nil
		}
		for _, n := range nodes {
			if len(got[e.ns+"-"+n]) != 1 {
				return false, nil
			}
		}
		return true, nil
	})
	out := map[string]v1.Pod{}
	for node, ps := range got {
		out[node] = ps[0]
	}
	return out
}

func (e *env) revisions() []apps.ControllerRevision {
	e.t.Helper()
	list, err := e.client.AppsV1().ControllerRevisions(e.ns).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return list.Items
}

func (e *env) namespace() framework.Namespace {
	return framework.Namespace{T: e.t, Ctx: e.ctx, Client: e.client, Name: e.ns}
}

func (e *env) waitEvents(name, reason string, atLeast int) []v1.Event {
	e.t.Helper()
	return e.namespace().WaitEvents("DaemonSet", name, reason, atLeast, timeout)
}
