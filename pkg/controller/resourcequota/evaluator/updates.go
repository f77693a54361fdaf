package evaluator

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ReplenishOnUpdate reports whether an update of an object of gr (both
// versions as the informer holds them) may have changed what it uses, so
// that quotas must be recalculated. Creations are charged by the API
// server's quota admission and deletions always replenish; of updates,
// only these count, as upstream's:
//
//   - a pod whose container statuses report other resources (an in-place
//     resize), that gained or lost an active deadline (Terminating scope),
//     or that stopped counting (terminal, or past its grace period);
//   - a Service that changed between NodePort, LoadBalancer and neither;
//   - any PersistentVolumeClaim update while RecoverVolumeExpansionFailure
//     is on (upstream compares two pointers to the allocated storage,
//     which always differ), else one that changed volume attributes
//     classes.
func ReplenishOnUpdate(gr schema.GroupResource, oldObj, newObj any, now time.Time, f Features) bool {
	switch gr {
	case podsResource:
		oldPod, ok1 := oldObj.(*corev1.Pod)
		newPod, ok2 := newObj.(*corev1.Pod)
		if !ok1 || !ok2 {
			return false
		}
		if f.InPlacePodVerticalScaling && resourcesChanged(oldPod, newPod) {
			return true
		}
		if IsTerminating(oldPod) != IsTerminating(newPod) {
			return true
		}
		return CountsComputeResources(oldPod, now) && !CountsComputeResources(newPod, now)
	case servicesResource:
		oldSvc, ok1 := oldObj.(*corev1.Service)
		newSvc, ok2 := newObj.(*corev1.Service)
		return ok1 && ok2 && quotaServiceType(oldSvc) != quotaServiceType(newSvc)
	case pvcsResource:
		oldPVC, ok1 := oldObj.(*corev1.PersistentVolumeClaim)
		newPVC, ok2 := newObj.(*corev1.PersistentVolumeClaim)
		if !ok1 || !ok2 {
			return false
		}
		if f.RecoverVolumeExpansionFailure {
			return true
		}
		return f.VolumeAttributesClass &&
			!volumeAttributesClassNames(oldPVC).Equal(volumeAttributesClassNames(newPVC))
	}
	return false
}

// resourcesChanged: some container (or init container) status of oldPod
// reports other resources in newPod.
func resourcesChanged(oldPod, newPod *corev1.Pod) bool {
	changed := func(old, cur []corev1.ContainerStatus) bool {
		for i := range old {
			for j := range cur {
				if cur[j].Name == old[i].Name {
					if !apiequality.Semantic.DeepEqual(old[i].Resources, cur[j].Resources) {
						return true
					}
					break
				}
			}
		}
		return false
	}
	return changed(oldPod.Status.ContainerStatuses, newPod.Status.ContainerStatuses) ||
		changed(oldPod.Status.InitContainerStatuses, newPod.Status.InitContainerStatuses)
}
