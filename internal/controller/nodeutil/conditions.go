package nodeutil

import v1 "k8s.io/api/core/v1"

// GetNodeCondition returns the index of the condition of type t in status
// and a pointer to it (into status, so that callers may change it in place),
// or -1 and nil when status is nil or has no such condition.
func GetNodeCondition(status *v1.NodeStatus, t v1.NodeConditionType) (int, *v1.NodeCondition) {
	if status == nil {
		return -1, nil
	}
	for i := range status.Conditions {
		if status.Conditions[i].Type == t {
			return i, &status.Conditions[i]
		}
	}
	return -1, nil
}

// ReadyStatus returns the status of the node's Ready condition, or Unknown
// when it has none.
func ReadyStatus(node *v1.Node) v1.ConditionStatus {
	if _, c := GetNodeCondition(&node.Status, v1.NodeReady); c != nil {
		return c.Status
	}
	return v1.ConditionUnknown
}
