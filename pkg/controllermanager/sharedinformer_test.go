package controllermanager

import (
	"context"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
)

func TestStartedTypedInformer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	factory := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	pods := factory.Core().V1().Pods().Informer()
	kinds := map[schema.GroupVersionResource]schema.GroupVersionKind{
		{Version: "v1", Resource: "pods"}:                          {Version: "v1", Kind: "Pod"},
		{Version: "v1", Resource: "configmaps"}:                    {Version: "v1", Kind: "ConfigMap"},
		{Group: "example.com", Version: "v1", Resource: "widgets"}: {Group: "example.com", Version: "v1", Kind: "Widget"},
	}
	kindFor := func(r schema.GroupVersionResource) (schema.GroupVersionKind, error) {
		if k, ok := kinds[r]; ok {
			return k, nil
		}
		return schema.GroupVersionKind{}, errors.New("no such resource")
	}
	podsGVR := schema.GroupVersionResource{Version: "v1", Resource: "pods"}

	if _, ok := startedTypedInformer(factory, kindFor, podsGVR); ok {
		t.Error("pods informer reported before the factory started it")
	}
	factory.Start(ctx.Done())
	if inf, ok := startedTypedInformer(factory, kindFor, podsGVR); !ok || inf.GetStore() != pods.GetStore() {
		t.Errorf("pods: got %v, %v; want the controllers' informer", inf, ok)
	}
	for _, r := range []schema.GroupVersionResource{
		{Version: "v1", Resource: "configmaps"},                    // built-in, nobody uses it
		{Group: "example.com", Version: "v1", Resource: "widgets"}, // not built-in
		{Version: "v1", Resource: "unknown"},                       // not in discovery
	} {
		if _, ok := startedTypedInformer(factory, kindFor, r); ok {
			t.Errorf("%s: reported a typed informer", r)
		}
	}
	// Asking must not have created a ConfigMap informer.
	factory.Start(ctx.Done())
	if n := len(factory.WaitForCacheSync(ctx.Done())); n != 1 {
		t.Errorf("%d informers started, want only pods", n)
	}
}

func TestStartedTypedInformerNilFactory(t *testing.T) {
	if _, ok := startedTypedInformer(nil, nil, schema.GroupVersionResource{Resource: "pods"}); ok {
		t.Error("nil factory reported an informer")
	}
}
