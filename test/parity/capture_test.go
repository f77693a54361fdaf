package parity

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestHarnessEvent(t *testing.T) {
	event := func(reason, kind, source, reporting string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"reason":             reason,
			"involvedObject":     map[string]any{"kind": kind},
			"source":             map[string]any{"component": source},
			"reportingComponent": reporting,
		}}
	}
	for _, tc := range []struct {
		name string
		e    *unstructured.Unstructured
		want bool
	}{
		{"a controller manager's election", event("LeaderElection", "Lease", "kube-controller-manager", ""), true},
		{"the ClusterIP repair loop", event("ClusterIPNotAllocated", "Service", "", "ipallocator-repair-controller"), true},
		{"the NodePort repair loop", event("PortNotAllocated", "Service", "portallocator-repair-controller", ""), true},
		{"a controller's Event", event("SuccessfulCreate", "ReplicaSet", "replicaset-controller", ""), false},
		{"LeaderElection on something else", event("LeaderElection", "ConfigMap", "x", ""), false},
	} {
		if got := harnessEvent(tc.e); got != tc.want {
			t.Errorf("%s: harnessEvent = %v, want %v", tc.name, got, tc.want)
		}
	}
}
