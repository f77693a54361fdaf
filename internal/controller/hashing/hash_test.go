package hashing

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// goldenTemplates must stay identical to the templates of
// hack/tools/k8s/deployhash, which printed the expected hashes by running
// upstream's controller.ComputeHash.
func goldenTemplates() map[string]*v1.PodTemplateSpec {
	return map[string]*v1.PodTemplateSpec{
		"empty": {},
		"nginx": {
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "nginx"}},
			Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "nginx", Image: "nginx:1.27"}}},
		},
		"full": {
			ObjectMeta: metav1.ObjectMeta{
				Labels:      map[string]string{"app": "web", "tier": "frontend", "zone": "a"},
				Annotations: map[string]string{"kubectl.kubernetes.io/restartedAt": "2026-01-02T03:04:05Z"},
			},
			Spec: v1.PodSpec{
				RestartPolicy:                 v1.RestartPolicyAlways,
				TerminationGracePeriodSeconds: ptr.To[int64](30),
				DNSPolicy:                     v1.DNSClusterFirst,
				SchedulerName:                 "default-scheduler",
				SecurityContext:               &v1.PodSecurityContext{RunAsNonRoot: ptr.To(true)},
				Containers: []v1.Container{{
					Name:  "web",
					Image: "registry.k8s.io/pause:3.10",
					Args:  []string{"--port=8080"},
					Ports: []v1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: v1.ProtocolTCP}},
					Env:   []v1.EnvVar{{Name: "MODE", Value: "prod"}},
					Resources: v1.ResourceRequirements{
						Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("64Mi")},
						Limits:   v1.ResourceList{v1.ResourceMemory: resource.MustParse("128Mi")},
					},
					ReadinessProbe: &v1.Probe{
						ProbeHandler:  v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}},
						PeriodSeconds: 5,
					},
					TerminationMessagePath:   "/dev/termination-log",
					TerminationMessagePolicy: v1.TerminationMessageReadFile,
					ImagePullPolicy:          v1.PullIfNotPresent,
				}},
			},
		},
	}
}

func TestPodTemplateHashGolden(t *testing.T) {
	c := func(n int32) *int32 { return &n }
	// Printed by `go run ./deployhash` in hack/tools/k8s (upstream v1.37.1).
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
		template := goldenTemplates()[tc.template]
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
	a := goldenTemplates()["full"]
	b := goldenTemplates()["full"]
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
