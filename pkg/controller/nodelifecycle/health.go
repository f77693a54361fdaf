package nodelifecycle

import (
	"sync"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller/nodeutil"
)

// Condition reasons and messages the controller writes when a node's
// kubelet stops reporting (upstream's).
const (
	reasonStatusUnknown       = "NodeStatusUnknown"
	messageStatusUnknown      = "Kubelet stopped posting node status."
	reasonStatusNeverUpdated  = "NodeStatusNeverUpdated"
	messageStatusNeverUpdated = "Kubelet never posted node status."
)

// kubeletConditions are the conditions set to Unknown when a node's
// kubelet stops reporting. NetworkUnavailable is left alone: it is managed
// by the control plane, not the kubelet.
var kubeletConditions = []v1.NodeConditionType{
	v1.NodeReady,
	v1.NodeMemoryPressure,
	v1.NodeDiskPressure,
	v1.NodePIDPressure,
}

// nodeHealth is what the controller last saw of a node: its status and
// Lease, and the local times at which it last saw a sign of life
// (probeTimestamp) and a Ready transition. Local times avoid trusting the
// clocks of the nodes.
type nodeHealth struct {
	probeTimestamp           metav1.Time
	readyTransitionTimestamp metav1.Time
	status                   *v1.NodeStatus
	lease                    *coordv1.Lease
}

// clone returns a copy of the record that the caller may change. The
// status and Lease it points to are shared: a record's status and Lease
// are never changed in place once it is stored (observe and updateHealth
// replace the pointers), so copying them, as upstream does on every
// read, would only feed the garbage collector: on 500 kwok nodes these
// copies and monitorNode's copy of each node were a quarter of all the
// bytes kcm allocated.
func (h *nodeHealth) clone() *nodeHealth {
	if h == nil {
		return nil
	}
	c := *h
	return &c
}

// healthMap holds the nodeHealth of every known node. It hands out clones.
type healthMap struct {
	mu sync.RWMutex
	m  map[string]*nodeHealth
}

func newHealthMap() *healthMap { return &healthMap{m: map[string]*nodeHealth{}} }

func (h *healthMap) get(name string) *nodeHealth {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.m[name].clone()
}

func (h *healthMap) set(name string, v *nodeHealth) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.m[name] = v
}

func (h *healthMap) delete(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.m, name)
}

// healthPolicy holds the grace periods a node is given to show a sign of
// life: its kubelet posting a new Ready heartbeat, or renewing its Lease.
type healthPolicy struct {
	// startupGracePeriod applies while the node has never posted a Ready
	// condition.
	startupGracePeriod time.Duration
	// monitorGracePeriod applies once it has.
	monitorGracePeriod time.Duration
}

// observe folds what is now seen of node and its Lease into the health
// saved last time, without I/O, and returns the new health record, the
// grace period the node is entitled to, and its Ready condition as read
// (a made-up Unknown one, dated at the node's creation, if it has none).
// node and lease must not be changed by the caller afterwards: the record
// refers to them.
func (p healthPolicy) observe(logger klog.Logger, node *v1.Node, saved *nodeHealth, lease *coordv1.Lease, now metav1.Time) (*nodeHealth, time.Duration, v1.NodeCondition) {
	h := saved
	var observed v1.NodeCondition
	var grace time.Duration
	_, ready := nodeutil.GetNodeCondition(&node.Status, v1.NodeReady)
	if ready == nil {
		// Never posted: measure the startup grace period from creation.
		observed = v1.NodeCondition{
			Type:               v1.NodeReady,
			Status:             v1.ConditionUnknown,
			LastHeartbeatTime:  node.CreationTimestamp,
			LastTransitionTime: node.CreationTimestamp,
		}
		grace = p.startupGracePeriod
		if h != nil {
			h.status = &node.Status
		} else {
			h = &nodeHealth{status: &node.Status, probeTimestamp: node.CreationTimestamp, readyTransitionTimestamp: node.CreationTimestamp}
		}
	} else {
		observed = *ready
		grace = p.monitorGracePeriod
	}

	var savedReady *v1.NodeCondition
	var savedLease *coordv1.Lease
	if h != nil {
		_, savedReady = nodeutil.GetNodeCondition(h.status, v1.NodeReady)
		savedLease = h.lease
	}
	switch {
	case h == nil:
		logger.Info("Missing timestamp for Node. Assuming now as a timestamp", "node", klog.KObj(node))
		h = &nodeHealth{status: &node.Status, probeTimestamp: now, readyTransitionTimestamp: now}
	case savedReady == nil && ready != nil:
		logger.V(1).Info("Creating timestamp entry for newly observed Node", "node", klog.KObj(node))
		h = &nodeHealth{status: &node.Status, probeTimestamp: now, readyTransitionTimestamp: now}
	case savedReady != nil && ready != nil && !savedReady.LastHeartbeatTime.Equal(&ready.LastHeartbeatTime):
		// A new heartbeat; a changed transition time means a transition.
		transition := h.readyTransitionTimestamp
		if !savedReady.LastTransitionTime.Equal(&ready.LastTransitionTime) {
			logger.V(3).Info("ReadyCondition for Node transitioned", "node", klog.KObj(node), "savedCondition", savedReady, "currentReadyCondition", ready)
			transition = now
		} else {
			logger.V(3).Info("Node ReadyCondition updated. Updating timestamp", "node", klog.KObj(node))
		}
		// As upstream, the new record does not carry the saved Lease, so
		// the Lease counts as renewed at the next look.
		h = &nodeHealth{status: &node.Status, probeTimestamp: now, readyTransitionTimestamp: transition}
	}

	// A renewed Lease is a sign of life too, even from a node that never
	// posted a status.
	if lease != nil && (savedLease == nil || savedLease.Spec.RenewTime.Before(lease.Spec.RenewTime)) {
		h.lease = lease
		h.probeTimestamp = now
	}
	return h, grace, observed
}

// expired reports whether the node showed no sign of life within grace.
func (h *nodeHealth) expired(grace time.Duration, now metav1.Time) bool {
	return now.After(h.probeTimestamp.Add(grace))
}

// markUnknown sets the kubelet-owned conditions of a node that stopped
// reporting to Unknown, adding those it never posted. It changes nothing
// that is Unknown already.
func markUnknown(node *v1.Node, now metav1.Time) {
	for _, t := range kubeletConditions {
		_, cond := nodeutil.GetNodeCondition(&node.Status, t)
		switch {
		case cond == nil:
			node.Status.Conditions = append(node.Status.Conditions, v1.NodeCondition{
				Type:               t,
				Status:             v1.ConditionUnknown,
				Reason:             reasonStatusNeverUpdated,
				Message:            messageStatusNeverUpdated,
				LastHeartbeatTime:  node.CreationTimestamp,
				LastTransitionTime: now,
			})
		case cond.Status != v1.ConditionUnknown:
			cond.Status = v1.ConditionUnknown
			cond.Reason = reasonStatusUnknown
			cond.Message = messageStatusUnknown
			cond.LastTransitionTime = now
		}
	}
}
