package storageutil

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-helpers/storage/ephemeral"
)

// PodPVCIndex is upstream's name of the pod informer index from
// "<namespace>/<claim>" to the pods whose volumes name that claim.
const PodPVCIndex = "pod-pvc-index"

// ClaimNames returns the names of the claims pod's volumes refer to: a
// persistentVolumeClaim source's claimName and, for a generic ephemeral
// volume, "<pod>-<volume>".
func ClaimNames(pod *v1.Pod) []string {
	var out []string
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		switch {
		case vol.PersistentVolumeClaim != nil:
			out = append(out, vol.PersistentVolumeClaim.ClaimName)
		case vol.Ephemeral != nil:
			out = append(out, ephemeral.VolumeClaimName(pod, vol))
		}
	}
	return out
}

func podPVCKeys(obj any) ([]string, error) {
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return nil, nil
	}
	names := ClaimNames(pod)
	keys := make([]string, 0, len(names))
	for _, n := range names {
		if n != "" {
			keys = append(keys, pod.Namespace+"/"+n)
		}
	}
	return keys, nil
}

// AddPodPVCIndex adds PodPVCIndex to the pod informer unless another
// controller sharing it already did.
func AddPodPVCIndex(podInformer cache.SharedIndexInformer) error {
	if _, ok := podInformer.GetIndexer().GetIndexers()[PodPVCIndex]; ok {
		return nil
	}
	return podInformer.AddIndexers(cache.Indexers{PodPVCIndex: podPVCKeys})
}

// PodsUsingClaim returns the cached pods whose volumes name the claim
// namespace/name. The index must have been added with AddPodPVCIndex.
func PodsUsingClaim(indexer cache.Indexer, namespace, name string) ([]*v1.Pod, error) {
	objs, err := indexer.ByIndex(PodPVCIndex, namespace+"/"+name)
	if err != nil {
		return nil, err
	}
	pods := make([]*v1.Pod, 0, len(objs))
	for _, o := range objs {
		if p, ok := o.(*v1.Pod); ok {
			pods = append(pods, p)
		}
	}
	return pods, nil
}
