package parity

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestStatefulSetPodNamesKept: a StatefulSet's pods carry generateName
// (<set>-) but their names are stable identities, not generated ones, and
// stay as they are; a Deployment's pods next to them are still numbered.
func TestStatefulSetPodNamesKept(t *testing.T) {
	sts := obj(t, `{apiVersion: v1, kind: Pod, metadata: {name: web-10, generateName: web-, namespace: ns, creationTimestamp: "2026-01-01T00:00:01Z",
  labels: {statefulset.kubernetes.io/pod-name: web-10}}}`)
	sts1 := obj(t, `{apiVersion: v1, kind: Pod, metadata: {name: web-1, generateName: web-, namespace: ns, creationTimestamp: "2026-01-01T00:00:02Z",
  labels: {statefulset.kubernetes.io/pod-name: web-1}}}`)
	rs := obj(t, `{apiVersion: v1, kind: Pod, metadata: {name: web-7d9f8c6b5-qqqqq, generateName: web-7d9f8c6b5-, namespace: ns, creationTimestamp: "2026-01-01T00:00:01Z"}}`)
	got := normalize(t, nil, &Capture{Objects: []*unstructured.Unstructured{sts, sts1, rs}})
	for _, w := range []string{"--- # Pod ns/web-10", "--- # Pod ns/web-1", "statefulset.kubernetes.io/pod-name: web-1", "--- # Pod ns/web-7d9f8c6b5-<1>"} {
		if !containsLine(got, w) {
			t.Errorf("missing %q in:\n%s", w, got)
		}
	}
}
