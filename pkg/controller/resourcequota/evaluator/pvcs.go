package evaluator

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/apiserver/pkg/quota/v1/generic"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"
)

var (
	pvcsResource = schema.GroupResource{Resource: "persistentvolumeclaims"}
	pvcCountName = generic.ObjectCountQuotaResourceNameFor(pvcsResource)
	// pvcResources are also measured per storage class, as
	// <class>.storageclass.storage.k8s.io/<name>.
	pvcResources = []corev1.ResourceName{
		corev1.ResourcePersistentVolumeClaims,
		corev1.ResourceRequestsStorage,
	}
)

// storageClassSuffix joins a storage class name and a pvc resource name.
const storageClassSuffix = ".storageclass.storage.k8s.io/"

type pvcEvaluator struct {
	list     ListFunc
	features Features
}

// NewPersistentVolumeClaims returns the evaluator of
// PersistentVolumeClaims.
func NewPersistentVolumeClaims(list ListFunc, features Features) Evaluator {
	return &pvcEvaluator{list: list, features: features}
}

func (p *pvcEvaluator) GroupResource() schema.GroupResource { return pvcsResource }

func (p *pvcEvaluator) MatchingResources(input []corev1.ResourceName) []corev1.ResourceName {
	result := []corev1.ResourceName{}
	for _, name := range input {
		if name == pvcCountName || quota.Contains(pvcResources, name) {
			result = append(result, name)
			continue
		}
		for _, r := range pvcResources {
			if strings.HasSuffix(string(name), storageClassSuffix+string(r)) {
				result = append(result, name)
				break
			}
		}
	}
	return result
}

func (p *pvcEvaluator) UsageStats(options quota.UsageStatsOptions) (quota.UsageStats, error) {
	scope := generic.MatchesNoScopeFunc
	if p.features.VolumeAttributesClass {
		scope = pvcMatchesScope
	}
	return generic.CalculateUsageStats(options, p.list, scope, p.usage)
}

func (p *pvcEvaluator) usage(obj runtime.Object) (corev1.ResourceList, error) {
	pvc, ok := obj.(*corev1.PersistentVolumeClaim)
	if !ok {
		return corev1.ResourceList{}, fmt.Errorf("expect *v1.PersistentVolumeClaim, got %T", obj)
	}
	return PersistentVolumeClaimUsage(pvc, p.features), nil
}

// PersistentVolumeClaimUsage: a claim and its requested storage, also
// charged to its storage class when it has one.
func PersistentVolumeClaimUsage(pvc *corev1.PersistentVolumeClaim, f Features) corev1.ResourceList {
	result := corev1.ResourceList{
		corev1.ResourcePersistentVolumeClaims: *resource.NewQuantity(1, resource.DecimalSI),
		pvcCountName:                          *resource.NewQuantity(1, resource.DecimalSI),
	}
	class := storagehelpers.GetPersistentVolumeClaimClass(pvc)
	if class != "" {
		result[byStorageClass(class, corev1.ResourcePersistentVolumeClaims)] = *resource.NewQuantity(1, resource.DecimalSI)
	}
	if storage := storageUsage(pvc, f); storage != nil {
		result[corev1.ResourceRequestsStorage] = *storage
		if class != "" {
			result[byStorageClass(class, corev1.ResourceRequestsStorage)] = *storage
		}
	}
	return result
}

func byStorageClass(class string, name corev1.ResourceName) corev1.ResourceName {
	return corev1.ResourceName(class + storageClassSuffix + string(name))
}

// storageUsage is the requested storage rounded up to whole bytes, or the
// allocated storage when a failed expansion left it larger.
func storageUsage(pvc *corev1.PersistentVolumeClaim, f Features) *resource.Quantity {
	roundUp := func(q resource.Quantity) *resource.Quantity {
		rounded := q.DeepCopy()
		if !rounded.RoundUp(0) {
			return &rounded
		}
		return &q
	}
	request, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	if !ok {
		return nil
	}
	result := roundUp(request)
	if !f.RecoverVolumeExpansionFailure || len(pvc.Status.AllocatedResources) == 0 {
		return result
	}
	if allocated, ok := pvc.Status.AllocatedResources[corev1.ResourceStorage]; ok && allocated.Cmp(*result) > 0 {
		result = roundUp(allocated)
	}
	return result
}

// pvcMatchesScope: the VolumeAttributesClass scope, over the classes the
// claim names in its spec, status and pending modification.
func pvcMatchesScope(selector corev1.ScopedResourceSelectorRequirement, obj runtime.Object) (bool, error) {
	pvc, ok := obj.(*corev1.PersistentVolumeClaim)
	if !ok {
		return false, fmt.Errorf("expect *v1.PersistentVolumeClaim, got %T", obj)
	}
	if selector.ScopeName != corev1.ResourceQuotaScopeVolumeAttributesClass {
		return false, nil
	}
	names := volumeAttributesClassNames(pvc)
	if selector.Operator == corev1.ScopeSelectorOpExists {
		return len(names) != 0, nil
	}
	s, err := scopeSelectorAsLabelSelector(selector)
	if err != nil {
		return false, fmt.Errorf("failed to parse and convert selector: %w", err)
	}
	if len(names) == 0 {
		return s.Matches(labels.Set{}), nil
	}
	for name := range names {
		if s.Matches(labels.Set{string(corev1.ResourceQuotaScopeVolumeAttributesClass): name}) {
			return true, nil
		}
	}
	return false, nil
}

func volumeAttributesClassNames(pvc *corev1.PersistentVolumeClaim) sets.Set[string] {
	names := sets.New[string]()
	if n := ptr.Deref(pvc.Spec.VolumeAttributesClassName, ""); n != "" {
		names.Insert(n)
	}
	if n := ptr.Deref(pvc.Status.CurrentVolumeAttributesClassName, ""); n != "" {
		names.Insert(n)
	}
	if m := pvc.Status.ModifyVolumeStatus; m != nil && m.TargetVolumeAttributesClassName != "" {
		names.Insert(m.TargetVolumeAttributesClassName)
	}
	return names
}
