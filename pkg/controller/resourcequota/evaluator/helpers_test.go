package evaluator

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	quota "k8s.io/apiserver/pkg/quota/v1"
)

// list is a ListFunc over fixed objects of one namespace.
func list(objs ...runtime.Object) ListFunc {
	return func(string) ([]runtime.Object, error) { return objs, nil }
}

// rl builds a resource list from name, quantity pairs.
func rl(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

func requireUsage(t *testing.T, what string, got, want corev1.ResourceList) {
	t.Helper()
	if !quota.Equals(got, want) {
		t.Errorf("%s: usage\n got %v\nwant %v", what, got, want)
	}
}

var allFeatures = Features{
	PodLevelResources:                   true,
	PodLevelResourcesFixKubeletQOSClass: true,
	InPlacePodVerticalScaling:           true,
	VolumeAttributesClass:               true,
	RecoverVolumeExpansionFailure:       true,
	DRAExtendedResource:                 true,
}
