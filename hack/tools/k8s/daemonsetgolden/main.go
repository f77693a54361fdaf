// Command daemonsetgolden prints what upstream kube-controller-manager's
// DaemonSet controller (k8s.io/kubernetes/pkg/controller/daemon) computes
// for the fixed DaemonSets that pkg/controller/daemonset's golden tests
// use: the ControllerRevision data (getPatch, checked with daemon.Match),
// the revision hash (controller.ComputeHash) and the tolerations of the
// pods it creates (util.CreatePodTemplate), so that kcm's can be checked
// byte for byte against upstream's.
//
// The DaemonSets here must stay identical to goldenDaemonSets in
// pkg/controller/daemonset/golden_test.go. Usage (from hack/tools/k8s):
//
//	go run ./daemonsetgolden
package main

import (
	"encoding/json"
	"fmt"
	"sort"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/kubernetes/pkg/controller"
	"k8s.io/kubernetes/pkg/controller/daemon"
	"k8s.io/kubernetes/pkg/controller/daemon/util"
	"k8s.io/utils/ptr"
)

func daemonSets() map[string]*apps.DaemonSet {
	web := &apps.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"},
		Spec: apps.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "img:1"}}},
			},
		},
	}
	full := &apps.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "agent"},
		Spec: apps.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      map[string]string{"app": "agent", "tier": "node"},
					Annotations: map[string]string{"example.com/big": "12345678901234567890"},
				},
				Spec: v1.PodSpec{
					HostNetwork:                   true,
					NodeSelector:                  map[string]string{"kubernetes.io/os": "linux"},
					TerminationGracePeriodSeconds: ptr.To[int64](30),
					ActiveDeadlineSeconds:         ptr.To[int64](1<<60 + 1),
					Tolerations: []v1.Toleration{
						{Key: v1.TaintNodeNotReady, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
						{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "infra", Effect: v1.TaintEffectNoSchedule},
					},
					Affinity: &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
						RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
							MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"a", "b"}}},
						}}},
					}},
					Containers: []v1.Container{{
						Name:  "agent",
						Image: "registry.example/agent:2",
						Resources: v1.ResourceRequirements{
							Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("64Mi")},
						},
					}},
				},
			},
		},
	}
	return map[string]*apps.DaemonSet{"web": web, "full": full}
}

// getPatch is upstream's unexported getPatch, verbatim in effect; main
// checks its result with the exported daemon.Match.
func getPatch(ds *apps.DaemonSet) []byte {
	dsBytes, err := utiljson.Marshal(ds)
	if err != nil {
		panic(err)
	}
	var raw map[string]any
	if err := utiljson.Unmarshal(dsBytes, &raw); err != nil {
		panic(err)
	}
	template := raw["spec"].(map[string]any)["template"].(map[string]any)
	template["$patch"] = "replace"
	patch, err := utiljson.Marshal(map[string]any{"spec": map[string]any{"template": template}})
	if err != nil {
		panic(err)
	}
	return patch
}

func main() {
	sets := daemonSets()
	names := make([]string, 0, len(sets))
	for n := range sets {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		ds := sets[n]
		data := getPatch(ds)
		if ok, err := daemon.Match(ds, &apps.ControllerRevision{Data: runtime.RawExtension{Raw: data}}); err != nil || !ok {
			panic(fmt.Sprintf("%s: getPatch does not match daemon.Match: %v", n, err))
		}
		fmt.Printf("%s data: %s\n", n, data)
		fmt.Printf("%s hash: %s\n", n, controller.ComputeHash(&ds.Spec.Template, nil))
		fmt.Printf("%s hash with collisionCount 2: %s\n", n, controller.ComputeHash(&ds.Spec.Template, ptr.To[int32](2)))
		tmpl := util.CreatePodTemplate(ds.Spec.Template, ptr.To[int64](3), "h")
		tol, _ := json.Marshal(tmpl.Spec.Tolerations)
		fmt.Printf("%s tolerations: %s\n", n, tol)
		lbl, _ := json.Marshal(tmpl.Labels)
		fmt.Printf("%s labels: %s\n", n, lbl)
	}
}
