package evaluator

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/apiserver/pkg/quota/v1/generic"
	"k8s.io/utils/clock"
)

var (
	claimsResource = resourceapi.SchemeGroupVersion.WithResource("resourceclaims").GroupResource()
	claimCountName = generic.ObjectCountQuotaResourceNameFor(claimsResource)
)

// ClaimSources are what the extended-resource part of the claim evaluator
// reads (DRAExtendedResource); all may be nil without it.
type ClaimSources struct {
	// ExtendedResourceOf returns the extended resource name a device class
	// provides, or "".
	ExtendedResourceOf func(class string) string
	// HasDeviceClassFor reports whether some device class provides the
	// extended resource name (explicitly, or as
	// deviceclass.resource.kubernetes.io/<class>).
	HasDeviceClassFor func(name corev1.ResourceName) bool
	// Pod returns a pod from the cache.
	Pod func(namespace, name string) (*corev1.Pod, error)
	// ExtendedClaimsOf returns the extended-resource claims a pod owns.
	ExtendedClaimsOf func(namespace string, podUID string) ([]*resourceapi.ResourceClaim, error)
}

type claimEvaluator struct {
	list     ListFunc
	sources  ClaimSources
	clock    clock.PassiveClock
	features Features
}

// NewResourceClaims returns the evaluator of ResourceClaims.
func NewResourceClaims(list ListFunc, sources ClaimSources, clk clock.PassiveClock, features Features) Evaluator {
	return &claimEvaluator{list: list, sources: sources, clock: clk, features: features}
}

func (c *claimEvaluator) GroupResource() schema.GroupResource { return claimsResource }

func (c *claimEvaluator) MatchingResources(input []corev1.ResourceName) []corev1.ResourceName {
	result := []corev1.ResourceName{}
	for _, name := range input {
		if name == claimCountName || strings.HasSuffix(string(name), corev1.ResourceClaimsPerClass) {
			result = append(result, name)
			continue
		}
		if !c.features.DRAExtendedResource {
			continue
		}
		if class, ok := strings.CutPrefix(string(name), corev1.ResourceImplicitExtendedClaimsPerClass); ok &&
			c.sources.ExtendedResourceOf != nil && c.sources.ExtendedResourceOf(class) != "" {
			result = append(result, name)
			continue
		}
		if isExtendedResourceNameForQuota(name) && c.sources.HasDeviceClassFor != nil &&
			c.sources.HasDeviceClassFor(corev1.ResourceName(strings.TrimPrefix(string(name), corev1.DefaultResourceRequestsPrefix))) {
			result = append(result, name)
		}
	}
	return result
}

func (c *claimEvaluator) UsageStats(options quota.UsageStatsOptions) (quota.UsageStats, error) {
	return generic.CalculateUsageStats(options, c.list, generic.MatchesNoScopeFunc, c.usage)
}

func (c *claimEvaluator) usage(obj runtime.Object) (corev1.ResourceList, error) {
	claim, ok := obj.(*resourceapi.ResourceClaim)
	if !ok {
		return corev1.ResourceList{}, fmt.Errorf("expect *v1.ResourceClaim, got %T", obj)
	}
	result := ClaimDeviceUsage(claim)
	if c.features.DRAExtendedResource {
		c.addExtendedResources(result, c.verifiedPodUsage(claim))
	}
	return result, nil
}

// ClaimDeviceUsage: the claim, and per device class the devices its
// requests may be allocated (all: 32, the most an allocation holds; of
// alternatives, the most any of them asks per class).
func ClaimDeviceUsage(claim *resourceapi.ResourceClaim) corev1.ResourceList {
	result := corev1.ResourceList{claimCountName: *resource.NewQuantity(1, resource.DecimalSI)}
	add := func(name corev1.ResourceName, q resource.Quantity) {
		sum := result[name]
		sum.Add(q)
		result[name] = sum
	}
	for _, request := range claim.Spec.Devices.Requests {
		switch {
		case len(request.FirstAvailable) > 0:
			most := map[corev1.ResourceName]resource.Quantity{}
			for _, sub := range request.FirstAvailable {
				name := corev1.ResourceName(sub.DeviceClassName + corev1.ResourceClaimsPerClass)
				q := resource.NewQuantity(devices(sub.AllocationMode, sub.Count), resource.DecimalSI)
				if q.Cmp(most[name]) > 0 {
					most[name] = *q
				}
			}
			for name, q := range most {
				add(name, q)
			}
		case request.Exactly != nil:
			name := corev1.ResourceName(request.Exactly.DeviceClassName + corev1.ResourceClaimsPerClass)
			add(name, *resource.NewQuantity(devices(request.Exactly.AllocationMode, request.Exactly.Count), resource.DecimalSI))
		}
	}
	return result
}

// devices is the most devices a request of mode may be allocated; an
// unknown mode (after a downgrade) counts none.
func devices(mode resourceapi.DeviceAllocationMode, count int64) int64 {
	switch mode {
	case resourceapi.DeviceAllocationModeExactCount:
		return count
	case resourceapi.DeviceAllocationModeAll:
		return resourceapi.AllocationResultsMaxSize
	}
	return 0
}

// addExtendedResources charges the claim with the extended resources its
// devices provide (requests.deviceclass.resource.kubernetes.io/<class>
// and the class's extended resource name) beyond what podUsage, the usage
// of the pod the claim was made for, already counts.
func (c *claimEvaluator) addExtendedResources(usage corev1.ResourceList, podUsage corev1.ResourceList) {
	extended := corev1.ResourceList{}
	for name, q := range usage {
		class, ok := strings.CutSuffix(string(name), corev1.ResourceClaimsPerClass)
		if !ok || class == "" {
			continue
		}
		extended[corev1.ResourceName(corev1.ResourceImplicitExtendedClaimsPerClass+class)] = q
		if c.sources.ExtendedResourceOf != nil {
			if ext := c.sources.ExtendedResourceOf(class); ext != "" {
				extended[corev1.ResourceName(corev1.DefaultResourceRequestsPrefix+ext)] = q
			}
		}
	}
	for name, q := range extended {
		if pq, ok := podUsage[name]; ok {
			q.Sub(pq)
		}
		if q.CmpInt64(0) > 0 {
			usage[name] = q
		}
	}
}

// verifiedPodUsage is the usage of the pod an extended-resource claim was
// made for, if the pod exists with the claim's owner UID and the claim is
// the pod's (the one its status names, or else its oldest such claim);
// nil otherwise.
func (c *claimEvaluator) verifiedPodUsage(claim *resourceapi.ResourceClaim) corev1.ResourceList {
	owner := podOwner(claim)
	if owner == nil || c.sources.Pod == nil {
		return nil
	}
	pod, err := c.sources.Pod(claim.Namespace, owner.Name)
	if err != nil || pod.UID != owner.UID {
		return nil
	}
	if s := pod.Status.ExtendedResourceClaimStatus; s != nil && s.ResourceClaimName != claim.Name {
		return nil
	}
	if pod.Status.ExtendedResourceClaimStatus == nil {
		if c.sources.ExtendedClaimsOf == nil {
			return nil
		}
		owned, err := c.sources.ExtendedClaimsOf(claim.Namespace, string(pod.UID))
		if err != nil {
			return nil
		}
		for _, other := range owned {
			switch other.CreationTimestamp.Time.Compare(claim.CreationTimestamp.Time) {
			case -1:
				return nil
			case 0:
				if other.Name < claim.Name {
					return nil
				}
			}
		}
	}
	return PodUsage(pod, c.clock.Now(), c.features)
}

// podOwner is the controlling Pod of an extended-resource claim, or nil.
func podOwner(claim *resourceapi.ResourceClaim) *metav1.OwnerReference {
	if claim.Annotations[resourceapi.ExtendedResourceClaimAnnotation] != "true" {
		return nil
	}
	ref := metav1.GetControllerOfNoCopy(claim)
	if ref == nil || ref.Kind != "Pod" || ref.APIVersion != "v1" {
		return nil
	}
	return ref
}

// ExtendedClaimOwnerKeys is an index function: an extended-resource claim
// under "<namespace>/<pod uid>" of the pod that controls it.
func ExtendedClaimOwnerKeys(obj any) ([]string, error) {
	claim, ok := obj.(*resourceapi.ResourceClaim)
	if !ok {
		return nil, nil
	}
	if ref := podOwner(claim); ref != nil {
		return []string{claim.Namespace + "/" + string(ref.UID)}, nil
	}
	return nil, nil
}
