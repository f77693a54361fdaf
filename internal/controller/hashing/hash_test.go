package hashing

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/internal/testutil/golden"
)

// goldenTemplates are the templates of testdata/golden-templates.json,
// which hack/tools/k8s/deployhash reads too, printing the expected hashes
// by running upstream's controller.ComputeHash.
func goldenTemplates(t *testing.T) map[string]*v1.PodTemplateSpec {
	return golden.Read[map[string]*v1.PodTemplateSpec](t, "testdata/golden-templates.json")
}

func TestPodTemplateHashGolden(t *testing.T) {
	c := func(n int32) *int32 { return &n }
	// Printed by deployhash (make golden; upstream v1.37.1).
	tests := []struct {
		template       string
		collisionCount *int32
		want           string
	}{
		{"empty", nil, "54f4c57dcb"},
		{"empty", c(0), "98789f664"},
		{"empty", c(1), "6554565b97"},
		{"empty", c(7), "76c5cb84d7"},
		{"empty", c(-1), "6865669fbd"},
		{"nginx", nil, "76f8596b8b"},
		{"nginx", c(0), "7cd8fd556b"},
		{"nginx", c(1), "549bbcb6b7"},
		{"nginx", c(7), "68bb7b69c"},
		{"nginx", c(-1), "689c456fb6"},
		{"full", nil, "745647b444"},
		{"full", c(0), "7cb6675c56"},
		{"full", c(1), "5477f6bd8f"},
		{"full", c(7), "5d87fbbd99"},
		{"full", c(-1), "59b55876f6"},
	}
	for _, tc := range tests {
		template := goldenTemplates(t)[tc.template]
		before := template.DeepCopy()
		if got := PodTemplateHash(template, tc.collisionCount); got != tc.want {
			t.Errorf("PodTemplateHash(%s, %v) = %q, want %q", tc.template, ptr.Deref(tc.collisionCount, -99), got, tc.want)
		}
		if !equalTemplates(before, template) {
			t.Errorf("PodTemplateHash(%s) modified the template", tc.template)
		}
	}
}

func equalTemplates(a, b *v1.PodTemplateSpec) bool {
	return PodTemplateHash(a, nil) == PodTemplateHash(b, nil) && a.String() == b.String()
}

func TestPodTemplateHashIgnoresAddresses(t *testing.T) {
	a := goldenTemplates(t)["full"]
	b := goldenTemplates(t)["full"]
	if a.Spec.TerminationGracePeriodSeconds == b.Spec.TerminationGracePeriodSeconds {
		t.Fatal("test needs distinct pointers")
	}
	if PodTemplateHash(a, nil) != PodTemplateHash(b, nil) {
		t.Error("equal templates at different addresses hash differently")
	}
	b.Spec.Containers[0].Image = "other"
	if PodTemplateHash(a, nil) == PodTemplateHash(b, nil) {
		t.Error("different templates hash the same")
	}
}
