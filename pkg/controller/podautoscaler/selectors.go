package podautoscaler

import (
	"slices"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// selectorStore keeps, per namespace, the pod selector of each HPA's
// target, to find pods that more than one HPA would scale.
type selectorStore struct {
	mu         sync.RWMutex
	namespaces map[string]map[types.NamespacedName]labels.Selector
}

func newSelectorStore() *selectorStore {
	return &selectorStore{namespaces: map[string]map[types.NamespacedName]labels.Selector{}}
}

// putIfAbsent registers an HPA with sel unless it is registered; it
// reports whether it was new.
func (s *selectorStore) putIfAbsent(key types.NamespacedName, sel labels.Selector) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	ns := s.namespaces[key.Namespace]
	if ns == nil {
		ns = map[types.NamespacedName]labels.Selector{}
		s.namespaces[key.Namespace] = ns
	}
	if _, ok := ns[key]; ok {
		return false
	}
	ns[key] = sel
	return true
}

// putIfPresent replaces a registered HPA's selector; it reports whether
// the HPA was registered (false: it was deleted meanwhile).
func (s *selectorStore) putIfPresent(key types.NamespacedName, sel labels.Selector) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	ns := s.namespaces[key.Namespace]
	if _, ok := ns[key]; !ok {
		return false
	}
	ns[key] = sel
	return true
}

func (s *selectorStore) delete(key types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ns := s.namespaces[key.Namespace]; ns != nil {
		delete(ns, key)
		if len(ns) == 0 {
			delete(s.namespaces, key.Namespace)
		}
	}
}

// matching returns the HPAs of namespace whose selector matches one of the
// pods, at most limit of them (0: all).
func (s *selectorStore) matching(namespace string, pods []*v1.Pod, limit int) []types.NamespacedName {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ns := s.namespaces[namespace]
	if len(ns) == 0 {
		return nil
	}
	// Pods of one ReplicaSet share their labels: match each set once.
	sets := map[string]labels.Set{}
	for _, p := range pods {
		set := labels.Set(p.Labels)
		sets[set.String()] = set
	}
	found := map[types.NamespacedName]bool{}
	var out []types.NamespacedName
	for _, set := range sets {
		for key, sel := range ns {
			if found[key] || !sel.Matches(set) {
				continue
			}
			found[key] = true
			out = append(out, key)
			if limit > 0 && len(out) >= limit {
				return sorted(out)
			}
		}
	}
	return sorted(out)
}

// sorted orders keys by name, so that messages naming them are stable
// (upstream's follow map order).
func sorted(keys []types.NamespacedName) []types.NamespacedName {
	slices.SortFunc(keys, func(a, b types.NamespacedName) int { return strings.Compare(a.String(), b.String()) })
	return keys
}
