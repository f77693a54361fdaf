package controllerref

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

const (
	// PodControllerIndex indexes pods by PodControllerIndexKey. The name is
	// upstream's, so that controllers sharing the pod informer share it.
	PodControllerIndex = "podController"
	// ControllerUIDIndex indexes objects by the UID of their controller.
	ControllerUIDIndex = "controllerUID"
)

// PodControllerIndexKey is "<namespace>/<kind>/<name>/<uid>" of a pod's
// controllerRef, or just "<namespace>" for orphans.
func PodControllerIndexKey(namespace string, ref *metav1.OwnerReference) string {
	if ref == nil {
		return namespace
	}
	return namespace + "/" + ref.Kind + "/" + ref.Name + "/" + string(ref.UID)
}

// AddPodControllerIndex adds PodControllerIndex to a pod informer, unless
// another controller did.
func AddPodControllerIndex(informer cache.SharedIndexInformer) error {
	if _, ok := informer.GetIndexer().GetIndexers()[PodControllerIndex]; ok {
		return nil
	}
	return informer.AddIndexers(cache.Indexers{PodControllerIndex: func(obj any) ([]string, error) {
		pod, ok := obj.(*v1.Pod)
		if !ok {
			return nil, nil
		}
		return []string{PodControllerIndexKey(pod.Namespace, metav1.GetControllerOfNoCopy(pod))}, nil
	}})
}

// PodsByOwner returns the cached pods controlled by owner (of kind
// ownerKind) and, with includeOrphans, the pods of its namespace that have
// no controller. The pods are the cache's: do not modify them.
func PodsByOwner(indexer cache.Indexer, owner metav1.Object, ownerKind string, includeOrphans bool) ([]*v1.Pod, error) {
	switch {
	case owner.GetNamespace() == "":
		return nil, fmt.Errorf("no owner namespace provided")
	case owner.GetName() == "":
		return nil, fmt.Errorf("no owner name provided")
	case owner.GetUID() == "":
		return nil, fmt.Errorf("no owner uid provided")
	case ownerKind == "":
		return nil, fmt.Errorf("no owner kind provided")
	}
	keys := []string{PodControllerIndexKey(owner.GetNamespace(), &metav1.OwnerReference{Kind: ownerKind, Name: owner.GetName(), UID: owner.GetUID()})}
	if includeOrphans {
		keys = append(keys, PodControllerIndexKey(owner.GetNamespace(), nil))
	}
	var pods []*v1.Pod
	for _, key := range keys {
		objs, err := indexer.ByIndex(PodControllerIndex, key)
		if err != nil {
			return nil, err
		}
		for _, obj := range objs {
			if pod, ok := obj.(*v1.Pod); ok {
				pods = append(pods, pod)
			}
		}
	}
	return pods, nil
}

// AddControllerUIDIndex adds ControllerUIDIndex to an informer of any
// kind, unless another controller did.
func AddControllerUIDIndex(informer cache.SharedIndexInformer) error {
	if _, ok := informer.GetIndexer().GetIndexers()[ControllerUIDIndex]; ok {
		return nil
	}
	return informer.AddIndexers(cache.Indexers{ControllerUIDIndex: func(obj any) ([]string, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, nil
		}
		if ref := metav1.GetControllerOfNoCopy(m); ref != nil {
			return []string{string(ref.UID)}, nil
		}
		return nil, nil
	}})
}

// ByControllerUID returns the cached objects of type T whose controller
// has uid. They are the cache's: do not modify them.
func ByControllerUID[T any](indexer cache.Indexer, uid types.UID) ([]T, error) {
	objs, err := indexer.ByIndex(ControllerUIDIndex, string(uid))
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(objs))
	for _, obj := range objs {
		if t, ok := obj.(T); ok {
			out = append(out, t)
		}
	}
	return out, nil
}
