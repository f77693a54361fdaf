// Command deployhash prints the pod-template-hash that upstream
// kube-controller-manager (k8s.io/kubernetes/pkg/controller.ComputeHash)
// computes for the fixed pod templates and collision counts that
// pkg/controller/deployment's and internal/controller/hashing's golden tests
// use, so that kcm's hash can be checked byte for byte against upstream's.
//
// The templates are internal/controller/hashing/testdata/golden-templates.json,
// which the tests read too. Usage (from hack/tools/k8s; or make golden):
//
//	go run ./deployhash [-root ../../..]
package main

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/controller"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/hack/tools/k8s/internal/golden"
)

func templates() map[string]*v1.PodTemplateSpec {
	var templates map[string]*v1.PodTemplateSpec
	golden.Read("internal/controller/hashing/testdata/golden-templates.json", &templates)
	return templates
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
