// Command daemonsetgolden prints what upstream kube-controller-manager's
// DaemonSet controller (k8s.io/kubernetes/pkg/controller/daemon) computes
// for the fixed DaemonSets that pkg/controller/daemonset's golden tests
// use: the ControllerRevision data (getPatch, checked with daemon.Match),
// the revision hash (controller.ComputeHash) and the tolerations of the
// pods it creates (util.CreatePodTemplate), so that kcm's can be checked
// byte for byte against upstream's.
//
// The DaemonSets are pkg/controller/daemonset/testdata/golden-daemonsets.json,
// which the tests read too. Usage (from hack/tools/k8s; or make golden):
//
//	go run ./daemonsetgolden [-root ../../..]
package main

import (
	"encoding/json"
	"fmt"
	"sort"

	apps "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/kubernetes/pkg/controller"
	"k8s.io/kubernetes/pkg/controller/daemon"
	"k8s.io/kubernetes/pkg/controller/daemon/util"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/hack/tools/k8s/internal/golden"
)

func daemonSets() map[string]*apps.DaemonSet {
	var sets map[string]*apps.DaemonSet
	golden.Read("pkg/controller/daemonset/testdata/golden-daemonsets.json", &sets)
	return sets
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
