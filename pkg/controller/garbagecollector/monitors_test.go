package garbagecollector

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	metadatafake "k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
)

// A resource another controller already watches in full is monitored
// through that informer; every other one through a metadata informer, and
// nothing is shared before the factories started.
func TestMonitorsShareTypedInformers(t *testing.T) {
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	typedPods := cache.NewSharedIndexInformer(&cache.ListWatch{}, nil, 0, cache.Indexers{})
	factory := metadatainformer.NewSharedInformerFactory(metadatafake.NewSimpleMetadataClient(runtime.NewScheme()), 0)
	m := &monitors{
		factory: factory,
		typed: func(r schema.GroupVersionResource) (cache.SharedIndexInformer, bool) {
			return typedPods, r == pods
		},
	}
	if m.informerFor(pods) == typedPods {
		t.Error("typed informer shared before the factories started")
	}
	m.started = true
	if m.informerFor(pods) != typedPods {
		t.Error("pods: the typed informer other controllers run is not shared")
	}
	if got := m.informerFor(secrets); got == typedPods || got != factory.ForResource(secrets).Informer() {
		t.Error("secrets: want the metadata informer")
	}
	m.typed = nil
	if m.informerFor(pods) == typedPods {
		t.Error("no typed source: want the metadata informer")
	}
}
