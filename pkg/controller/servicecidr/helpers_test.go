package servicecidr

import (
	"context"
	"sort"
	"testing"
	"time"

	networking "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
)

var now = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

type fixture struct {
	t        *testing.T
	ctx      context.Context
	c        *Controller
	client   *fake.Clientset
	factory  informers.SharedInformerFactory
	clock    *testingclock.FakeClock
	recorder *record.FakeRecorder
}

func newFixture(t *testing.T, objs ...runtime.Object) *fixture {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	clk := testingclock.NewFakeClock(now)
	c, err := newController(ctx, ControllerName, client,
		factory.Networking().V1().ServiceCIDRs(), factory.Networking().V1().IPAddresses(), clk)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.queue.ShutDown)
	recorder := record.NewFakeRecorder(10)
	c.recorder = recorder
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *networking.ServiceCIDR:
			err = factory.Networking().V1().ServiceCIDRs().Informer().GetStore().Add(o)
		case *networking.IPAddress:
			err = factory.Networking().V1().IPAddresses().Informer().GetStore().Add(o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return &fixture{t: t, ctx: ctx, c: c, client: client, factory: factory, clock: clk, recorder: recorder}
}

// sync syncs key and returns the verbs (and subresources) of its writes.
func (f *fixture) sync(key string) ([]string, error) {
	f.t.Helper()
	f.client.ClearActions()
	err := f.c.sync(f.ctx, key)
	var writes []string
	for _, a := range f.client.Actions() {
		if v := a.GetVerb(); v != "get" && v != "list" && v != "watch" {
			if s := a.GetSubresource(); s != "" {
				v += "/" + s
			}
			writes = append(writes, v)
		}
	}
	return writes, err
}

func (f *fixture) get(name string) *networking.ServiceCIDR {
	f.t.Helper()
	cidr, err := f.client.NetworkingV1().ServiceCIDRs().Get(f.ctx, name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return cidr
}

// queued drains the queue and returns its keys, sorted.
func (f *fixture) queued() []string {
	var out []string
	for f.c.queue.Len() > 0 {
		k, _ := f.c.queue.Get()
		out = append(out, k)
		f.c.queue.Done(k)
	}
	sort.Strings(out)
	return out
}

func serviceCIDR(name string, cidrs ...string) *networking.ServiceCIDR {
	return &networking.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: networking.ServiceCIDRSpec{CIDRs: cidrs}}
}

// deleting returns cidr marked deleted at when, holding the finalizer.
func deleting(cidr *networking.ServiceCIDR, when time.Time) *networking.ServiceCIDR {
	cidr.Finalizers = []string{Finalizer}
	cidr.DeletionTimestamp = &metav1.Time{Time: when}
	return cidr
}

func ipAddress(ip, manager string) *networking.IPAddress {
	family := "IPv4"
	for _, ch := range ip {
		if ch == ':' {
			family = "IPv6"
		}
	}
	return &networking.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: ip, Labels: map[string]string{
		networking.LabelManagedBy: manager, networking.LabelIPAddressFamily: family}}}
}
