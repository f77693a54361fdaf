package controllermanager

import (
	"reflect"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"
)

// StartedTypedInformer returns the typed shared informer of resource if
// another controller already uses it, that is if InformerFactory has
// started an informer for the resource's Go type; otherwise false.
//
// It lets a controller that needs only metadata of every resource (the
// garbage collector) share the full-object informers other controllers
// already run, instead of watching and decoding those resources twice,
// while every other resource is watched metadata-only. Upstream shares
// typed informers for every built-in resource, which also starts full
// informers nobody else needs (every Secret and ConfigMap, in full).
//
// Meaningful only after InformersStarted is closed.
func (c *ControllerContext) StartedTypedInformer(resource schema.GroupVersionResource) (cache.SharedIndexInformer, bool) {
	return startedTypedInformer(c.InformerFactory, c.RESTMapper.KindFor, resource)
}

func startedTypedInformer(factory informers.SharedInformerFactory, kindFor func(schema.GroupVersionResource) (schema.GroupVersionKind, error), resource schema.GroupVersionResource) (cache.SharedIndexInformer, bool) {
	if factory == nil {
		return nil, false
	}
	kind, err := kindFor(resource)
	if err != nil {
		return nil, false
	}
	obj, err := scheme.Scheme.New(kind)
	if err != nil {
		return nil, false // not a built-in type: no typed informer
	}
	closed := make(chan struct{})
	close(closed)
	// With a closed channel this only lists the started informers' types.
	if _, started := factory.WaitForCacheSync(closed)[reflect.TypeOf(obj)]; !started {
		return nil, false
	}
	gi, err := factory.ForResource(resource)
	if err != nil {
		return nil, false
	}
	inf := gi.Informer()
	return inf, inf != nil
}
