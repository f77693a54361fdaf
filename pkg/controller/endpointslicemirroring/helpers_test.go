package endpointslicemirroring

import (
	"context"
	"sort"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
)

const testNS = "ns"

// fixture is a controller on a fake clientset whose informer stores the
// test fills directly; refresh copies the clientset's slices into the
// slice store, as an informer would.
type fixture struct {
	t        *testing.T
	ctx      context.Context
	c        *Controller
	client   *fake.Clientset
	factory  informers.SharedInformerFactory
	recorder *record.FakeRecorder
}

func newFixture(t *testing.T, max int32, objs ...runtime.Object) *fixture {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	client := newFakeClient(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	c, err := newController(ctx, "endpointslice-mirroring-controller", client,
		factory.Core().V1().Endpoints(), factory.Discovery().V1().EndpointSlices(), factory.Core().V1().Services(),
		Config{MaxEndpointsPerSubset: max, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.queue.ShutDown)
	recorder := record.NewFakeRecorder(100)
	c.recorder = recorder
	f := &fixture{t: t, ctx: ctx, c: c, client: client, factory: factory, recorder: recorder}
	for _, o := range objs {
		f.store(o)
	}
	return f
}

// store puts an object into its informer's store.
func (f *fixture) store(o runtime.Object) {
	f.t.Helper()
	var err error
	switch o := o.(type) {
	case *v1.Endpoints:
		err = f.factory.Core().V1().Endpoints().Informer().GetStore().Add(o)
	case *v1.Service:
		err = f.factory.Core().V1().Services().Informer().GetStore().Add(o)
	case *discovery.EndpointSlice:
		err = f.factory.Discovery().V1().EndpointSlices().Informer().GetStore().Add(o)
	}
	if err != nil {
		f.t.Fatal(err)
	}
}

// refresh makes the slice store hold what the clientset holds.
func (f *fixture) refresh() {
	f.t.Helper()
	list := make([]any, 0)
	for _, s := range f.slices() {
		list = append(list, s)
	}
	if err := f.factory.Discovery().V1().EndpointSlices().Informer().GetStore().Replace(list, ""); err != nil {
		f.t.Fatal(err)
	}
}

// slices returns the clientset's slices by name.
func (f *fixture) slices() []*discovery.EndpointSlice {
	f.t.Helper()
	list, err := f.client.DiscoveryV1().EndpointSlices("").List(f.ctx, metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	out := make([]*discovery.EndpointSlice, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// sync syncs key and returns the slice writes it made.
func (f *fixture) sync(key string) ([]string, error) {
	f.t.Helper()
	f.client.ClearActions()
	err := f.c.syncEndpoints(f.ctx, key)
	var writes []string
	for _, a := range f.client.Actions() {
		if a.GetResource().Resource == "endpointslices" && a.GetVerb() != "list" && a.GetVerb() != "watch" {
			writes = append(writes, a.GetVerb())
		}
	}
	return writes, err
}

// events drains the recorded Events.
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

func service(name string, selector map[string]string) *v1.Service {
	return &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: name},
		Spec: v1.ServiceSpec{Selector: selector}}
}

func endpoints(name string, subsets ...v1.EndpointSubset) *v1.Endpoints {
	return &v1.Endpoints{ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: name, UID: types.UID("ep-" + name)},
		Subsets: subsets}
}

func addrs(ips ...string) []v1.EndpointAddress {
	out := make([]v1.EndpointAddress, len(ips))
	for i, ip := range ips {
		out[i] = v1.EndpointAddress{IP: ip}
	}
	return out
}

func port(name string, p int32) v1.EndpointPort {
	return v1.EndpointPort{Name: name, Port: p, Protocol: v1.ProtocolTCP}
}

// addressesOf lists a slice's addresses with "!" marking not-ready ones.
func addressesOf(s *discovery.EndpointSlice) string {
	var out []string
	for _, e := range s.Endpoints {
		a := strings.Join(e.Addresses, ",")
		if e.Conditions.Ready != nil && !*e.Conditions.Ready {
			a += "!"
		}
		out = append(out, a)
	}
	return strings.Join(out, " ")
}

// newFakeClient is a fake clientset that generates slice names and uids
// and counts slice generations, as the API server does.
func newFakeClient(objs ...runtime.Object) *fake.Clientset {
	client := fake.NewClientset(objs...)
	var mu sync.Mutex
	generated := 0
	client.PrependReactor("create", "endpointslices", func(a k8stesting.Action) (bool, runtime.Object, error) {
		s := a.(k8stesting.CreateAction).GetObject().(*discovery.EndpointSlice)
		if s.Name == "" && s.GenerateName != "" {
			mu.Lock()
			generated++
			s.Name = s.GenerateName + string(rune('a'+generated-1)) + "xxxx"
			mu.Unlock()
		}
		s.UID = types.UID("uid-" + s.Name)
		s.Generation = 1
		return false, nil, nil
	})
	client.PrependReactor("update", "endpointslices", func(a k8stesting.Action) (bool, runtime.Object, error) {
		s := a.(k8stesting.UpdateAction).GetObject().(*discovery.EndpointSlice)
		s.UID = types.UID("uid-" + s.Name)
		old, err := client.Tracker().Get(discovery.SchemeGroupVersion.WithResource("endpointslices"), s.Namespace, s.Name)
		if err == nil {
			s.Generation = old.(*discovery.EndpointSlice).Generation + 1
		}
		return false, nil, nil
	})
	return client
}
