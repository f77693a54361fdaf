package deployment

import (
	"context"
	"testing"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func progressing(reason string, status v1.ConditionStatus, updated time.Time) apps.DeploymentCondition {
	return apps.DeploymentCondition{Type: apps.DeploymentProgressing, Status: status, Reason: reason,
		LastUpdateTime: metav1.NewTime(updated), LastTransitionTime: metav1.NewTime(updated.Add(-time.Minute))}
}

func TestRolloutStatusProgressing(t *testing.T) {
	now := t0
	tests := []struct {
		name        string
		deadline    *int32
		cur         *apps.DeploymentCondition
		oldStatus   apps.DeploymentStatus
		newSpec     int32 // new ReplicaSet
		newReady    int32
		oldSpec     int32 // one old ReplicaSet, all ready
		wantReason  string
		wantStatus  v1.ConditionStatus
		wantMessage string
		wantUpdated time.Time
	}{
		{name: "no deadline: no condition", newSpec: 3, newReady: 0},
		{name: "complete", deadline: ptr32(600), cur: cond(progressing(ReasonReplicaSetUpdated, v1.ConditionTrue, now.Add(-time.Minute))),
			newSpec: 3, newReady: 3,
			wantReason: ReasonNewRSAvailable, wantStatus: v1.ConditionTrue, wantMessage: `ReplicaSet "web-new" has successfully progressed.`, wantUpdated: now},
		{name: "progress moves lastUpdateTime", deadline: ptr32(600), cur: cond(progressing(ReasonNewReplicaSetCreated, v1.ConditionTrue, now.Add(-time.Minute))),
			oldStatus: apps.DeploymentStatus{Replicas: 3, ReadyReplicas: 0}, newSpec: 3, newReady: 1,
			wantReason: ReasonReplicaSetUpdated, wantStatus: v1.ConditionTrue, wantMessage: `ReplicaSet "web-new" is progressing.`, wantUpdated: now},
		{name: "no progress within deadline: unchanged", deadline: ptr32(600), cur: cond(progressing(ReasonReplicaSetUpdated, v1.ConditionTrue, now.Add(-time.Minute))),
			oldStatus: apps.DeploymentStatus{Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 1, AvailableReplicas: 1}, newSpec: 3, newReady: 1,
			wantReason: ReasonReplicaSetUpdated, wantStatus: v1.ConditionTrue, wantUpdated: now.Add(-time.Minute)},
		{name: "no progress past deadline: timed out", deadline: ptr32(30), cur: cond(progressing(ReasonReplicaSetUpdated, v1.ConditionTrue, now.Add(-time.Minute))),
			oldStatus: apps.DeploymentStatus{Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 1, AvailableReplicas: 1}, newSpec: 3, newReady: 1,
			wantReason: ReasonProgressDeadlineExceeded, wantStatus: v1.ConditionFalse, wantMessage: `ReplicaSet "web-new" has timed out progressing.`, wantUpdated: now},
		{name: "resumed counts from the resume", deadline: ptr32(30), cur: cond(progressing(ReasonDeploymentResumed, v1.ConditionUnknown, now.Add(-10*time.Second))),
			oldStatus: apps.DeploymentStatus{Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 1, AvailableReplicas: 1}, newSpec: 3, newReady: 1,
			wantReason: ReasonDeploymentResumed, wantStatus: v1.ConditionUnknown, wantUpdated: now.Add(-10 * time.Second)},
		{name: "complete stays complete", deadline: ptr32(30), cur: cond(progressing(ReasonNewRSAvailable, v1.ConditionTrue, now.Add(-time.Hour))),
			oldStatus: apps.DeploymentStatus{Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 3}, newSpec: 3, newReady: 1,
			wantReason: ReasonNewRSAvailable, wantStatus: v1.ConditionTrue, wantUpdated: now.Add(-time.Hour)},
		{name: "old replicas going away is progress", deadline: ptr32(30), cur: cond(progressing(ReasonReplicaSetUpdated, v1.ConditionTrue, now.Add(-time.Hour))),
			oldStatus: apps.DeploymentStatus{Replicas: 5, UpdatedReplicas: 3, ReadyReplicas: 4, AvailableReplicas: 4}, newSpec: 3, newReady: 1, oldSpec: 1,
			wantReason: ReasonReplicaSetUpdated, wantStatus: v1.ConditionTrue, wantUpdated: now},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := deployment(3, withStatus(tc.oldStatus))
			d.Spec.ProgressDeadlineSeconds = tc.deadline
			if tc.cur != nil {
				d.Status.Conditions = []apps.DeploymentCondition{*tc.cur}
			}
			newRS := replicaSet(d, "web-new", "img:1", tc.newSpec, newer)
			newRS.Status = apps.ReplicaSetStatus{Replicas: tc.newSpec, ReadyReplicas: tc.newReady, AvailableReplicas: tc.newReady}
			all := []*apps.ReplicaSet{newRS}
			if tc.oldSpec > 0 {
				oldRS := replicaSet(d, "web-old", "img:0", tc.oldSpec, old, running(tc.oldSpec))
				all = append([]*apps.ReplicaSet{oldRS}, all...)
			}
			status := rolloutStatus(context.Background(), d, all, newRS, true, now)
			c := getCondition(status, apps.DeploymentProgressing)
			if tc.wantReason == "" {
				if c != nil {
					t.Fatalf("condition %+v, want none", c)
				}
				return
			}
			if c == nil {
				t.Fatal("no Progressing condition")
			}
			if c.Reason != tc.wantReason || c.Status != tc.wantStatus || (tc.wantMessage != "" && c.Message != tc.wantMessage) {
				t.Errorf("condition %s/%s %q, want %s/%s %q", c.Status, c.Reason, c.Message, tc.wantStatus, tc.wantReason, tc.wantMessage)
			}
			if !c.LastUpdateTime.Time.Equal(tc.wantUpdated) {
				t.Errorf("lastUpdateTime %v, want %v", c.LastUpdateTime, tc.wantUpdated)
			}
			if c.Reason == ReasonReplicaSetUpdated && tc.cur.Status == v1.ConditionTrue && !c.LastTransitionTime.Equal(&tc.cur.LastTransitionTime) {
				t.Errorf("lastTransitionTime moved: %v", c.LastTransitionTime)
			}
		})
	}
}

func cond(c apps.DeploymentCondition) *apps.DeploymentCondition { return &c }
func ptr32(v int32) *int32                                      { return &v }

func TestAvailableCondition(t *testing.T) {
	tests := []struct {
		d          *apps.Deployment
		available  int32
		wantReason string
	}{
		{deployment(10, surge("25%"), unavailable("25%")), 8, ReasonMinimumReplicasAvailable},
		{deployment(10, surge("25%"), unavailable("25%")), 7, ReasonMinimumReplicasUnavailable},
		{deployment(3, recreate), 2, ReasonMinimumReplicasUnavailable},
		{deployment(3, recreate), 3, ReasonMinimumReplicasAvailable},
		{deployment(0), 0, ReasonMinimumReplicasAvailable},
	}
	for _, tc := range tests {
		rs := replicaSet(tc.d, "web-a", "img:1", desired(tc.d), old)
		rs.Status.AvailableReplicas = tc.available
		st := calculateStatus(tc.d, []*apps.ReplicaSet{rs}, rs, false, t0)
		c := getCondition(st, apps.DeploymentAvailable)
		if c == nil || c.Reason != tc.wantReason {
			t.Errorf("%d of %d available: %+v, want %s", tc.available, desired(tc.d), c, tc.wantReason)
		}
		if st.UnavailableReplicas != max(desired(tc.d)-tc.available, 0) {
			t.Errorf("unavailableReplicas %d", st.UnavailableReplicas)
		}
	}
}

func TestTerminatingReplicas(t *testing.T) {
	d := deployment(3)
	withCount := func(n int32) rsOpt {
		return func(rs *apps.ReplicaSet) { rs.Status.ObservedGeneration = 1; rs.Status.TerminatingReplicas = &n }
	}
	unobserved := func(rs *apps.ReplicaSet) {}
	noCount := func(rs *apps.ReplicaSet) { rs.Status.ObservedGeneration = 1 }
	tests := []struct {
		name string
		opts []rsOpt
		want *int32
	}{
		{"summed", []rsOpt{withCount(1), withCount(2)}, ptr32(3)},
		{"not yet observed ones are skipped", []rsOpt{withCount(2), unobserved}, ptr32(2)},
		{"unknown when one does not report", []rsOpt{withCount(2), noCount}, nil},
	}
	for _, tc := range tests {
		var rss []*apps.ReplicaSet
		for i, o := range tc.opts {
			rss = append(rss, replicaSet(d, "web-"+string(rune('a'+i)), "img:1", 1, old, o))
		}
		got := calculateStatus(d, rss, nil, true, t0).TerminatingReplicas
		if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
		if calculateStatus(d, rss, nil, false, t0).TerminatingReplicas != nil {
			t.Errorf("%s: reported with the gate off", tc.name)
		}
	}
}

func TestStuckRequeueDelay(t *testing.T) {
	now := t0
	tests := []struct {
		name   string
		d      *apps.Deployment
		status apps.DeploymentStatus
		want   time.Duration
		wantOK bool
	}{
		{name: "no deadline", d: deployment(3)},
		{name: "no condition", d: deployment(3, deadline(60))},
		{name: "due in 50s", d: deployment(3, deadline(60), withStatus(apps.DeploymentStatus{Conditions: []apps.DeploymentCondition{
			progressing(ReasonReplicaSetUpdated, v1.ConditionTrue, now.Add(-10*time.Second))}})), want: 50 * time.Second, wantOK: true},
		{name: "overdue", d: deployment(3, deadline(60), withStatus(apps.DeploymentStatus{Conditions: []apps.DeploymentCondition{
			progressing(ReasonReplicaSetUpdated, v1.ConditionTrue, now.Add(-time.Hour))}})), want: -59 * time.Minute, wantOK: true},
		{name: "timed out already", d: deployment(3, deadline(60), withStatus(apps.DeploymentStatus{Conditions: []apps.DeploymentCondition{
			progressing(ReasonProgressDeadlineExceeded, v1.ConditionFalse, now.Add(-time.Hour))}}))},
		{name: "complete", d: deployment(3, deadline(60), withStatus(apps.DeploymentStatus{Conditions: []apps.DeploymentCondition{
			progressing(ReasonReplicaSetUpdated, v1.ConditionTrue, now)}})),
			status: apps.DeploymentStatus{ObservedGeneration: 1, Replicas: 3, UpdatedReplicas: 3, AvailableReplicas: 3}},
	}
	for _, tc := range tests {
		got, ok := stuckRequeueDelay(tc.d, tc.status, now)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("%s: %v, %v; want %v, %v", tc.name, got, ok, tc.want, tc.wantOK)
		}
	}
}

func TestSetCondition(t *testing.T) {
	base := newCondition(apps.DeploymentProgressing, v1.ConditionTrue, ReasonNewReplicaSetCreated, "a", t0)
	st := apps.DeploymentStatus{Conditions: []apps.DeploymentCondition{
		base, newCondition(apps.DeploymentAvailable, v1.ConditionTrue, ReasonMinimumReplicasAvailable, "m", t0)}}

	// Same status and reason: left alone, message included.
	setCondition(&st, newCondition(apps.DeploymentProgressing, v1.ConditionTrue, ReasonNewReplicaSetCreated, "b", t0.Add(time.Hour)))
	if c := getCondition(st, apps.DeploymentProgressing); c.Message != "a" || st.Conditions[0].Type != apps.DeploymentProgressing {
		t.Errorf("same reason replaced: %+v", st.Conditions)
	}
	// Same status, new reason: moved last, transition time kept.
	setCondition(&st, newCondition(apps.DeploymentProgressing, v1.ConditionTrue, ReasonReplicaSetUpdated, "c", t0.Add(time.Hour)))
	c := st.Conditions[1]
	if c.Reason != ReasonReplicaSetUpdated || !c.LastTransitionTime.Time.Equal(t0) || !c.LastUpdateTime.Time.Equal(t0.Add(time.Hour)) {
		t.Errorf("new reason: %+v", st.Conditions)
	}
	// New status: transition time moves.
	setCondition(&st, newCondition(apps.DeploymentProgressing, v1.ConditionFalse, ReasonProgressDeadlineExceeded, "d", t0.Add(2*time.Hour)))
	if c := getCondition(st, apps.DeploymentProgressing); !c.LastTransitionTime.Time.Equal(t0.Add(2 * time.Hour)) {
		t.Errorf("new status: %+v", c)
	}
	removeCondition(&st, apps.DeploymentProgressing)
	if len(st.Conditions) != 1 || st.Conditions[0].Type != apps.DeploymentAvailable {
		t.Errorf("after remove: %+v", st.Conditions)
	}
}
