package endpointslice

import (
	"context"
	"fmt"
	"sort"
	"sync/atomic"
	"testing"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"
)

const ns = "ns"

// harness is a controller over fake informers whose caches the test fills,
// and a fake clientset that names, numbers and versions slices as the
// apiserver does.
type harness struct {
	t        *testing.T
	ctx      context.Context
	c        *Controller
	client   *fake.Clientset
	factory  informers.SharedInformerFactory
	recorder *record.FakeRecorder
	uids     atomic.Int64
}

func newHarness(t *testing.T, maxPerSlice int32) *harness {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	h := &harness{t: t, ctx: ctx, client: fake.NewSimpleClientset(), recorder: record.NewFakeRecorder(100)}
	h.client.PrependReactor("create", "endpointslices", h.onCreate)
	h.client.PrependReactor("update", "endpointslices", h.onUpdate)
	h.factory = informers.NewSharedInformerFactory(h.client, 0)
	c, err := NewController(ctx, Config{
		Name:                          "endpointslice-controller",
		Client:                        h.client,
		Pods:                          h.factory.Core().V1().Pods(),
		Services:                      h.factory.Core().V1().Services(),
		Nodes:                         h.factory.Core().V1().Nodes(),
		Slices:                        h.factory.Discovery().V1().EndpointSlices(),
		Workers:                       1,
		MaxEndpointsPerSlice:          maxPerSlice,
		PreferSameTrafficDistribution: true,
		Recorder:                      h.recorder,
	})
	if err != nil {
		t.Fatal(err)
	}
	h.c = c
	return h
}

// onCreate gives a created slice its generated name, a uid, generation 1
// and a resourceVersion, then lets the tracker store it.
func (h *harness) onCreate(action clienttesting.Action) (bool, runtime.Object, error) {
	s := action.(clienttesting.CreateAction).GetObject().(*discovery.EndpointSlice)
	n := h.uids.Add(1)
	if s.Name == "" {
		s.Name = fmt.Sprintf("%s%05d", s.GenerateName, n)
	}
	s.UID = types.UID(fmt.Sprintf("uid-%d", n))
	s.Generation = 1
	s.ResourceVersion = fmt.Sprint(n)
	return false, nil, nil
}

// onUpdate bumps the generation of an updated slice.
func (h *harness) onUpdate(action clienttesting.Action) (bool, runtime.Object, error) {
	s := action.(clienttesting.UpdateAction).GetObject().(*discovery.EndpointSlice)
	old, err := h.client.Tracker().Get(discovery.SchemeGroupVersion.WithResource("endpointslices"), s.Namespace, s.Name)
	if err != nil {
		return true, nil, err
	}
	o := old.(*discovery.EndpointSlice)
	s.UID = o.UID
	s.Generation = o.Generation + 1
	s.ResourceVersion = fmt.Sprint(h.uids.Add(1))
	return false, nil, nil
}

func (h *harness) add(objs ...runtime.Object) {
	h.t.Helper()
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *v1.Service:
			err = h.factory.Core().V1().Services().Informer().GetIndexer().Add(o)
		case *v1.Pod:
			err = h.factory.Core().V1().Pods().Informer().GetIndexer().Add(o)
		case *v1.Node:
			err = h.factory.Core().V1().Nodes().Informer().GetIndexer().Add(o)
		case *discovery.EndpointSlice:
			if err = h.client.Tracker().Add(o); err == nil {
				err = h.factory.Discovery().V1().EndpointSlices().Informer().GetIndexer().Add(o)
			}
		default:
			err = fmt.Errorf("unexpected %T", o)
		}
		if err != nil {
			h.t.Fatal(err)
		}
	}
}

func (h *harness) deletePod(name string) {
	h.t.Helper()
	idx := h.factory.Core().V1().Pods().Informer().GetIndexer()
	obj, ok, _ := idx.GetByKey(ns + "/" + name)
	if !ok {
		h.t.Fatalf("no pod %s", name)
	}
	if err := idx.Delete(obj); err != nil {
		h.t.Fatal(err)
	}
}

// catchUp makes the slice cache show what the fake API holds.
func (h *harness) catchUp() {
	h.t.Helper()
	idx := h.factory.Discovery().V1().EndpointSlices().Informer().GetIndexer()
	var objs []any
	for _, s := range h.apiSlices() {
		objs = append(objs, s)
	}
	if err := idx.Replace(objs, ""); err != nil {
		h.t.Fatal(err)
	}
}

// apiSlices returns the slices the fake API holds, by name.
func (h *harness) apiSlices() []*discovery.EndpointSlice {
	h.t.Helper()
	list, err := h.client.DiscoveryV1().EndpointSlices("").List(h.ctx, metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	out := make([]*discovery.EndpointSlice, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// sync syncs the Service and returns the write actions it made.
func (h *harness) sync(name string) ([]clienttesting.Action, error) {
	h.t.Helper()
	before := len(h.client.Actions())
	err := h.c.syncService(h.ctx, ns+"/"+name)
	var writes []clienttesting.Action
	for _, a := range h.client.Actions()[before:] {
		if a.GetVerb() != "list" && a.GetVerb() != "watch" && a.GetVerb() != "get" {
			writes = append(writes, a)
		}
	}
	return writes, err
}

// mustSync syncs, fails on error, and catches the cache up.
func (h *harness) mustSync(name string) []clienttesting.Action {
	h.t.Helper()
	writes, err := h.sync(name)
	if err != nil {
		h.t.Fatalf("sync %s: %v", name, err)
	}
	h.catchUp()
	return writes
}

func (h *harness) events() []string {
	var out []string
	for {
		select {
		case e := <-h.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func verbs(actions []clienttesting.Action) map[string]int {
	out := map[string]int{}
	for _, a := range actions {
		out[a.GetVerb()]++
	}
	return out
}

// Object builders.

func service(name string, mutate ...func(*v1.Service)) *v1.Service {
	s := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("svc-" + name), CreationTimestamp: metav1.Now()},
		Spec: v1.ServiceSpec{
			Selector:   map[string]string{"app": name},
			ClusterIP:  "10.96.0.10",
			IPFamilies: []v1.IPFamily{v1.IPv4Protocol},
			Ports:      []v1.ServicePort{{Name: "http", Port: 80, Protocol: v1.ProtocolTCP, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	for _, m := range mutate {
		m(s)
	}
	return s
}

func pod(name, app, node string, ips ...string) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("pod-" + name), Labels: map[string]string{"app": app}, ResourceVersion: "1"},
		Spec:       v1.PodSpec{NodeName: node, Containers: []v1.Container{{Name: "c"}}},
		Status: v1.PodStatus{
			Phase:      v1.PodRunning,
			Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}},
		},
	}
	for _, ip := range ips {
		p.Status.PodIPs = append(p.Status.PodIPs, v1.PodIP{IP: ip})
	}
	if len(ips) > 0 {
		p.Status.PodIP = ips[0]
	}
	return p
}

func pods(n int, app, node string) []*v1.Pod {
	out := make([]*v1.Pod, n)
	for i := range out {
		out[i] = pod(fmt.Sprintf("%s-%03d", app, i), app, node, fmt.Sprintf("10.1.%d.%d", i/250, i%250+1))
	}
	return out
}

func node(name, zone string, cpu string) *v1.Node {
	n := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}},
		Status: v1.NodeStatus{
			Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)},
			Conditions:  []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}},
		},
	}
	if zone != "" {
		n.Labels[v1.LabelTopologyZone] = zone
	}
	return n
}

func withPort(p *v1.Pod, name string, port int32) *v1.Pod {
	p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports, v1.ContainerPort{Name: name, ContainerPort: port, Protocol: v1.ProtocolTCP})
	return p
}

func notReady(p *v1.Pod) *v1.Pod {
	p.Status.Conditions[0].Status = v1.ConditionFalse
	return p
}

func terminating(p *v1.Pod) *v1.Pod {
	now := metav1.Now()
	p.DeletionTimestamp = &now
	return p
}

func addObjs[T runtime.Object](h *harness, objs []T) {
	h.t.Helper()
	for _, o := range objs {
		h.add(o)
	}
}

func sizes(slices []*discovery.EndpointSlice) []int {
	out := make([]int, len(slices))
	for i, s := range slices {
		out[i] = len(s.Endpoints)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(out)))
	return out
}

func endpointNames(slices ...*discovery.EndpointSlice) []string {
	var out []string
	for _, s := range slices {
		for _, ep := range s.Endpoints {
			out = append(out, ep.TargetRef.Name)
		}
	}
	sort.Strings(out)
	return out
}

var _ = ptr.To[int]
