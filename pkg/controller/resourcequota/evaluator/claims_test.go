package evaluator

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	quota "k8s.io/apiserver/pkg/quota/v1"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

func exactly(class string, mode resourceapi.DeviceAllocationMode, count int64) resourceapi.DeviceRequest {
	return resourceapi.DeviceRequest{Name: "r", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: class, AllocationMode: mode, Count: count}}
}

func resourceClaim(requests ...resourceapi.DeviceRequest) *resourceapi.ResourceClaim {
	return &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "claim", Namespace: "ns"},
		Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: requests}}}
}

func TestClaimDeviceUsage(t *testing.T) {
	firstAvailable := resourceapi.DeviceRequest{Name: "any", FirstAvailable: []resourceapi.DeviceSubRequest{
		{Name: "a", DeviceClassName: "gpu", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 2},
		{Name: "b", DeviceClassName: "gpu", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 3},
		{Name: "c", DeviceClassName: "fpga", AllocationMode: resourceapi.DeviceAllocationModeAll},
	}}
	for _, tc := range []struct {
		name  string
		claim *resourceapi.ResourceClaim
		want  corev1.ResourceList
	}{
		{"exact counts add up per class", resourceClaim(exactly("gpu", resourceapi.DeviceAllocationModeExactCount, 2), exactly("gpu", resourceapi.DeviceAllocationModeExactCount, 1)),
			rl("count/resourceclaims.resource.k8s.io", "1", "gpu.deviceclass.resource.k8s.io/devices", "3")},
		{"all counts the most an allocation holds", resourceClaim(exactly("gpu", resourceapi.DeviceAllocationModeAll, 0)),
			rl("count/resourceclaims.resource.k8s.io", "1", "gpu.deviceclass.resource.k8s.io/devices", "32")},
		{"unknown mode counts none", resourceClaim(exactly("gpu", "Future", 5)),
			rl("count/resourceclaims.resource.k8s.io", "1", "gpu.deviceclass.resource.k8s.io/devices", "0")},
		{"alternatives: the most per class", resourceClaim(firstAvailable),
			rl("count/resourceclaims.resource.k8s.io", "1", "gpu.deviceclass.resource.k8s.io/devices", "3", "fpga.deviceclass.resource.k8s.io/devices", "32")},
	} {
		requireUsage(t, tc.name, ClaimDeviceUsage(tc.claim), tc.want)
	}
}

// An extended-resource claim is charged the extended resources of its
// devices beyond what its pod's own requests already count.
func TestClaimExtendedResources(t *testing.T) {
	now := time.Now()
	pod := podWith(container(rl("example.com/gpu", "1"), nil))
	pod.UID = types.UID("pod-uid")
	c := resourceClaim(exactly("gpu", resourceapi.DeviceAllocationModeExactCount, 2))
	c.Annotations = map[string]string{resourceapi.ExtendedResourceClaimAnnotation: "true"}
	c.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: ptr.To(true)}}
	sources := ClaimSources{
		ExtendedResourceOf: func(class string) string {
			if class == "gpu" {
				return "example.com/gpu"
			}
			return ""
		},
		HasDeviceClassFor: func(name corev1.ResourceName) bool {
			return name == "example.com/gpu" || name == "deviceclass.resource.kubernetes.io/gpu"
		},
		Pod: func(string, string) (*corev1.Pod, error) { return pod, nil },
		ExtendedClaimsOf: func(string, string) ([]*resourceapi.ResourceClaim, error) {
			return []*resourceapi.ResourceClaim{c}, nil
		},
	}
	e := NewResourceClaims(list(c), sources, testingclock.NewFakePassiveClock(now), allFeatures)
	in := []corev1.ResourceName{"count/resourceclaims.resource.k8s.io", "gpu.deviceclass.resource.k8s.io/devices",
		"requests.example.com/gpu", "requests.deviceclass.resource.kubernetes.io/gpu", "requests.example.com/other",
		"requests.deviceclass.resource.kubernetes.io/none"}
	names := e.MatchingResources(in)
	if !quota.ToSet(names).Equal(quota.ToSet(in[:4])) {
		t.Fatalf("MatchingResources = %v", names)
	}
	stats, err := e.UsageStats(quota.UsageStatsOptions{Namespace: "ns", Resources: names})
	if err != nil {
		t.Fatal(err)
	}
	requireUsage(t, "verified pod", quota.Mask(stats.Used, names), rl("count/resourceclaims.resource.k8s.io", "1",
		"gpu.deviceclass.resource.k8s.io/devices", "2", "requests.example.com/gpu", "1", "requests.deviceclass.resource.kubernetes.io/gpu", "2"))

	// Another pod under that name: nothing is subtracted.
	sources.Pod = func(string, string) (*corev1.Pod, error) {
		other := pod.DeepCopy()
		other.UID = "other"
		return other, nil
	}
	e = NewResourceClaims(list(c), sources, testingclock.NewFakePassiveClock(now), allFeatures)
	stats, _ = e.UsageStats(quota.UsageStatsOptions{Namespace: "ns", Resources: names})
	requireUsage(t, "unverified pod", quota.Mask(stats.Used, names), rl("count/resourceclaims.resource.k8s.io", "1",
		"gpu.deviceclass.resource.k8s.io/devices", "2", "requests.example.com/gpu", "2", "requests.deviceclass.resource.kubernetes.io/gpu", "2"))

	// Without DRAExtendedResource only counts and devices.
	e = NewResourceClaims(list(c), sources, testingclock.NewFakePassiveClock(now), Features{})
	if got := e.MatchingResources(in); len(got) != 2 {
		t.Errorf("gate off: MatchingResources = %v", got)
	}
}
