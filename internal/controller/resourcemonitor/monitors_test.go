package resourcemonitor

import (
	"context"
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	metadatafake "k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
)

var (
	pods    = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	secrets = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	widgets = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
)

func noopHandler(schema.GroupVersionResource) (cache.ResourceEventHandler, error) {
	return cache.ResourceEventHandlerFuncs{}, nil
}

// A resource another controller already watches in full is monitored
// through that informer; every other one through a metadata informer, and
// nothing is shared before the factories started.
func TestMonitorsShareTypedInformers(t *testing.T) {
	typedPods := cache.NewSharedIndexInformer(&cache.ListWatch{}, nil, 0, cache.Indexers{})
	factory := metadatainformer.NewSharedInformerFactory(metadatafake.NewSimpleMetadataClient(runtime.NewScheme()), 0)
	m := &Monitors{
		Factory: factory,
		Typed: func(r schema.GroupVersionResource) (cache.SharedIndexInformer, bool) {
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
	m.Typed = nil
	if m.informerFor(pods) == typedPods {
		t.Error("no typed source: want the metadata informer")
	}
}

// Sync skips ignored resources and those whose handler fails (reporting
// them), removes monitors of resources gone, and Informer finds a monitor
// by group and resource.
func TestSyncAddsRemovesAndReports(t *testing.T) {
	ctx := context.Background()
	factory := metadatainformer.NewSharedInformerFactory(metadatafake.NewSimpleMetadataClient(runtime.NewScheme()), 0)
	m := &Monitors{
		Factory: factory,
		Ignored: map[schema.GroupResource]struct{}{secrets.GroupResource(): {}},
		Handler: func(r schema.GroupVersionResource) (cache.ResourceEventHandler, error) {
			if r == widgets {
				return nil, errors.New("no kind")
			}
			return noopHandler(r)
		},
	}
	if err := m.Sync(ctx, Set{pods: {}, secrets: {}, widgets: {}}); err == nil {
		t.Error("Sync: want the widgets error")
	}
	if _, _, ok := m.Informer(secrets.GroupResource()); ok {
		t.Error("ignored secrets got a monitor")
	}
	if _, _, ok := m.Informer(widgets.GroupResource()); ok {
		t.Error("widgets got a monitor despite the handler error")
	}
	inf, synced, ok := m.Informer(pods.GroupResource())
	if !ok || synced || inf != factory.ForResource(pods).Informer() {
		t.Errorf("pods: informer %v, synced %v, ok %v", inf, synced, ok)
	}
	if u := m.Unsynced(); len(u) != 1 || u[0] != pods.String() {
		t.Errorf("Unsynced = %v", u)
	}
	if err := m.Sync(ctx, Set{}); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := m.Informer(pods.GroupResource()); ok {
		t.Error("pods monitor kept after the resource went")
	}
	if u := m.Unsynced(); len(u) != 1 || u[0] != "no monitors" {
		t.Errorf("Unsynced = %v", u)
	}
}

// preferred serves fixed preferred resources, one group failing.
type preferred struct {
	discovery.ServerResourcesInterface
}

func (preferred) ServerPreferredResources() ([]*metav1.APIResourceList, error) {
	return []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "pods", Namespaced: true, Verbs: metav1.Verbs{"create", "delete", "list", "watch"}},
			{Name: "nodes", Verbs: metav1.Verbs{"create", "delete", "list", "watch"}},
			{Name: "bindings", Namespaced: true, Verbs: metav1.Verbs{"create"}},
		}},
	}, &discovery.ErrGroupDiscoveryFailed{Groups: map[schema.GroupVersion]error{widgets.GroupVersion(): errors.New("down")}}
}

func (p preferred) ServerPreferredNamespacedResources() ([]*metav1.APIResourceList, error) {
	all, err := p.ServerPreferredResources()
	return discovery.FilteredBy(discovery.ResourcePredicateFunc(func(_ string, r *metav1.APIResource) bool {
		return r.Namespaced
	}), all), err
}

func TestDiscoverScopesVerbsAndFailedGroups(t *testing.T) {
	ctx := context.Background()
	all, err := Discover(ctx, preferred{}, AllScopes, "delete", "list", "watch")
	nodes := schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	if len(all) != 2 || !has(all, pods) || !has(all, nodes) {
		t.Errorf("all scopes = %v", all)
	}
	namespaced, _ := Discover(ctx, preferred{}, NamespacedOnly, "create", "delete", "list", "watch")
	if len(namespaced) != 1 || !has(namespaced, pods) {
		t.Errorf("namespaced = %v", namespaced)
	}
	old := Set{widgets: {}, secrets: {}}
	KeepFailedGroups(all, old, err, nil)
	if !has(all, widgets) || has(all, secrets) {
		t.Errorf("after KeepFailedGroups: %v", all)
	}
	none := Set{}
	KeepFailedGroups(none, old, err, func(schema.GroupVersionResource) bool { return false })
	if len(none) != 0 {
		t.Errorf("keep=false kept %v", none)
	}
	if got := Diff(Set{secrets: {}}, Set{pods: {}}); got != "added: [/v1, Resource=pods], removed: [/v1, Resource=secrets]" {
		t.Errorf("Diff = %q", got)
	}
}

func has(s Set, r schema.GroupVersionResource) bool { _, ok := s[r]; return ok }
