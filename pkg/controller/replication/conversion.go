package replication

import (
	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// toReplicaSet returns the ReplicaSet view of rc. The view shares maps and
// the pod template with rc: it is as read-only as rc.
func toReplicaSet(rc *v1.ReplicationController) *apps.ReplicaSet {
	rs := &apps.ReplicaSet{
		ObjectMeta: rc.ObjectMeta,
		Spec: apps.ReplicaSetSpec{
			MinReadySeconds: rc.Spec.MinReadySeconds,
		},
		Status: apps.ReplicaSetStatus{
			Replicas:             rc.Status.Replicas,
			FullyLabeledReplicas: rc.Status.FullyLabeledReplicas,
			ReadyReplicas:        rc.Status.ReadyReplicas,
			AvailableReplicas:    rc.Status.AvailableReplicas,
			ObservedGeneration:   rc.Status.ObservedGeneration,
		},
	}
	if rc.Spec.Replicas != nil {
		rs.Spec.Replicas = ptr.To(*rc.Spec.Replicas)
	}
	if rc.Spec.Selector != nil {
		rs.Spec.Selector = &metav1.LabelSelector{MatchLabels: rc.Spec.Selector}
	}
	if rc.Spec.Template != nil {
		rs.Spec.Template = *rc.Spec.Template
	}
	for _, c := range rc.Status.Conditions {
		rs.Status.Conditions = append(rs.Status.Conditions, apps.ReplicaSetCondition{
			Type:               apps.ReplicaSetConditionType(c.Type),
			Status:             c.Status,
			LastTransitionTime: c.LastTransitionTime,
			Reason:             c.Reason,
			Message:            c.Message,
		})
	}
	return rs
}

// toReplicationController converts a ReplicaSet view back. The selector
// of a view made by toReplicaSet has match labels only; the ReplicaSet-only
// status.terminatingReplicas is dropped. The result shares memory with rs.
func toReplicationController(rs *apps.ReplicaSet) *v1.ReplicationController {
	rc := &v1.ReplicationController{
		ObjectMeta: rs.ObjectMeta,
		Spec: v1.ReplicationControllerSpec{
			Replicas:        rs.Spec.Replicas,
			MinReadySeconds: rs.Spec.MinReadySeconds,
			Template:        &rs.Spec.Template,
		},
		Status: v1.ReplicationControllerStatus{
			Replicas:             rs.Status.Replicas,
			FullyLabeledReplicas: rs.Status.FullyLabeledReplicas,
			ReadyReplicas:        rs.Status.ReadyReplicas,
			AvailableReplicas:    rs.Status.AvailableReplicas,
			ObservedGeneration:   rs.Status.ObservedGeneration,
		},
	}
	if rs.Spec.Selector != nil {
		rc.Spec.Selector = rs.Spec.Selector.MatchLabels
	}
	for _, c := range rs.Status.Conditions {
		rc.Status.Conditions = append(rc.Status.Conditions, v1.ReplicationControllerCondition{
			Type:               v1.ReplicationControllerConditionType(c.Type),
			Status:             c.Status,
			LastTransitionTime: c.LastTransitionTime,
			Reason:             c.Reason,
			Message:            c.Message,
		})
	}
	return rc
}
