package endpoints

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
)

const ns = "ns"

type harness struct {
	t        *testing.T
	ctx      context.Context
	c        *Controller
	client   *fake.Clientset
	factory  informers.SharedInformerFactory
	recorder *record.FakeRecorder
	rv       int
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	h := &harness{t: t, ctx: ctx, client: fake.NewSimpleClientset(), recorder: record.NewFakeRecorder(100)}
	bump := func(action clienttesting.Action) (bool, runtime.Object, error) {
		var obj runtime.Object
		switch a := action.(type) {
		// Also matches an UpdateAction: the two interfaces have the same methods.
		case clienttesting.CreateAction:
			obj = a.GetObject()
		}
		h.rv++
		obj.(*v1.Endpoints).ResourceVersion = fmt.Sprint(h.rv)
		return false, nil, nil
	}
	h.client.PrependReactor("create", "endpoints", bump)
	h.client.PrependReactor("update", "endpoints", bump)
	h.factory = informers.NewSharedInformerFactory(h.client, 0)
	c, err := NewController(ctx, Config{
		Name:      "endpoints-controller",
		Client:    h.client,
		Pods:      h.factory.Core().V1().Pods(),
		Services:  h.factory.Core().V1().Services(),
		Endpoints: h.factory.Core().V1().Endpoints(),
		Workers:   1,
		Recorder:  h.recorder,
	})
	if err != nil {
		t.Fatal(err)
	}
	h.c = c
	return h
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
		case *v1.Endpoints:
			if err = h.client.Tracker().Add(o); err == nil {
				err = h.factory.Core().V1().Endpoints().Informer().GetIndexer().Add(o)
			}
		}
		if err != nil {
			h.t.Fatal(err)
		}
	}
}

func (h *harness) remove(obj runtime.Object) {
	h.t.Helper()
	var err error
	switch o := obj.(type) {
	case *v1.Service:
		err = h.factory.Core().V1().Services().Informer().GetIndexer().Delete(o)
	case *v1.Pod:
		err = h.factory.Core().V1().Pods().Informer().GetIndexer().Delete(o)
	}
	if err != nil {
		h.t.Fatal(err)
	}
}

// catchUp makes the Endpoints cache show what the fake API holds.
func (h *harness) catchUp() {
	h.t.Helper()
	list, err := h.client.CoreV1().Endpoints("").List(h.ctx, metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	var objs []any
	for i := range list.Items {
		objs = append(objs, &list.Items[i])
	}
	if err := h.factory.Core().V1().Endpoints().Informer().GetIndexer().Replace(objs, ""); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) sync(name string) ([]string, error) {
	h.t.Helper()
	before := len(h.client.Actions())
	err := h.c.syncService(h.ctx, ns+"/"+name)
	var verbs []string
	for _, a := range h.client.Actions()[before:] {
		if a.GetVerb() != "list" && a.GetVerb() != "watch" {
			verbs = append(verbs, a.GetVerb())
		}
	}
	return verbs, err
}

func (h *harness) mustSync(name string) []string {
	h.t.Helper()
	verbs, err := h.sync(name)
	if err != nil {
		h.t.Fatalf("sync %s: %v", name, err)
	}
	h.catchUp()
	return verbs
}

func (h *harness) endpoints(name string) *v1.Endpoints {
	h.t.Helper()
	e, err := h.client.CoreV1().Endpoints(ns).Get(h.ctx, name, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return e
}

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

func pod(name, app string, ready bool, ips ...string) *v1.Pod {
	status := v1.ConditionFalse
	if ready {
		status = v1.ConditionTrue
	}
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name), Labels: map[string]string{"app": app}},
		Spec:       v1.PodSpec{NodeName: "n1", Containers: []v1.Container{{Name: "c"}}},
		Status:     v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: status}}},
	}
	for _, ip := range ips {
		p.Status.PodIPs = append(p.Status.PodIPs, v1.PodIP{IP: ip})
	}
	if len(ips) > 0 {
		p.Status.PodIP = ips[0]
	}
	return p
}
