package endpointutil

import (
	"fmt"

	discovery "k8s.io/api/discovery/v1"
	"k8s.io/client-go/tools/cache"
)

// SliceServiceIndex is the EndpointSlice informer index of slices by
// "<namespace>/<kubernetes.io/service-name label>".
const SliceServiceIndex = "endpointutil.sliceService"

// AddSliceServiceIndex adds SliceServiceIndex to the EndpointSlice
// informer, unless another controller did.
func AddSliceServiceIndex(informer cache.SharedIndexInformer) error {
	if _, ok := informer.GetIndexer().GetIndexers()[SliceServiceIndex]; ok {
		return nil
	}
	err := informer.AddIndexers(cache.Indexers{SliceServiceIndex: func(obj any) ([]string, error) {
		s, ok := obj.(*discovery.EndpointSlice)
		if !ok {
			return nil, nil
		}
		name, ok := s.Labels[discovery.LabelServiceName]
		if !ok || name == "" {
			return nil, nil
		}
		return []string{s.Namespace + "/" + name}, nil
	}})
	if err != nil {
		return fmt.Errorf("adding the %s index: %w", SliceServiceIndex, err)
	}
	return nil
}

// SlicesOfService returns the cached slices labelled for the Service and
// managed by manager. They are the cache's: do not modify them.
func SlicesOfService(indexer cache.Indexer, namespace, name, manager string) ([]*discovery.EndpointSlice, error) {
	objs, err := indexer.ByIndex(SliceServiceIndex, namespace+"/"+name)
	if err != nil {
		return nil, err
	}
	out := make([]*discovery.EndpointSlice, 0, len(objs))
	for _, obj := range objs {
		if s, ok := obj.(*discovery.EndpointSlice); ok && s.Labels[discovery.LabelManagedBy] == manager {
			out = append(out, s)
		}
	}
	return out, nil
}
