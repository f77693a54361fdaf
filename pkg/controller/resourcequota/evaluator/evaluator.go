package evaluator

import (
	"fmt"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/apiserver/pkg/quota/v1/generic"
	"k8s.io/client-go/tools/cache"
)

// Evaluator measures the usage of one group resource in a namespace.
type Evaluator interface {
	// GroupResource is the resource whose objects it measures.
	GroupResource() schema.GroupResource
	// MatchingResources returns the quota resource names of input it
	// measures.
	MatchingResources(input []corev1.ResourceName) []corev1.ResourceName
	// UsageStats sums the usage of the namespace's objects that match the
	// scopes and scope selector, for at least options.Resources.
	UsageStats(options quota.UsageStatsOptions) (quota.UsageStats, error)
}

// Features are the feature gates upstream's evaluators consult.
type Features struct {
	PodLevelResources                   bool
	PodLevelResourcesFixKubeletQOSClass bool
	InPlacePodVerticalScaling           bool
	VolumeAttributesClass               bool
	RecoverVolumeExpansionFailure       bool
	DRAExtendedResource                 bool
}

// ListFunc lists the objects of a namespace.
type ListFunc = generic.ListFuncByNamespace

// InformerList lists a namespace's objects from inf's cache, and fails
// until the informer has synced (an empty cache would read as no usage).
func InformerList(inf cache.SharedIndexInformer, gr schema.GroupResource) ListFunc {
	return func(namespace string) ([]runtime.Object, error) {
		items, err := indexed(inf, gr, namespace)
		if err != nil {
			return nil, err
		}
		out := make([]runtime.Object, 0, len(items))
		for _, item := range items {
			if obj, ok := item.(runtime.Object); ok {
				out = append(out, obj)
			}
		}
		return out, nil
	}
}

func indexed(inf cache.SharedIndexInformer, gr schema.GroupResource, namespace string) ([]any, error) {
	if !inf.HasSynced() {
		return nil, fmt.Errorf("%v not yet synced", gr)
	}
	return inf.GetIndexer().ByIndex(cache.NamespaceIndex, namespace)
}

// Registry holds the evaluators by group resource. It is safe for
// concurrent use.
type Registry struct {
	mu sync.RWMutex
	m  map[schema.GroupResource]Evaluator
}

// NewRegistry returns a registry holding evaluators.
func NewRegistry(evaluators ...Evaluator) *Registry {
	r := &Registry{m: map[schema.GroupResource]Evaluator{}}
	for _, e := range evaluators {
		r.m[e.GroupResource()] = e
	}
	return r
}

// Get returns the evaluator of gr, or nil.
func (r *Registry) Get(gr schema.GroupResource) Evaluator {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.m[gr]
}

// AddIfAbsent registers e unless gr already has an evaluator, and reports
// whether it did.
func (r *Registry) AddIfAbsent(e Evaluator) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.m[e.GroupResource()]; ok {
		return false
	}
	r.m[e.GroupResource()] = e
	return true
}

// Remove drops the evaluator of gr.
func (r *Registry) Remove(gr schema.GroupResource) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.m, gr)
}

// List returns every evaluator, ordered by group resource.
func (r *Registry) List() []Evaluator {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Evaluator, 0, len(r.m))
	for _, e := range r.m {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b Evaluator) int {
		return compareGroupResource(a.GroupResource(), b.GroupResource())
	})
	return out
}

func compareGroupResource(a, b schema.GroupResource) int {
	if a.Group != b.Group {
		if a.Group < b.Group {
			return -1
		}
		return 1
	}
	switch {
	case a.Resource < b.Resource:
		return -1
	case a.Resource > b.Resource:
		return 1
	}
	return 0
}
