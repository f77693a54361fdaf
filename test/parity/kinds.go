package parity

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// kinds resolves a scenario's kind (with or without apiVersion) to a
// resource through discovery, and hands out dynamic clients for it.
type kinds struct {
	disc   discovery.CachedDiscoveryInterface
	mapper *restmapper.DeferredDiscoveryRESTMapper
	dyn    dynamic.Interface
}

func newKinds(cfg *rest.Config) (*kinds, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("parity: discovery client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("parity: dynamic client: %w", err)
	}
	cached := memory.NewMemCacheClient(dc)
	return &kinds{disc: cached, mapper: restmapper.NewDeferredDiscoveryRESTMapper(cached), dyn: dyn}, nil
}

// mapping resolves apiVersion (may be empty) and kind. Without apiVersion
// the server's groups are tried in its priority order, core first. A miss
// refreshes discovery once, for kinds a scenario has just created (CRDs).
func (k *kinds) mapping(apiVersion, kind string) (*meta.RESTMapping, error) {
	m, err := k.lookup(apiVersion, kind)
	if err != nil && meta.IsNoMatchError(err) {
		k.mapper.Reset()
		m, err = k.lookup(apiVersion, kind)
	}
	if err != nil {
		return nil, fmt.Errorf("parity: kind %s %s: %w", apiVersion, kind, err)
	}
	return m, nil
}

func (k *kinds) lookup(apiVersion, kind string) (*meta.RESTMapping, error) {
	if apiVersion != "" {
		gv, err := schema.ParseGroupVersion(apiVersion)
		if err != nil {
			return nil, err
		}
		return k.mapper.RESTMapping(gv.WithKind(kind).GroupKind(), gv.Version)
	}
	groups, err := k.disc.ServerGroups()
	if err != nil {
		return nil, err
	}
	for _, g := range groups.Groups {
		m, err := k.mapper.RESTMapping(schema.GroupKind{Group: g.Name, Kind: kind})
		if err == nil {
			return m, nil
		}
		if !meta.IsNoMatchError(err) {
			return nil, err
		}
	}
	return nil, &meta.NoKindMatchError{GroupKind: schema.GroupKind{Kind: kind}}
}

// resource returns a dynamic client for the kind, scoped to namespace when
// the kind is namespaced.
func (k *kinds) resource(apiVersion, kind, namespace string) (dynamic.ResourceInterface, *meta.RESTMapping, error) {
	m, err := k.mapping(apiVersion, kind)
	if err != nil {
		return nil, nil, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		if namespace == "" {
			return nil, nil, fmt.Errorf("parity: %s is namespaced: namespace is required", kind)
		}
		return k.dyn.Resource(m.Resource).Namespace(namespace), m, nil
	}
	return k.dyn.Resource(m.Resource), m, nil
}
