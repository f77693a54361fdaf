package daemonset

import (
	"fmt"
	"testing"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/internal/controller/hashing"
	"github.com/kcm-dev/kcm/internal/controller/podcontrol"
)

var (
	t0       = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	selected = map[string]string{"app": "web"}
)

type dsOpt func(*apps.DaemonSet)

// newDS is a RollingUpdate DaemonSet "web" (maxUnavailable 1, as the API
// server defaults it) of generation 1, as the API server returns it.
func newDS(opts ...dsOpt) *apps.DaemonSet {
	ds := &apps.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: "web", UID: "ds-uid", Generation: 1, ResourceVersion: "10",
			Annotations: map[string]string{apps.DeprecatedTemplateGeneration: "1"},
		},
		Spec: apps.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: selected},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "img:1"}}},
			},
			UpdateStrategy: apps.DaemonSetUpdateStrategy{
				Type: apps.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &apps.RollingUpdateDaemonSet{
					MaxUnavailable: ptr.To(intstr.FromInt32(1)),
					MaxSurge:       ptr.To(intstr.FromInt32(0)),
				},
			},
			RevisionHistoryLimit: ptr.To[int32](10),
		},
	}
	for _, o := range opts {
		o(ds)
	}
	return ds
}

func withImage(img string) dsOpt {
	return func(ds *apps.DaemonSet) { ds.Spec.Template.Spec.Containers[0].Image = img }
}
func withGeneration(g int64) dsOpt {
	return func(ds *apps.DaemonSet) {
		ds.Generation = g
		ds.Annotations[apps.DeprecatedTemplateGeneration] = fmt.Sprint(g)
	}
}
func withStrategy(maxUnavailable, maxSurge string) dsOpt {
	return func(ds *apps.DaemonSet) {
		ds.Spec.UpdateStrategy.RollingUpdate = &apps.RollingUpdateDaemonSet{
			MaxUnavailable: ptr.To(intstr.Parse(maxUnavailable)),
			MaxSurge:       ptr.To(intstr.Parse(maxSurge)),
		}
	}
}
func onDelete(ds *apps.DaemonSet) {
	ds.Spec.UpdateStrategy = apps.DaemonSetUpdateStrategy{Type: apps.OnDeleteDaemonSetStrategyType}
}
func withNodeSelector(sel map[string]string) dsOpt {
	return func(ds *apps.DaemonSet) { ds.Spec.Template.Spec.NodeSelector = sel }
}
func withTolerations(t ...v1.Toleration) dsOpt {
	return func(ds *apps.DaemonSet) { ds.Spec.Template.Spec.Tolerations = t }
}
func withMinReady(s int32) dsOpt { return func(ds *apps.DaemonSet) { ds.Spec.MinReadySeconds = s } }
func withStatus(st apps.DaemonSetStatus) dsOpt {
	return func(ds *apps.DaemonSet) { ds.Status = st }
}

type nodeOpt func(*v1.Node)

func newNode(name string, opts ...nodeOpt) *v1.Node {
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}}}
	for _, o := range opts {
		o(n)
	}
	return n
}

func nodeLabels(l map[string]string) nodeOpt { return func(n *v1.Node) { n.Labels = l } }
func tainted(key string, effect v1.TaintEffect) nodeOpt {
	return func(n *v1.Node) { n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: key, Effect: effect}) }
}

func nodes(n int) []runtime.Object {
	out := make([]runtime.Object, n)
	for i := range out {
		out[i] = newNode(fmt.Sprintf("node-%d", i))
	}
	return out
}

type podOpt func(*v1.Pod)

// daemonPod is a pod of ds bound to node, of ds's current template unless
// an option changes its hash label.
func daemonPod(ds *apps.DaemonSet, name, node string, opts ...podOpt) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: name, UID: types.UID(name + "-uid"), ResourceVersion: "1",
			Labels: map[string]string{
				"app": "web", hashLabel: currentHash(ds), generationLabel: ds.Annotations[apps.DeprecatedTemplateGeneration],
			},
			CreationTimestamp: metav1.NewTime(t0.Add(-time.Hour)),
			OwnerReferences:   []metav1.OwnerReference{*metav1.NewControllerRef(ds, controllerKind)},
		},
		Spec:   v1.PodSpec{NodeName: node, Affinity: pinToNode(nil, node)},
		Status: v1.PodStatus{Phase: v1.PodRunning},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func currentHash(ds *apps.DaemonSet) string {
	return hashing.PodTemplateHash(&ds.Spec.Template, ds.Status.CollisionCount)
}

func readyFor(d time.Duration) podOpt {
	return func(p *v1.Pod) {
		p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0.Add(-d))}}
	}
}
func ready(p *v1.Pod) { readyFor(time.Hour)(p) }
func oldRevision(p *v1.Pod) {
	p.Labels[hashLabel] = "old-hash"
	p.Labels[generationLabel] = "0"
}
func createdAt(t time.Time) podOpt {
	return func(p *v1.Pod) { p.CreationTimestamp = metav1.NewTime(t) }
}
func phase(ph v1.PodPhase) podOpt { return func(p *v1.Pod) { p.Status.Phase = ph } }
func unbound(p *v1.Pod)           { p.Spec.NodeName = "" }
func terminating(p *v1.Pod)       { p.DeletionTimestamp = &metav1.Time{Time: t0} }
func orphan(p *v1.Pod)            { p.OwnerReferences = nil }

// currentRevision is the revision ds's controller creates for its
// template, numbered rev.
func currentRevision(t *testing.T, ds *apps.DaemonSet, rev int64) *apps.ControllerRevision {
	t.Helper()
	data, err := revisionData(ds)
	if err != nil {
		t.Fatal(err)
	}
	h := currentHash(ds)
	return &apps.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: "web-" + h, UID: types.UID("rev-" + h), ResourceVersion: "1",
			Labels:          map[string]string{"app": "web", hashLabel: h},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ds, controllerKind)},
		},
		Data:     runtime.RawExtension{Raw: data},
		Revision: rev,
	}
}

// fixture is a controller whose caches and fake clientset hold the same
// objects, with a fake pod control, recorder and clock.
type fixture struct {
	c        *Controller
	client   *fake.Clientset
	pods     *podcontrol.Fake
	recorder *record.FakeRecorder
	clock    *testingclock.FakeClock
	stores   map[string]cache.Indexer
}

func newFixture(t *testing.T, objs ...runtime.Object) *fixture {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	clk := testingclock.NewFakeClock(t0)
	pc := &podcontrol.Fake{}
	rec := record.NewFakeRecorder(100)
	c, err := NewController(ctx, Config{
		Name: "daemonset-controller", Client: client,
		DaemonSets: factory.Apps().V1().DaemonSets(), Revisions: factory.Apps().V1().ControllerRevisions(),
		Pods: factory.Core().V1().Pods(), Nodes: factory.Core().V1().Nodes(),
		Clock: clk, Workers: 1, ConsistencyCheck: true, PodControl: pc, Recorder: rec,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.queue.ShutDown)
	t.Cleanup(c.nodeQueue.ShutDown)
	f := &fixture{c: c, client: client, pods: pc, recorder: rec, clock: clk, stores: map[string]cache.Indexer{
		"DaemonSet":          factory.Apps().V1().DaemonSets().Informer().GetIndexer(),
		"ControllerRevision": factory.Apps().V1().ControllerRevisions().Informer().GetIndexer(),
		"Pod":                factory.Core().V1().Pods().Informer().GetIndexer(),
		"Node":               factory.Core().V1().Nodes().Informer().GetIndexer(),
	}}
	for _, o := range objs {
		f.add(t, o)
	}
	client.ClearActions()
	return f
}

// add puts obj into its informer's cache only.
func (f *fixture) add(t *testing.T, obj runtime.Object) {
	t.Helper()
	var kind string
	switch obj.(type) {
	case *apps.DaemonSet:
		kind = "DaemonSet"
	case *apps.ControllerRevision:
		kind = "ControllerRevision"
	case *v1.Pod:
		kind = "Pod"
	case *v1.Node:
		kind = "Node"
	default:
		t.Fatalf("unexpected %T", obj)
	}
	if err := f.stores[kind].Add(obj); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) sync(t *testing.T) error {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	return f.c.sync(ctx, "ns/web")
}

// createdOn returns the nodes the pods created were pinned to, in order.
func (f *fixture) createdOn(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, tmpl := range f.pods.Templates {
		p := &v1.Pod{Spec: tmpl.Spec}
		n, err := targetNodeName(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

// statusUpdates returns the DaemonSets written by UpdateStatus.
func (f *fixture) statusUpdates() []*apps.DaemonSet {
	var out []*apps.DaemonSet
	for _, a := range f.client.Actions() {
		if u, ok := a.(clienttesting.UpdateAction); ok && a.GetSubresource() == "status" {
			out = append(out, u.GetObject().(*apps.DaemonSet))
		}
	}
	return out
}

// actions returns "verb resource[/subresource]" of every client call.
func (f *fixture) actions() []string {
	var out []string
	for _, a := range f.client.Actions() {
		s := a.GetVerb() + " " + a.GetResource().Resource
		if a.GetSubresource() != "" {
			s += "/" + a.GetSubresource()
		}
		out = append(out, s)
	}
	return out
}

// events drains the recorder.
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
