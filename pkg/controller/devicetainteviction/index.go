package devicetainteviction

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
)

// Index names. They are this controller's own (a shared informer refuses
// a second index of the same name), so no other controller's index is
// relied upon.
const (
	// slicePoolIndex: ResourceSlice -> "<driver>/<pool>".
	slicePoolIndex = "deviceTaintEviction.slicePool"
	// claimPoolIndex: allocated ResourceClaim -> each "<driver>/<pool>"
	// it has a device from.
	claimPoolIndex = "deviceTaintEviction.claimPool"
	// podGroupIndex: pod -> "<namespace>/<PodGroup>" it belongs to
	// (only under DRAWorkloadResourceClaims, as upstream).
	podGroupIndex = "deviceTaintEviction.podGroup"
)

// poolKey names a pool. Driver names are DNS subdomains (no slash), so
// the key is unambiguous although pool names may contain slashes.
func poolKey(driver, pool string) string { return driver + "/" + pool }

func slicePoolIndexFunc(obj any) ([]string, error) {
	slice, ok := obj.(*resourceapi.ResourceSlice)
	if !ok {
		return nil, nil
	}
	return []string{poolKey(slice.Spec.Driver, slice.Spec.Pool.Name)}, nil
}

func claimPoolIndexFunc(obj any) ([]string, error) {
	claim, ok := obj.(*resourceapi.ResourceClaim)
	if !ok || claim.Status.Allocation == nil {
		return nil, nil
	}
	keys := sets.New[string]()
	for _, r := range claim.Status.Allocation.Devices.Results {
		keys.Insert(poolKey(r.Driver, r.Pool))
	}
	return sets.List(keys), nil
}

func podGroupIndexFunc(obj any) ([]string, error) {
	pod, ok := obj.(*v1.Pod)
	if !ok || pod.Spec.SchedulingGroup == nil || pod.Spec.SchedulingGroup.PodGroupName == nil {
		return nil, nil
	}
	return []string{pod.Namespace + "/" + *pod.Spec.SchedulingGroup.PodGroupName}, nil
}

func addIndexers(pods, claims, slices cache.SharedIndexInformer, workloadClaims bool) error {
	if err := slices.AddIndexers(cache.Indexers{slicePoolIndex: slicePoolIndexFunc}); err != nil {
		return fmt.Errorf("adding %s index for ResourceSlices: %w", slicePoolIndex, err)
	}
	if err := claims.AddIndexers(cache.Indexers{claimPoolIndex: claimPoolIndexFunc}); err != nil {
		return fmt.Errorf("adding %s index for ResourceClaims: %w", claimPoolIndex, err)
	}
	if workloadClaims {
		if err := pods.AddIndexers(cache.Indexers{podGroupIndex: podGroupIndexFunc}); err != nil {
			return fmt.Errorf("adding %s index for pods: %w", podGroupIndex, err)
		}
	}
	return nil
}
