package nodeutil

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

var (
	notReady    = v1.Taint{Key: v1.TaintNodeNotReady, Effect: v1.TaintEffectNoSchedule}
	unreachable = v1.Taint{Key: v1.TaintNodeUnreachable, Effect: v1.TaintEffectNoExecute}
	custom      = v1.Taint{Key: "example.com/x", Value: "y", Effect: v1.TaintEffectNoSchedule}
)

func node(labels map[string]string, taints ...v1.Taint) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: labels}, Spec: v1.NodeSpec{Taints: taints}}
}

func TestPatchOps(t *testing.T) {
	tests := []struct {
		name     string
		old      *v1.Node
		mutate   func(*v1.Node)
		wantJSON string
	}{
		{name: "no change", old: node(nil, notReady), mutate: func(*v1.Node) {}, wantJSON: "null"},
		{name: "nil and empty taints are equal", old: node(nil), mutate: func(n *v1.Node) { n.Spec.Taints = []v1.Taint{} }, wantJSON: "null"},
		{
			name: "remove last taint", old: node(nil, notReady), mutate: func(n *v1.Node) { n.Spec.Taints = nil },
			wantJSON: `[{"op":"test","path":"/spec/taints","value":[{"key":"node.kubernetes.io/not-ready","effect":"NoSchedule"}]},{"op":"remove","path":"/spec/taints"}]`,
		},
		{
			name: "first taint", old: node(nil), mutate: func(n *v1.Node) { n.Spec.Taints = []v1.Taint{unreachable} },
			wantJSON: `[{"op":"test","path":"/spec/taints","value":null},{"op":"add","path":"/spec/taints","value":[{"key":"node.kubernetes.io/unreachable","effect":"NoExecute"}]}]`,
		},
		{
			name: "labels by key, escaped", old: node(map[string]string{"a": "1", "b/c": "2", "gone": "x"}),
			mutate: func(n *v1.Node) {
				n.Labels["a"] = "1"
				n.Labels["b/c"] = "3"
				n.Labels["new~"] = ""
				delete(n.Labels, "gone")
			},
			wantJSON: `[{"op":"add","path":"/metadata/labels/b~1c","value":"3"},{"op":"remove","path":"/metadata/labels/gone"},{"op":"add","path":"/metadata/labels/new~0","value":""}]`,
		},
		{
			name: "labels on a node without any", old: node(nil),
			mutate:   func(n *v1.Node) { n.Labels = map[string]string{"a": "1"} },
			wantJSON: `[{"op":"test","path":"/metadata/labels","value":null},{"op":"add","path":"/metadata/labels","value":{"a":"1"}}]`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			desired := tc.old.DeepCopy()
			tc.mutate(desired)
			got, err := json.Marshal(patchOps(tc.old, desired))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.wantJSON {
				t.Errorf("patch\n got %s\nwant %s", got, tc.wantJSON)
			}
		})
	}
}

func addTaint(t v1.Taint) func(*v1.Node) {
	return func(n *v1.Node) {
		if !TaintExists(n.Spec.Taints, &t) {
			n.Spec.Taints = append(n.Spec.Taints, t)
		}
	}
}

func countActions(client *fake.Clientset, verb string) int {
	n := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == verb {
			n++
		}
	}
	return n
}

func TestPatchNodeOneRequest(t *testing.T) {
	ctx := context.Background()
	stored := node(map[string]string{"a": "1"}, custom)
	client := fake.NewClientset(stored)

	got, err := PatchNode(ctx, client, stored, addTaint(unreachable))
	if err != nil {
		t.Fatal(err)
	}
	if got == nil || len(got.Spec.Taints) != 2 || got.Spec.Taints[0] != custom || !got.Spec.Taints[1].MatchTaint(&unreachable) {
		t.Fatalf("patched taints = %v", got)
	}
	if n := len(client.Actions()); n != 1 {
		t.Errorf("%d requests, want 1: %v", n, client.Actions())
	}

	client.ClearActions()
	if got, err := PatchNode(ctx, client, got, addTaint(unreachable)); err != nil || got != nil {
		t.Errorf("no-op: got %v, %v; want nil, nil", got, err)
	}
	if n := len(client.Actions()); n != 0 {
		t.Errorf("no-op made %d requests", n)
	}
}

// TestPatchNodeStaleCopy: the cached copy misses a taint someone else
// added; the test operation fails, and the retry on a fresh read keeps it.
func TestPatchNodeStaleCopy(t *testing.T) {
	ctx := context.Background()
	cached := node(nil)
	client := apiServerLikeClient(node(nil, custom))

	got, err := PatchNode(ctx, client, cached, addTaint(unreachable))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Spec.Taints) != 2 || got.Spec.Taints[0] != custom {
		t.Errorf("taints = %v, want the concurrent taint kept first", got.Spec.Taints)
	}
	if p, g := countActions(client, "patch"), countActions(client, "get"); p != 2 || g != 1 {
		t.Errorf("%d patches and %d gets, want 2 and 1", p, g)
	}
}

// apiServerLikeClient returns a fake clientset that, like the API server,
// rejects a JSON patch whose test fails as Invalid (422).
func apiServerLikeClient(objs ...runtime.Object) *fake.Clientset {
	client := fake.NewClientset(objs...)
	react := k8stesting.ObjectReaction(client.Tracker())
	client.PrependReactor("patch", "nodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		_, obj, err := react(a)
		if err != nil && apierrors.ReasonForError(err) == metav1.StatusReasonUnknown {
			err = apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "patch", schema.GroupResource{}, "", err.Error(), 0, false)
		}
		return true, obj, err
	})
	return client
}

func TestPatchNodeErrors(t *testing.T) {
	ctx := context.Background()
	t.Run("not found", func(t *testing.T) {
		client := fake.NewClientset()
		_, err := PatchNode(ctx, client, node(nil), addTaint(unreachable))
		if !apierrors.IsNotFound(err) {
			t.Errorf("err = %v, want NotFound", err)
		}
	})
	t.Run("gives up after repeated conflicts", func(t *testing.T) {
		client := fake.NewClientset(node(nil))
		client.PrependReactor("patch", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "nodes"}, "n1", nil)
		})
		_, err := PatchNode(ctx, client, node(nil), addTaint(unreachable))
		if !apierrors.IsConflict(err) {
			t.Errorf("err = %v, want Conflict", err)
		}
		if p := countActions(client, "patch"); p != 5 {
			t.Errorf("%d patches, want 5", p)
		}
	})
}

func TestGetNodeCondition(t *testing.T) {
	status := &v1.NodeStatus{Conditions: []v1.NodeCondition{
		{Type: v1.NodeMemoryPressure, Status: v1.ConditionFalse},
		{Type: v1.NodeReady, Status: v1.ConditionTrue},
	}}
	if i, c := GetNodeCondition(status, v1.NodeReady); i != 1 || c != &status.Conditions[1] {
		t.Errorf("Ready: %d %v", i, c)
	}
	if i, c := GetNodeCondition(status, v1.NodeDiskPressure); i != -1 || c != nil {
		t.Errorf("DiskPressure: %d %v", i, c)
	}
	if i, c := GetNodeCondition(nil, v1.NodeReady); i != -1 || c != nil {
		t.Errorf("nil status: %d %v", i, c)
	}
	if s := ReadyStatus(&v1.Node{Status: *status}); s != v1.ConditionTrue {
		t.Errorf("ReadyStatus = %s", s)
	}
	if s := ReadyStatus(&v1.Node{}); s != v1.ConditionUnknown {
		t.Errorf("ReadyStatus without condition = %s", s)
	}
}
