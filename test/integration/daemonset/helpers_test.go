// Package daemonset tests the daemonset-controller against a real
// kube-apiserver. There is no scheduler or kubelet: a fake one binds each
// daemon pod to the node it is pinned to, marks it Running and Ready, and
// finishes graceful deletions. Nodes are cluster-wide and the apiserver is
// shared by the package's tests, so each test labels its nodes with its
// namespace and its DaemonSets select them.
package daemonset

import (
	"context"
	"maps"
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
	cfg, ns := framework.Setup(t, "ds-")
	e := &env{t: t, ctx: ns.Ctx, cfg: cfg, client: ns.Client, ns: ns.Name}
	e.kubelet.Store(true)
	t.Cleanup(func() {
		_ = e.client.CoreV1().Nodes().DeleteCollection(context.Background(), metav1.DeleteOptions{},
			metav1.ListOptions{LabelSelector: nodeLabel + "=" + e.ns})
	})
	e.stopController = e.startController()
	ns.StartKubelet(e.kubeletStep)
	return e
}

// startController starts a daemonset-controller with its own informers;
// the returned function stops it.
func (e *env) startController() (stop func()) {
	e.t.Helper()
	cc := framework.NewControllerContext(e.t, e.cfg)
	cc.Config.DaemonSetController.ConcurrentDaemonSetSyncs = 2
	return framework.StartController(e.t, cc, framework.NewController(e.t, cc, names.DaemonSet, daemonset.New))
}

// kubeletStep is the fake kubelet: it binds a pod to the node it is
// pinned to, marks a bound one Running and Ready (Failed for brokenImage)
// while e.kubelet is set, and finishes graceful deletions.
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
		_ = e.namespace().MarkRunningReady(ctx, p)
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

// createNode creates a Ready node of the test with extra labels.
func (e *env) createNode(name string, extra map[string]string) *v1.Node {
	e.t.Helper()
	lbls := map[string]string{nodeLabel: e.ns}
	maps.Copy(lbls, extra)
	return framework.CreateNode(e.t, e.client, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: e.ns + "-" + name, Labels: lbls}})
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
	return framework.Create(e.t, e.client.AppsV1().DaemonSets(e.ns), ds)
}

// updateDS applies mutate, retrying on conflicts with status writes.
func (e *env) updateDS(name string, mutate func(*apps.DaemonSet)) *apps.DaemonSet {
	e.t.Helper()
	return framework.Update(e.t, timeout, e.client.AppsV1().DaemonSets(e.ns), name, mutate)
}

func setImage(img string) func(*apps.DaemonSet) {
	return func(ds *apps.DaemonSet) { ds.Spec.Template.Spec.Containers[0].Image = img }
}

// waitDS waits until cond holds for the DaemonSet and returns it.
func (e *env) waitDS(name, what string, cond func(*apps.DaemonSet) bool) *apps.DaemonSet {
	e.t.Helper()
	return framework.WaitFor(e.t, timeout, e.client.AppsV1().DaemonSets(e.ns), name, what, cond)
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
