package nodelifecycle

import (
	"testing"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"
)

func TestObserveHealth(t *testing.T) {
	policy := healthPolicy{startupGracePeriod: time.Minute, monitorGracePeriod: 40 * time.Second}
	now := metav1.NewTime(t0)
	earlier := metav1.NewTime(t0.Add(-30 * time.Second))
	created := newNode("n").CreationTimestamp
	hb := t0.Add(-10 * time.Minute)
	ready := newNode("n", withCondition(v1.NodeReady, v1.ConditionTrue, hb))
	saved := func(n *v1.Node, lease *coordv1.Lease) *nodeHealth {
		return &nodeHealth{probeTimestamp: earlier, readyTransitionTimestamp: earlier, status: n.Status.DeepCopy(), lease: lease}
	}
	newHeartbeat := newNode("n", withCondition(v1.NodeReady, v1.ConditionTrue, t0.Add(-time.Second)))
	transitioned := newNode("n", withCondition(v1.NodeReady, v1.ConditionFalse, t0.Add(-time.Second)))
	transitioned.Status.Conditions[0].LastTransitionTime = metav1.NewTime(t0.Add(-time.Second))
	oldLease := newLease("n", t0.Add(-time.Minute), "1")
	renewed := newLease("n", t0.Add(-time.Second), "2")

	tests := []struct {
		name           string
		node           *v1.Node
		saved          *nodeHealth
		lease          *coordv1.Lease
		wantProbe      metav1.Time
		wantTransition metav1.Time
		wantGrace      time.Duration
		wantObserved   v1.ConditionStatus
		wantExpired    bool
	}{
		{name: "never posted, first look: startup grace from creation", node: newNode("n"),
			wantProbe: created, wantTransition: created, wantGrace: time.Minute, wantObserved: v1.ConditionUnknown, wantExpired: true},
		{name: "never posted, but its Lease is renewed", node: newNode("n"), lease: renewed,
			wantProbe: now, wantTransition: created, wantGrace: time.Minute, wantObserved: v1.ConditionUnknown},
		{name: "first look at a posted node: now", node: ready,
			wantProbe: now, wantTransition: now, wantGrace: 40 * time.Second, wantObserved: v1.ConditionTrue},
		{name: "same heartbeat: nothing changes", node: ready, saved: saved(ready, nil),
			wantProbe: earlier, wantTransition: earlier, wantGrace: 40 * time.Second, wantObserved: v1.ConditionTrue},
		{name: "new heartbeat", node: newHeartbeat, saved: saved(ready, nil),
			wantProbe: now, wantTransition: earlier, wantGrace: 40 * time.Second, wantObserved: v1.ConditionTrue},
		{name: "new heartbeat with a transition", node: transitioned, saved: saved(ready, nil),
			wantProbe: now, wantTransition: now, wantGrace: 40 * time.Second, wantObserved: v1.ConditionFalse},
		{name: "renewed Lease", node: ready, saved: saved(ready, oldLease), lease: renewed,
			wantProbe: now, wantTransition: earlier, wantGrace: 40 * time.Second, wantObserved: v1.ConditionTrue},
		{name: "Lease not renewed", node: ready, saved: saved(ready, oldLease), lease: oldLease,
			wantProbe: earlier, wantTransition: earlier, wantGrace: 40 * time.Second, wantObserved: v1.ConditionTrue},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			logger, _ := ktesting.NewTestContext(t)
			h, grace, observed := policy.observe(logger, tc.node.DeepCopy(), tc.saved, tc.lease, now)
			if !h.probeTimestamp.Equal(&tc.wantProbe) || !h.readyTransitionTimestamp.Equal(&tc.wantTransition) {
				t.Errorf("probe, transition = %v, %v; want %v, %v", h.probeTimestamp, h.readyTransitionTimestamp, tc.wantProbe, tc.wantTransition)
			}
			if grace != tc.wantGrace {
				t.Errorf("grace = %v, want %v", grace, tc.wantGrace)
			}
			if observed.Status != tc.wantObserved {
				t.Errorf("observed Ready = %s, want %s", observed.Status, tc.wantObserved)
			}
			if got := h.expired(grace, now); got != tc.wantExpired {
				t.Errorf("expired = %v, want %v", got, tc.wantExpired)
			}
		})
	}
}

// TestHealthExpiresWithClock walks a node through time: it stays healthy
// while its Lease is renewed, and expires a grace period after the last
// renewal.
func TestHealthExpiresWithClock(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	policy := healthPolicy{startupGracePeriod: time.Minute, monitorGracePeriod: 40 * time.Second}
	node := newNode("n", withCondition(v1.NodeReady, v1.ConditionTrue, t0))
	var h *nodeHealth
	at := func(d time.Duration, lease *coordv1.Lease) bool {
		now := metav1.NewTime(t0.Add(d))
		var grace time.Duration
		h, grace, _ = policy.observe(logger, node, h, lease, now)
		return h.expired(grace, now)
	}
	steps := []struct {
		at      time.Duration
		renewed bool
		expired bool
	}{
		{0, true, false}, {10 * time.Second, true, false}, {30 * time.Second, false, false},
		{50 * time.Second, false, false}, {51 * time.Second, false, true}, {55 * time.Second, true, false},
	}
	lease := newLease("n", t0, "1")
	for _, s := range steps {
		if s.renewed {
			lease = newLease("n", t0.Add(s.at), "x")
		}
		if got := at(s.at, lease); got != s.expired {
			t.Errorf("at %v: expired = %v, want %v", s.at, got, s.expired)
		}
	}
}

func TestMarkUnknown(t *testing.T) {
	now := metav1.NewTime(t0)
	hb := t0.Add(-time.Minute)
	node := newNode("n",
		withCondition(v1.NodeReady, v1.ConditionTrue, hb),
		withCondition(v1.NodeMemoryPressure, v1.ConditionUnknown, hb),
		withCondition(v1.NodeNetworkUnavailable, v1.ConditionFalse, hb))
	markUnknown(node, now)

	tests := []struct {
		cond                  v1.NodeConditionType
		status                v1.ConditionStatus
		reason, message       string
		transition, heartbeat time.Time
	}{
		{v1.NodeReady, v1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status.", t0, hb},
		{v1.NodeMemoryPressure, v1.ConditionUnknown, "KubeletSays", "kubelet says so", t0.Add(-time.Hour), hb},
		{v1.NodeNetworkUnavailable, v1.ConditionFalse, "KubeletSays", "kubelet says so", t0.Add(-time.Hour), hb},
		{v1.NodeDiskPressure, v1.ConditionUnknown, "NodeStatusNeverUpdated", "Kubelet never posted node status.", t0, node.CreationTimestamp.Time},
		{v1.NodePIDPressure, v1.ConditionUnknown, "NodeStatusNeverUpdated", "Kubelet never posted node status.", t0, node.CreationTimestamp.Time},
	}
	for _, tc := range tests {
		c := condition(node, tc.cond)
		if c == nil {
			t.Errorf("%s: missing", tc.cond)
			continue
		}
		if c.Status != tc.status || c.Reason != tc.reason || c.Message != tc.message ||
			!c.LastTransitionTime.Time.Equal(tc.transition) || !c.LastHeartbeatTime.Time.Equal(tc.heartbeat) {
			t.Errorf("%s = %+v", tc.cond, *c)
		}
	}
	if len(node.Status.Conditions) != 5 {
		t.Errorf("%d conditions, want 5", len(node.Status.Conditions))
	}
}
