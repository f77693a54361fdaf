package resourcequota

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kcm-dev/kcm/pkg/controller/resourcequota/evaluator"
)

// fakeDiscovery serves fixed namespaced resources.
type fakeDiscovery struct {
	discovery.ServerResourcesInterface
	resources []*metav1.APIResourceList
	err       error
}

func (d *fakeDiscovery) ServerPreferredNamespacedResources() ([]*metav1.APIResourceList, error) {
	return d.resources, d.err
}

var quotable = metav1.Verbs{"create", "delete", "list", "watch"}

func coreResources(names ...string) *metav1.APIResourceList {
	rl := &metav1.APIResourceList{GroupVersion: "v1"}
	for _, n := range names {
		rl.APIResources = append(rl.APIResources, metav1.APIResource{Name: n, Namespaced: true, Verbs: quotable})
	}
	return rl
}

type fixture struct {
	t       *testing.T
	ctx     context.Context
	client  *fake.Clientset
	factory informers.SharedInformerFactory
	disco   *fakeDiscovery
	clock   *testingclock.FakeClock
	c       *Controller
}

// newFixture builds a controller over a fake clientset holding objs, with
// its typed informers started and synced and monitors for the resources
// the fake discovery serves (all of them typed informers of the same
// factory).
func newFixture(t *testing.T, objs ...runtime.Object) *fixture {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	started := make(chan struct{})
	f := &fixture{t: t, ctx: ctx, client: client, factory: factory, clock: testingclock.NewFakeClock(time.Now()),
		disco: &fakeDiscovery{resources: []*metav1.APIResourceList{coreResources("pods", "services", "persistentvolumeclaims",
			"secrets", "configmaps", "resourcequotas", "replicationcontrollers", "events", "bindings")}}}
	c, err := newController(ctx, Config{
		Name:      "resourcequota-controller",
		Client:    client,
		Discovery: f.disco,
		Informers: factory,
		Metadata:  metadatainformer.NewSharedInformerFactory(metadatafake.NewSimpleMetadataClient(runtime.NewScheme()), 0),
		Typed: func(r schema.GroupVersionResource) (cache.SharedIndexInformer, bool) {
			gi, err := factory.ForResource(r)
			if err != nil {
				return nil, false
			}
			return gi.Informer(), true
		},
		InformersStarted: started,
		Clock:            f.clock,
		Features:         evaluator.Features{InPlacePodVerticalScaling: true, PodLevelResources: true, VolumeAttributesClass: true, RecoverVolumeExpansionFailure: true},
		Workers:          1,
	})
	if err != nil {
		t.Fatal(err)
	}
	f.c = c
	factory.Start(ctx.Done())
	close(started)
	c.monitors.Start(ctx)
	c.syncResources(ctx, nil)
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	if !c.monitors.WaitForSync(ctx) {
		t.Fatal("monitors did not sync")
	}
	return f
}

func rl(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

func newQuota(name string, hard corev1.ResourceList) *corev1.ResourceQuota {
	return &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: "1"},
		Spec: corev1.ResourceQuotaSpec{Hard: hard}}
}

func newPod(name string, cpu string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
	if cpu != "" {
		p.Spec.Containers[0].Resources.Requests = rl("cpu", cpu)
	}
	return p
}

// statusWrites returns the quota statuses the controller wrote.
func (f *fixture) statusWrites() []*corev1.ResourceQuota {
	var out []*corev1.ResourceQuota
	for _, a := range f.client.Actions() {
		if a.GetVerb() == "update" && a.GetSubresource() == "status" {
			out = append(out, a.(interface{ GetObject() runtime.Object }).GetObject().(*corev1.ResourceQuota))
		}
	}
	return out
}

// quotaFromCache waits for the informer to hold q's current version.
func (f *fixture) quota(name string) *corev1.ResourceQuota {
	f.t.Helper()
	q, err := f.c.lister.ResourceQuotas("ns").Get(name)
	if err != nil {
		f.t.Fatal(err)
	}
	return q
}

// newUnsyncedCount is the object count evaluator of a resource no monitor
// follows yet.
func newUnsyncedCount(c *Controller) evaluator.Evaluator {
	gr := schema.GroupResource{Group: "example.com", Resource: "widgets"}
	return evaluator.NewObjectCount(gr, c.count(gr))
}
