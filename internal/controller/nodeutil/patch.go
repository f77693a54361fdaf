package nodeutil

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// updateBackoff is upstream's backoff for node taint and label updates:
// five tries, starting at 100ms, with full jitter.
var updateBackoff = wait.Backoff{Steps: 5, Duration: 100 * time.Millisecond, Jitter: 1.0}

// TaintExists reports whether taints hold a taint with t's key and effect
// (the value does not matter, as in upstream's MatchTaint).
func TaintExists(taints []v1.Taint, t *v1.Taint) bool {
	for i := range taints {
		if t.MatchTaint(&taints[i]) {
			return true
		}
	}
	return false
}

// PatchNode applies mutate to a copy of node and writes the resulting
// changes of its taints and labels (nothing else) in one JSON patch. It
// issues no request when mutate changes neither.
//
// The patch carries a "test" of the taints it replaces, so a concurrent
// change of the taints makes it fail, while concurrent status updates (the
// usual traffic on a Node) do not, unlike a resourceVersion precondition.
// Labels are patched key by key. When the test fails, PatchNode reads the
// Node again and retries mutate on the fresh copy, with upstream's backoff.
//
// node is normally a lister's copy; it is not modified. PatchNode returns the
// patched Node, or nil if nothing had to be written.
func PatchNode(ctx context.Context, client kubernetes.Interface, node *v1.Node, mutate func(*v1.Node)) (*v1.Node, error) {
	current := node
	var patched *v1.Node
	err := retry.OnError(updateBackoff, isStale, func() error {
		if current == nil {
			fresh, err := client.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			current = fresh
		}
		desired := current.DeepCopy()
		mutate(desired)
		ops := patchOps(current, desired)
		if len(ops) == 0 {
			patched = nil
			return nil
		}
		body, err := json.Marshal(ops)
		if err != nil {
			return fmt.Errorf("encoding the patch of node %q: %w", node.Name, err)
		}
		patched, err = client.CoreV1().Nodes().Patch(ctx, node.Name, types.JSONPatchType, body, metav1.PatchOptions{})
		if isStale(err) {
			current = nil
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("patching node %q: %w", node.Name, err)
	}
	return patched, nil
}

// isStale reports whether a patch failed because the copy it was computed
// from is out of date: a failed "test" operation is rejected as Invalid.
func isStale(err error) bool {
	return apierrors.IsConflict(err) || apierrors.IsInvalid(err)
}

// patchOp is one RFC 6902 operation.
type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// nullValue encodes as JSON null inside a "test" operation, which then
// holds for an absent field.
type nullValue struct{}

func (nullValue) MarshalJSON() ([]byte, error) { return []byte("null"), nil }

// patchOps returns the operations that turn old's taints and labels into
// desired's.
func patchOps(old, desired *v1.Node) []patchOp {
	var ops []patchOp
	if !taintsEqual(old.Spec.Taints, desired.Spec.Taints) {
		ops = append(ops, taintOps(old.Spec.Taints, desired.Spec.Taints)...)
	}
	return append(ops, labelOps(old.Labels, desired.Labels)...)
}

func taintsEqual(a, b []v1.Taint) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return apiequality.Semantic.DeepEqual(a, b)
}

func taintOps(old, desired []v1.Taint) []patchOp {
	const path = "/spec/taints"
	test := patchOp{Op: "test", Path: path, Value: nullValue{}}
	if len(old) > 0 {
		test.Value = old
	}
	if len(desired) == 0 {
		return []patchOp{test, {Op: "remove", Path: path}}
	}
	return []patchOp{test, {Op: "add", Path: path, Value: desired}}
}

func labelOps(old, desired map[string]string) []patchOp {
	if apiequality.Semantic.DeepEqual(old, desired) || (len(old) == 0 && len(desired) == 0) {
		return nil
	}
	if len(old) == 0 {
		// No map to add keys to: create it, unless one appeared meanwhile.
		return []patchOp{{Op: "test", Path: "/metadata/labels", Value: nullValue{}}, {Op: "add", Path: "/metadata/labels", Value: desired}}
	}
	keys := make([]string, 0, len(old)+len(desired))
	for k := range old {
		keys = append(keys, k)
	}
	for k := range desired {
		if _, ok := old[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var ops []patchOp
	for _, k := range keys {
		oldV, had := old[k]
		newV, has := desired[k]
		path := "/metadata/labels/" + escapePointer(k)
		switch {
		case has && (!had || oldV != newV):
			ops = append(ops, patchOp{Op: "add", Path: path, Value: newV})
		case had && !has:
			ops = append(ops, patchOp{Op: "remove", Path: path})
		}
	}
	return ops
}

// escapePointer escapes a map key for use in a JSON pointer (RFC 6901).
func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}
