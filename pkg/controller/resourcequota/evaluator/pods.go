package evaluator

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/apiserver/pkg/quota/v1/generic"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/utils/clock"
)

var (
	podsResource = schema.GroupResource{Resource: "pods"}
	// podCountName counts every pod in storage, whatever its phase.
	podCountName = generic.ObjectCountQuotaResourceNameFor(podsResource)
)

// podResources are the fixed names the pod evaluator measures.
var podResources = []corev1.ResourceName{
	podCountName,
	corev1.ResourceCPU,
	corev1.ResourceMemory,
	corev1.ResourceEphemeralStorage,
	corev1.ResourceRequestsCPU,
	corev1.ResourceRequestsMemory,
	corev1.ResourceRequestsEphemeralStorage,
	corev1.ResourceLimitsCPU,
	corev1.ResourceLimitsMemory,
	corev1.ResourceLimitsEphemeralStorage,
	corev1.ResourcePods,
}

// podResourcePrefixes are the name prefixes it measures as well.
var podResourcePrefixes = []string{
	corev1.ResourceHugePagesPrefix,
	corev1.ResourceRequestsHugePagesPrefix,
}

type podEvaluator struct {
	list     ListFunc
	clock    clock.PassiveClock
	features Features
}

// NewPods returns the evaluator of pods; clock decides which pods are past
// their deletion grace period.
func NewPods(list ListFunc, clk clock.PassiveClock, features Features) Evaluator {
	return &podEvaluator{list: list, clock: clk, features: features}
}

func (p *podEvaluator) GroupResource() schema.GroupResource { return podsResource }

func (p *podEvaluator) MatchingResources(input []corev1.ResourceName) []corev1.ResourceName {
	result := quota.Intersection(input, podResources)
	for _, name := range input {
		if quota.ContainsPrefix(podResourcePrefixes, name) {
			result = append(result, name)
		}
		if isExtendedResourceNameForQuota(name) {
			result = append(result, name)
		}
	}
	return result
}

func (p *podEvaluator) UsageStats(options quota.UsageStatsOptions) (quota.UsageStats, error) {
	return generic.CalculateUsageStats(options, p.list, p.matchesScope, p.usage)
}

func (p *podEvaluator) matchesScope(selector corev1.ScopedResourceSelectorRequirement, obj runtime.Object) (bool, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return false, fmt.Errorf("expect *v1.Pod, got %T", obj)
	}
	return PodMatchesScope(pod, selector, p.features)
}

func (p *podEvaluator) usage(obj runtime.Object) (corev1.ResourceList, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return corev1.ResourceList{}, fmt.Errorf("expect *v1.Pod, got %T", obj)
	}
	return PodUsage(pod, p.clock.Now(), p.features), nil
}

// PodUsage is what pod uses at now: count/pods always, and its compute
// resources while it counts (CountsComputeResources).
func PodUsage(pod *corev1.Pod, now time.Time, f Features) corev1.ResourceList {
	result := corev1.ResourceList{podCountName: *resource.NewQuantity(1, resource.DecimalSI)}
	if !CountsComputeResources(pod, now) {
		return result
	}
	opts := resourcehelper.PodResourcesOptions{
		UseStatusResources:    f.InPlacePodVerticalScaling,
		SkipPodLevelResources: !f.PodLevelResources,
	}
	requests := resourcehelper.PodRequests(pod, opts)
	limits := resourcehelper.PodLimits(pod, opts)
	return quota.Add(result, computeUsage(requests, limits))
}

// computeUsage maps a pod's requests and limits to quota names.
func computeUsage(requests, limits corev1.ResourceList) corev1.ResourceList {
	result := corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1")}
	for _, r := range []struct {
		name, request, limit corev1.ResourceName
	}{
		{corev1.ResourceCPU, corev1.ResourceRequestsCPU, corev1.ResourceLimitsCPU},
		{corev1.ResourceMemory, corev1.ResourceRequestsMemory, corev1.ResourceLimitsMemory},
		{corev1.ResourceEphemeralStorage, corev1.ResourceRequestsEphemeralStorage, corev1.ResourceLimitsEphemeralStorage},
	} {
		if q, ok := requests[r.name]; ok {
			result[r.name] = q
			result[r.request] = q
		}
		if q, ok := limits[r.name]; ok {
			result[r.limit] = q
		}
	}
	for name, q := range requests {
		if quota.ContainsPrefix([]string{corev1.ResourceHugePagesPrefix}, name) {
			result[name] = q
			result[withPrefix(name, corev1.DefaultResourceRequestsPrefix)] = q
		}
		// Extended resources count under requests.<name> only.
		if isDRAExtendedResourceName(name) {
			result[withPrefix(name, corev1.DefaultResourceRequestsPrefix)] = q
		}
	}
	return result
}

// CountsComputeResources reports whether pod's compute resources count
// against quota at now: not once it is terminal, nor once it is past its
// deletion grace period (a pod stuck terminating on a lost node must not
// keep its owner from replacing it).
func CountsComputeResources(pod *corev1.Pod, now time.Time) bool {
	if pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
		return false
	}
	if pod.DeletionTimestamp != nil && pod.DeletionGracePeriodSeconds != nil {
		grace := time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
		if now.After(pod.DeletionTimestamp.Add(grace)) {
			return false
		}
	}
	return true
}
