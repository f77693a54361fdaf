// Command deployhash prints the pod-template-hash that upstream
// kube-controller-manager (k8s.io/kubernetes/pkg/controller.ComputeHash)
// computes for the fixed pod templates and collision counts that
// pkg/controller/deployment's and internal/controller/hashing's golden tests
// use, so that kcm's hash can be checked byte for byte against upstream's.
//
// The templates here must stay identical to hashing.goldenTemplates in
// internal/controller/hashing/hash_test.go. Usage (from hack/tools/k8s):
//
//	go run ./deployhash
package main

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/kubernetes/pkg/controller"
	"k8s.io/utils/ptr"
)

func templates() map[string]*v1.PodTemplateSpec {
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

func main() {
	counts := []*int32{nil, ptr.To[int32](0), ptr.To[int32](1), ptr.To[int32](7), ptr.To[int32](-1)}
	for _, name := range []string{"empty", "nginx", "full"} {
		for _, c := range counts {
			cs := "nil"
			if c != nil {
				cs = fmt.Sprint(*c)
			}
			fmt.Printf("{%q, %s, %q},\n", name, cs, controller.ComputeHash(templates()[name], c))
		}
	}
}
