package resourceclaim

import (
	"strings"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestGenerateName(t *testing.T) {
	for _, tc := range []struct{ owner, claim, want string }{
		{"pod", "gpu", "pod-gpu-"},
		// 58 characters with hyphens: cut in proportion, no trailing hyphen.
		{strings.Repeat("p", 40), strings.Repeat("c", 16), strings.Repeat("p", 39) + "-" + strings.Repeat("c", 15)},
		{strings.Repeat("p", 63), "c", strings.Repeat("p", 54) + "-"},
	} {
		got := generateName(tc.owner, tc.claim)
		if got != tc.want {
			t.Errorf("generateName(%d chars, %d chars) = %q, want %q", len(tc.owner), len(tc.claim), got, tc.want)
		}
		if len(got) > maxBaseLen {
			t.Errorf("generateName = %d characters, more than %d", len(got), maxBaseLen)
		}
	}
}

func TestCreateLabels(t *testing.T) {
	claim := &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{
			{APIVersion: "scheduling.k8s.io/v1beta1", Kind: "PodGroup", Controller: ptr.To(true)},
		}},
		Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{
			{Name: "a", Exactly: &resourceapi.ExactDeviceRequest{AdminAccess: ptr.To(true)}},
		}}},
	}
	if got, want := strings.Join(createLabels(claim)("success"), ","), "success,true,scheduling.k8s.io,PodGroup"; got != want {
		t.Errorf("labels = %s, want %s", got, want)
	}
	pod := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{
		{APIVersion: "v1", Kind: "Pod", Controller: ptr.To(true)},
	}}}
	if got, want := strings.Join(createLabels(pod)("failure"), ","), "failure,false,,Pod"; got != want {
		t.Errorf("labels = %s, want %s", got, want)
	}
}

func TestClaimSource(t *testing.T) {
	for want, ann := range map[string]map[string]string{
		"extended_resource":       {resourceapi.ExtendedResourceClaimAnnotation: "true"},
		"resource_claim_template": {resourceapi.PodResourceClaimAnnotation: "gpu"},
		"":                        nil,
	} {
		if got := claimSource(&resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Annotations: ann}}); got != want {
			t.Errorf("claimSource(%v) = %q, want %q", ann, got, want)
		}
	}
}
