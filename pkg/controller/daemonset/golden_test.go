package daemonset

import (
	"encoding/json"
	"testing"

	apps "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/internal/controller/hashing"
	"github.com/kcm-dev/kcm/internal/testutil/golden"
)

// goldenDaemonSets are the DaemonSets of testdata/golden-daemonsets.json,
// which hack/tools/k8s/daemonsetgolden reads too, printing upstream's
// values below.
func goldenDaemonSets(t *testing.T) map[string]*apps.DaemonSet {
	return golden.Read[map[string]*apps.DaemonSet](t, "testdata/golden-daemonsets.json")
}

const defaultTolerationsJSON = `{"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute"},` +
	`{"key":"node.kubernetes.io/disk-pressure","operator":"Exists","effect":"NoSchedule"},` +
	`{"key":"node.kubernetes.io/memory-pressure","operator":"Exists","effect":"NoSchedule"},` +
	`{"key":"node.kubernetes.io/pid-pressure","operator":"Exists","effect":"NoSchedule"},` +
	`{"key":"node.kubernetes.io/unschedulable","operator":"Exists","effect":"NoSchedule"}`

// TestMatchesUpstream pins revision data, hashes, pod tolerations and
// labels to what upstream v1.37.1 computes (make golden): a DaemonSet
// created under upstream's binary keeps its revisions, and its pods, under
// ours.
func TestMatchesUpstream(t *testing.T) {
	want := map[string]struct{ data, hash, hash2, tolerations, labels string }{
		"web": {
			data:        `{"spec":{"template":{"$patch":"replace","metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"image":"img:1","name":"c","resources":{}}]}}}}`,
			hash:        "7946577745",
			hash2:       "7df8b9c48c",
			tolerations: `[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute"},` + defaultTolerationsJSON + `]`,
			labels:      `{"app":"web","controller-revision-hash":"h","pod-template-generation":"3"}`,
		},
		"full": {
			data: `{"spec":{"template":{"$patch":"replace","metadata":{"annotations":{"example.com/big":"12345678901234567890"},"labels":{"app":"agent","tier":"node"}},` +
				`"spec":{"activeDeadlineSeconds":1152921504606846977,"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In","values":["a","b"]}]}]}}},` +
				`"containers":[{"image":"registry.example/agent:2","name":"agent","resources":{"requests":{"cpu":"100m","memory":"64Mi"}}}],"hostNetwork":true,"nodeSelector":{"kubernetes.io/os":"linux"},"terminationGracePeriodSeconds":30,` +
				`"tolerations":[{"effect":"NoExecute","key":"node.kubernetes.io/not-ready","operator":"Exists","tolerationSeconds":300},{"effect":"NoSchedule","key":"dedicated","operator":"Equal","value":"infra"}]}}}}`,
			hash:  "b889b456",
			hash2: "57c68b77c8",
			tolerations: `[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute"},{"key":"dedicated","operator":"Equal","value":"infra","effect":"NoSchedule"},` +
				defaultTolerationsJSON + `,{"key":"node.kubernetes.io/network-unavailable","operator":"Exists","effect":"NoSchedule"}]`,
			labels: `{"app":"agent","controller-revision-hash":"h","pod-template-generation":"3","tier":"node"}`,
		},
	}
	for name, ds := range goldenDaemonSets(t) {
		w := want[name]
		data, err := revisionData(ds)
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != w.data {
			t.Errorf("%s: revision data\n got %s\nwant %s", name, data, w.data)
		}
		if h := hashing.PodTemplateHash(&ds.Spec.Template, nil); h != w.hash {
			t.Errorf("%s: hash %s, want %s", name, h, w.hash)
		}
		if h := hashing.PodTemplateHash(&ds.Spec.Template, ptr.To[int32](2)); h != w.hash2 {
			t.Errorf("%s: hash with collisionCount 2: %s, want %s", name, h, w.hash2)
		}
		ds.Annotations = map[string]string{apps.DeprecatedTemplateGeneration: "3"}
		tmpl := podTemplate(ds, newRevisionState(ds, "h"))
		if got := mustJSON(t, tmpl.Spec.Tolerations); got != w.tolerations {
			t.Errorf("%s: tolerations\n got %s\nwant %s", name, got, w.tolerations)
		}
		if got := mustJSON(t, tmpl.Labels); got != w.labels {
			t.Errorf("%s: labels %s, want %s", name, got, w.labels)
		}
		if len(ds.Spec.Template.Spec.Tolerations) > 2 || ds.Spec.Template.Labels[hashLabel] != "" {
			t.Errorf("%s: the DaemonSet's template was modified", name)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
