package nodelifecycle

import (
	"context"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcm-dev/kcm/internal/controller/nodeutil"
)

var (
	// notReadyTaint and unreachableTaint are the NoExecute taints that make
	// the taint-eviction-controller evict pods; a node carries at most one
	// of them, mirroring its Ready condition (False or Unknown).
	notReadyTaint    = v1.Taint{Key: v1.TaintNodeNotReady, Effect: v1.TaintEffectNoExecute}
	unreachableTaint = v1.Taint{Key: v1.TaintNodeUnreachable, Effect: v1.TaintEffectNoExecute}

	// conditionTaintKeys maps a node condition and its status to the key of
	// the NoSchedule taint that state calls for.
	conditionTaintKeys = map[v1.NodeConditionType]map[v1.ConditionStatus]string{
		v1.NodeReady: {
			v1.ConditionFalse:   v1.TaintNodeNotReady,
			v1.ConditionUnknown: v1.TaintNodeUnreachable,
		},
		v1.NodeMemoryPressure:     {v1.ConditionTrue: v1.TaintNodeMemoryPressure},
		v1.NodeDiskPressure:       {v1.ConditionTrue: v1.TaintNodeDiskPressure},
		v1.NodeNetworkUnavailable: {v1.ConditionTrue: v1.TaintNodeNetworkUnavailable},
		v1.NodePIDPressure:        {v1.ConditionTrue: v1.TaintNodePIDPressure},
	}

	// noScheduleKeys are the keys of the NoSchedule taints this controller
	// owns: the condition taints and the unschedulable one.
	noScheduleKeys = map[string]bool{
		v1.TaintNodeNotReady:           true,
		v1.TaintNodeUnreachable:        true,
		v1.TaintNodeMemoryPressure:     true,
		v1.TaintNodeDiskPressure:       true,
		v1.TaintNodeNetworkUnavailable: true,
		v1.TaintNodePIDPressure:        true,
		v1.TaintNodeUnschedulable:      true,
	}
)

// noScheduleTaints returns the NoSchedule taints the node's conditions and
// spec.unschedulable call for, in the order of its conditions, the
// unschedulable taint last.
func noScheduleTaints(node *v1.Node) []v1.Taint {
	var taints []v1.Taint
	for _, cond := range node.Status.Conditions {
		if key, ok := conditionTaintKeys[cond.Type][cond.Status]; ok {
			taints = append(taints, v1.Taint{Key: key, Effect: v1.TaintEffectNoSchedule})
		}
	}
	if node.Spec.Unschedulable {
		taints = append(taints, v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule})
	}
	return taints
}

func ownedNoSchedule(t *v1.Taint) bool {
	return t.Effect == v1.TaintEffectNoSchedule && noScheduleKeys[t.Key]
}

func ownedNoExecute(t *v1.Taint) bool {
	return t.MatchTaint(&notReadyTaint) || t.MatchTaint(&unreachableTaint)
}

// replaceOwned returns taints with the taints that owned selects replaced by
// want: an owned taint that want matches (by key and effect) is kept as it
// is, the other owned ones are dropped, and the wanted taints that are
// missing are appended, stamped with now. Upstream adds and removes the
// same taints and stamps them the same way, so the result is the same list
// in the same order. Taints owned by others are never touched.
func replaceOwned(taints []v1.Taint, owned func(*v1.Taint) bool, want []v1.Taint, now metav1.Time) []v1.Taint {
	out := make([]v1.Taint, 0, len(taints)+len(want))
	for i := range taints {
		if !owned(&taints[i]) || nodeutil.TaintExists(want, &taints[i]) {
			out = append(out, taints[i])
		}
	}
	for i := range want {
		if !nodeutil.TaintExists(out, &want[i]) {
			t := want[i]
			t.TimeAdded = now.DeepCopy()
			out = append(out, t)
		}
	}
	return out
}

// withNoScheduleTaints sets the node's owned NoSchedule taints to those its
// conditions and spec.unschedulable call for.
func withNoScheduleTaints(node *v1.Node, now metav1.Time) {
	node.Spec.Taints = replaceOwned(node.Spec.Taints, ownedNoSchedule, noScheduleTaints(node), now)
}

// withNoExecuteTaint makes want (nil for none) the node's only not-ready or
// unreachable NoExecute taint.
func withNoExecuteTaint(node *v1.Node, want *v1.Taint, now metav1.Time) {
	var wanted []v1.Taint
	if want != nil {
		wanted = []v1.Taint{*want}
	}
	node.Spec.Taints = replaceOwned(node.Spec.Taints, ownedNoExecute, wanted, now)
}

func hasOwnedNoExecute(node *v1.Node) bool {
	for i := range node.Spec.Taints {
		if ownedNoExecute(&node.Spec.Taints[i]) {
			return true
		}
	}
	return false
}

// noExecuteTaintFor returns the NoExecute taint a Ready condition status
// calls for, or nil when the node is Ready.
func noExecuteTaintFor(status v1.ConditionStatus) *v1.Taint {
	switch status {
	case v1.ConditionFalse:
		return &notReadyTaint
	case v1.ConditionUnknown:
		return &unreachableTaint
	}
	return nil
}

// setNoExecuteTaint writes want (nil for none) as the node's NoExecute
// taint, in at most one request.
func (c *Controller) setNoExecuteTaint(ctx context.Context, node *v1.Node, want *v1.Taint) error {
	if want == nil && !hasOwnedNoExecute(node) {
		return nil // the common case, every pass for every Ready node
	}
	_, err := nodeutil.PatchNode(ctx, c.client, node, func(n *v1.Node) {
		withNoExecuteTaint(n, want, c.now())
	})
	return err
}
