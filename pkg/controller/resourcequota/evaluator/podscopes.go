package evaluator

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	resourcehelper "k8s.io/component-helpers/resource"
)

// PodMatchesScope reports whether pod falls under a quota scope (or scope
// selector requirement). Scopes that do not concern pods never match.
func PodMatchesScope(pod *corev1.Pod, selector corev1.ScopedResourceSelectorRequirement, f Features) (bool, error) {
	switch selector.ScopeName {
	case corev1.ResourceQuotaScopeTerminating:
		return IsTerminating(pod), nil
	case corev1.ResourceQuotaScopeNotTerminating:
		return !IsTerminating(pod), nil
	case corev1.ResourceQuotaScopeBestEffort:
		return podQOS(pod, f) == corev1.PodQOSBestEffort, nil
	case corev1.ResourceQuotaScopeNotBestEffort:
		return podQOS(pod, f) != corev1.PodQOSBestEffort, nil
	case corev1.ResourceQuotaScopePriorityClass:
		if selector.Operator == corev1.ScopeSelectorOpExists {
			return len(pod.Spec.PriorityClassName) != 0, nil
		}
		return podPriorityClassMatches(pod, selector)
	case corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return usesCrossNamespacePodAffinity(pod), nil
	}
	return false, nil
}

// IsTerminating: the pod has an active deadline, so it ends by itself.
func IsTerminating(pod *corev1.Pod) bool {
	return pod.Spec.ActiveDeadlineSeconds != nil && *pod.Spec.ActiveDeadlineSeconds >= 0
}

func podPriorityClassMatches(pod *corev1.Pod, selector corev1.ScopedResourceSelectorRequirement) (bool, error) {
	s, err := scopeSelectorAsLabelSelector(selector)
	if err != nil {
		return false, fmt.Errorf("failed to parse and convert selector: %v", err)
	}
	var m map[string]string
	if len(pod.Spec.PriorityClassName) != 0 {
		m = map[string]string{string(corev1.ResourceQuotaScopePriorityClass): pod.Spec.PriorityClassName}
	}
	return s.Matches(labels.Set(m)), nil
}

// usesCrossNamespacePodAffinity: some pod (anti-)affinity term, required
// or preferred, names namespaces or has a namespace selector.
func usesCrossNamespacePodAffinity(pod *corev1.Pod) bool {
	if pod.Spec.Affinity == nil {
		return false
	}
	crossNamespace := func(t *corev1.PodAffinityTerm) bool {
		return len(t.Namespaces) != 0 || t.NamespaceSelector != nil
	}
	anyTerm := func(required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm) bool {
		for i := range required {
			if crossNamespace(&required[i]) {
				return true
			}
		}
		for i := range preferred {
			if crossNamespace(&preferred[i].PodAffinityTerm) {
				return true
			}
		}
		return false
	}
	if a := pod.Spec.Affinity.PodAffinity; a != nil &&
		anyTerm(a.RequiredDuringSchedulingIgnoredDuringExecution, a.PreferredDuringSchedulingIgnoredDuringExecution) {
		return true
	}
	if a := pod.Spec.Affinity.PodAntiAffinity; a != nil &&
		anyTerm(a.RequiredDuringSchedulingIgnoredDuringExecution, a.PreferredDuringSchedulingIgnoredDuringExecution) {
		return true
	}
	return false
}

// podQOS is the pod's QoS class: status.qosClass when the kubelet set it,
// else computed from its resources.
func podQOS(pod *corev1.Pod, f Features) corev1.PodQOSClass {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass
	}
	return computeQOS(pod, f)
}

// computeQOS: BestEffort without any cpu or memory request or limit,
// Guaranteed when every container's (or the pod-level) cpu and memory
// requests equal their non-zero limits, else Burstable.
func computeQOS(pod *corev1.Pod, f Features) corev1.PodQOSClass {
	if f.PodLevelResources && pod.Spec.Resources != nil &&
		(!f.PodLevelResourcesFixKubeletQOSClass || resourcehelper.IsPodLevelResourcesSet(pod)) {
		return requirementsQOS(pod.Spec.Resources)
	}
	var qos corev1.PodQOSClass
	containers := append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...)
	for i := range containers {
		c := requirementsQOS(&containers[i].Resources)
		switch {
		case c == corev1.PodQOSBurstable:
			return c
		case qos == "":
			qos = c
		case qos != c:
			return corev1.PodQOSBurstable
		}
	}
	if qos == "" {
		return corev1.PodQOSBestEffort
	}
	return qos
}

// requirementsQOS is the QoS shape of one set of requirements over cpu and
// memory.
func requirementsQOS(r *corev1.ResourceRequirements) corev1.PodQOSClass {
	if len(r.Requests) == 0 && len(r.Limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	var qos corev1.PodQOSClass
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, lim := r.Requests[name], r.Limits[name]
		var c corev1.PodQOSClass
		switch {
		case !req.Equal(lim):
			return corev1.PodQOSBurstable
		case req.IsZero():
			c = corev1.PodQOSBestEffort
		default:
			c = corev1.PodQOSGuaranteed
		}
		if qos == "" {
			qos = c
		} else if qos != c {
			return corev1.PodQOSBurstable
		}
	}
	return qos
}
