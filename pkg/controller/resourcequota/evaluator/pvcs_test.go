package evaluator

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/utils/ptr"
)

func claim(class, storage string) *corev1.PersistentVolumeClaim {
	pvc := &corev1.PersistentVolumeClaim{}
	if class != "" {
		pvc.Spec.StorageClassName = ptr.To(class)
	}
	if storage != "" {
		pvc.Spec.Resources.Requests = rl("storage", storage)
	}
	return pvc
}

func TestPersistentVolumeClaimUsage(t *testing.T) {
	beta := claim("", "1Gi")
	beta.Annotations = map[string]string{corev1.BetaStorageClassAnnotation: "silver"}
	expanded := claim("gold", "10Gi")
	expanded.Status.AllocatedResources = rl("storage", "15Gi")
	fraction := claim("", "1.5")
	for _, tc := range []struct {
		name string
		pvc  *corev1.PersistentVolumeClaim
		f    Features
		want corev1.ResourceList
	}{
		{"no class", claim("", "10Gi"), allFeatures,
			rl("count/persistentvolumeclaims", "1", "persistentvolumeclaims", "1", "requests.storage", "10Gi")},
		{"class", claim("gold", "10Gi"), allFeatures,
			rl("count/persistentvolumeclaims", "1", "persistentvolumeclaims", "1", "requests.storage", "10Gi",
				"gold.storageclass.storage.k8s.io/persistentvolumeclaims", "1", "gold.storageclass.storage.k8s.io/requests.storage", "10Gi")},
		{"beta annotation", beta, allFeatures,
			rl("count/persistentvolumeclaims", "1", "persistentvolumeclaims", "1", "requests.storage", "1Gi",
				"silver.storageclass.storage.k8s.io/persistentvolumeclaims", "1", "silver.storageclass.storage.k8s.io/requests.storage", "1Gi")},
		{"no storage request", claim("gold", ""), allFeatures,
			rl("count/persistentvolumeclaims", "1", "persistentvolumeclaims", "1", "gold.storageclass.storage.k8s.io/persistentvolumeclaims", "1")},
		{"allocated above the request", expanded, allFeatures,
			rl("count/persistentvolumeclaims", "1", "persistentvolumeclaims", "1", "requests.storage", "15Gi",
				"gold.storageclass.storage.k8s.io/persistentvolumeclaims", "1", "gold.storageclass.storage.k8s.io/requests.storage", "15Gi")},
		{"allocated ignored with the gate off", expanded, Features{},
			rl("count/persistentvolumeclaims", "1", "persistentvolumeclaims", "1", "requests.storage", "10Gi",
				"gold.storageclass.storage.k8s.io/persistentvolumeclaims", "1", "gold.storageclass.storage.k8s.io/requests.storage", "10Gi")},
		{"rounded up to whole bytes", fraction, allFeatures,
			rl("count/persistentvolumeclaims", "1", "persistentvolumeclaims", "1", "requests.storage", "2")},
	} {
		requireUsage(t, tc.name, PersistentVolumeClaimUsage(tc.pvc, tc.f), tc.want)
	}
}

func TestPersistentVolumeClaimMatchingResources(t *testing.T) {
	e := NewPersistentVolumeClaims(list(), allFeatures)
	in := []corev1.ResourceName{"count/persistentvolumeclaims", "persistentvolumeclaims", "requests.storage",
		"gold.storageclass.storage.k8s.io/requests.storage", "gold.storageclass.storage.k8s.io/persistentvolumeclaims",
		"gold.storageclass.storage.k8s.io/limits.storage", "pods", "storage"}
	got := e.MatchingResources(in)
	if len(got) != 5 || !quota.ToSet(got).Equal(quota.ToSet(in[:5])) {
		t.Errorf("MatchingResources = %v", got)
	}
}

func TestVolumeAttributesClassScope(t *testing.T) {
	fast := claim("gold", "1Gi")
	fast.Spec.VolumeAttributesClassName = ptr.To("fast")
	modifying := claim("gold", "1Gi")
	modifying.Status.ModifyVolumeStatus = &corev1.ModifyVolumeStatus{TargetVolumeAttributesClassName: "slow"}
	plain := claim("gold", "1Gi")
	vac := func(op corev1.ScopeSelectorOperator, values ...string) corev1.ScopedResourceSelectorRequirement {
		return corev1.ScopedResourceSelectorRequirement{ScopeName: corev1.ResourceQuotaScopeVolumeAttributesClass, Operator: op, Values: values}
	}
	for i, tc := range []struct {
		pvc  *corev1.PersistentVolumeClaim
		sel  corev1.ScopedResourceSelectorRequirement
		want bool
	}{
		{fast, vac(corev1.ScopeSelectorOpExists), true},
		{plain, vac(corev1.ScopeSelectorOpExists), false},
		{fast, vac(corev1.ScopeSelectorOpIn, "fast"), true},
		{modifying, vac(corev1.ScopeSelectorOpIn, "slow"), true},
		{plain, vac(corev1.ScopeSelectorOpNotIn, "fast"), true},
		{plain, vac(corev1.ScopeSelectorOpDoesNotExist), true},
		{fast, corev1.ScopedResourceSelectorRequirement{ScopeName: corev1.ResourceQuotaScopeBestEffort, Operator: corev1.ScopeSelectorOpExists}, false},
	} {
		if got, err := pvcMatchesScope(tc.sel, tc.pvc); err != nil || got != tc.want {
			t.Errorf("case %d: %v, %v; want %v", i, got, err, tc.want)
		}
	}
	e := NewPersistentVolumeClaims(list(fast, plain), allFeatures)
	names := []corev1.ResourceName{"persistentvolumeclaims"}
	sel := &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{vac(corev1.ScopeSelectorOpIn, "fast")}}
	stats, _ := e.UsageStats(quota.UsageStatsOptions{Resources: names, ScopeSelector: sel})
	requireUsage(t, "In fast", quota.Mask(stats.Used, names), rl("persistentvolumeclaims", "1"))
	off := NewPersistentVolumeClaims(list(fast, plain), Features{})
	stats, _ = off.UsageStats(quota.UsageStatsOptions{Resources: names, ScopeSelector: sel})
	requireUsage(t, "gate off: no scope matches", quota.Mask(stats.Used, names), rl("persistentvolumeclaims", "0"))
}
