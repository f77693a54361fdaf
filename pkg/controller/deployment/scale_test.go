package deployment

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	apps "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
)

// TestScale follows upstream's TestScale: a Deployment last sized at
// `from` replicas (the replicas annotations of its ReplicaSets) is now at
// `to`.
func TestScale(t *testing.T) {
	type rsSpec struct {
		name    string
		size    int32
		created int // 0 newest, 1 old, 2 older
	}
	stamps := []metav1.Time{newer, old, older}
	tests := []struct {
		name    string
		from    *apps.Deployment
		to      *apps.Deployment
		newRS   *rsSpec
		oldRSs  []rsSpec
		want    map[string]int32 // sizes after, by name
		events  []string
		noWrite []string
	}{
		{name: "single active 10 -> 12", from: deployment(10), to: deployment(12),
			newRS: &rsSpec{"web-v1", 10, 0}, want: map[string]int32{"web-v1": 12},
			events: []string{"Normal ScalingReplicaSet Scaled up replica set web-v1 from 10 to 12"}},
		{name: "single active 10 -> 5", from: deployment(10), to: deployment(5),
			newRS: &rsSpec{"web-v1", 10, 0}, want: map[string]int32{"web-v1": 5},
			events: []string{"Normal ScalingReplicaSet Scaled down replica set web-v1 from 10 to 5"}},
		{name: "proportional 5 -> 10", from: deployment(5), to: deployment(10),
			newRS: &rsSpec{"web-v2", 2, 0}, oldRSs: []rsSpec{{"web-v1", 3, 1}},
			want: map[string]int32{"web-v2": 4, "web-v1": 6}},
		{name: "proportional 5 -> 3", from: deployment(5), to: deployment(3),
			newRS: &rsSpec{"web-v2", 2, 0}, oldRSs: []rsSpec{{"web-v1", 3, 1}},
			want: map[string]int32{"web-v2": 1, "web-v1": 2}},
		{name: "proportional 9 -> 4", from: deployment(9), to: deployment(4),
			newRS: &rsSpec{"web-v2", 8, 0}, oldRSs: []rsSpec{{"web-v1", 1, 1}},
			want: map[string]int32{"web-v2": 4, "web-v1": 0}},
		{name: "proportional 7 -> 10", from: deployment(7), to: deployment(10),
			newRS: &rsSpec{"web-v3", 2, 0}, oldRSs: []rsSpec{{"web-v2", 3, 1}, {"web-v1", 2, 2}},
			want: map[string]int32{"web-v3": 3, "web-v2": 4, "web-v1": 3}},
		{name: "proportional 13 -> 8", from: deployment(13), to: deployment(8),
			newRS: &rsSpec{"web-v3", 2, 0}, oldRSs: []rsSpec{{"web-v2", 8, 1}, {"web-v1", 3, 2}},
			want: map[string]int32{"web-v3": 1, "web-v2": 5, "web-v1": 2}},
		{name: "leftover to the newest when growing 3 -> 4", from: deployment(3), to: deployment(4),
			newRS: &rsSpec{"web-v3", 1, 0}, oldRSs: []rsSpec{{"web-v2", 1, 1}, {"web-v1", 1, 2}},
			want: map[string]int32{"web-v3": 2, "web-v2": 1, "web-v1": 1}},
		{name: "leftover from the oldest when shrinking 3 -> 2", from: deployment(3), to: deployment(2),
			newRS: &rsSpec{"web-v3", 1, 0}, oldRSs: []rsSpec{{"web-v2", 1, 1}, {"web-v1", 1, 2}},
			want: map[string]int32{"web-v3": 1, "web-v2": 1, "web-v1": 0}},
		{name: "no new replica set 4 -> 5", from: deployment(4), to: deployment(5),
			oldRSs: []rsSpec{{"web-v2", 2, 1}, {"web-v1", 2, 2}},
			want:   map[string]int32{"web-v2": 3, "web-v1": 2}},
		{name: "to zero 6 -> 0", from: deployment(6), to: deployment(0),
			newRS: &rsSpec{"web-v3", 3, 0}, oldRSs: []rsSpec{{"web-v2", 2, 1}, {"web-v1", 1, 2}},
			want: map[string]int32{"web-v3": 0, "web-v2": 0, "web-v1": 0}},
		{name: "from zero: the new one takes all", from: deployment(6), to: deployment(6),
			newRS: &rsSpec{"web-v3", 0, 0}, oldRSs: []rsSpec{{"web-v2", 0, 1}, {"web-v1", 0, 2}},
			want: map[string]int32{"web-v3": 6}, noWrite: []string{"web-v2", "web-v1"}},
		{name: "with surge 10 -> 20", from: deployment(10, surge("2")), to: deployment(20, surge("2")),
			newRS: &rsSpec{"web-v2", 6, 0}, oldRSs: []rsSpec{{"web-v1", 6, 1}},
			want: map[string]int32{"web-v2": 11, "web-v1": 11}},
		{name: "surge and size change", from: deployment(10, surge("3")), to: deployment(50, surge("6")),
			newRS: &rsSpec{"web-v2", 5, 0}, oldRSs: []rsSpec{{"web-v1", 8, 1}},
			want: map[string]int32{"web-v2": 22, "web-v1": 34}},
		{name: "percent surge 10 -> 21 (25%)", from: deployment(10, surge("25%")), to: deployment(21, surge("25%")),
			newRS: &rsSpec{"web-v2", 5, 0}, oldRSs: []rsSpec{{"web-v1", 8, 1}},
			// 27 allowed, 13 running: 5*27/13 = 10.38 -> 10, 8*27/13 = 16.6 -> 17.
			want: map[string]int32{"web-v2": 10, "web-v1": 17}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mk := func(s rsSpec) *apps.ReplicaSet {
				return replicaSet(tc.to, s.name, "img:"+s.name, s.size, stamps[s.created],
					sized(desired(tc.from), maxReplicas(tc.from)))
			}
			var newRS *apps.ReplicaSet
			objs := []*apps.ReplicaSet{}
			if tc.newRS != nil {
				newRS = mk(*tc.newRS)
				objs = append(objs, newRS)
			}
			var oldRSs []*apps.ReplicaSet
			for _, s := range tc.oldRSs {
				rs := mk(s)
				oldRSs = append(oldRSs, rs)
				objs = append(objs, rs)
			}
			f := newFixture(t)
			for _, rs := range objs {
				if err := f.client.Tracker().Add(rs); err != nil {
					t.Fatal(err)
				}
			}
			f.client.ClearActions()
			if err := f.c.scale(f.ctx, tc.to, newRS, oldRSs); err != nil {
				t.Fatal(err)
			}
			got := map[string]int32{}
			for _, a := range f.client.Actions() {
				rs := a.(clienttesting.UpdateAction).GetObject().(*apps.ReplicaSet)
				got[rs.Name] = *rs.Spec.Replicas
				if rs.Annotations[DesiredReplicasAnnotation] != fmt.Sprint(desired(tc.to)) ||
					rs.Annotations[MaxReplicasAnnotation] != fmt.Sprint(maxReplicas(tc.to)) {
					t.Errorf("%s annotations %v", rs.Name, rs.Annotations)
				}
				if slices.Contains(tc.noWrite, rs.Name) {
					t.Errorf("%s written", rs.Name)
				}
			}
			for name, want := range tc.want {
				size, written := got[name]
				if !written {
					for _, rs := range objs {
						if rs.Name == name {
							size = *rs.Spec.Replicas
						}
					}
				}
				if size != want {
					t.Errorf("%s: size %d, want %d", name, size, want)
				}
			}
			if tc.events != nil {
				if ev := f.events(); strings.Join(ev, "\n") != strings.Join(tc.events, "\n") {
					t.Errorf("events %q, want %q", ev, tc.events)
				}
			}
		})
	}
}

func TestProportionalSizesWithoutAnnotations(t *testing.T) {
	// Adopted ReplicaSets carry no max-replicas: the Deployment's
	// status.replicas is the base.
	d := deployment(20, withStatus(apps.DeploymentStatus{Replicas: 10}))
	a := replicaSet(d, "web-a", "img:a", 6, old)
	b := replicaSet(d, "web-b", "img:b", 4, newer)
	active := []*apps.ReplicaSet{a, b}
	sizes := proportionalSizes(klog.Background(), d, active)
	if active[0].Name != "web-a" || sizes[0] != 12 || sizes[1] != 8 {
		t.Errorf("sizes %v for %s, %s; want 12 for web-a, 8 for web-b", sizes, active[0].Name, active[1].Name)
	}
	// Without a status either, nothing is known: everything goes to the
	// first (largest).
	d.Status.Replicas = 0
	active = []*apps.ReplicaSet{a, b}
	sizes = proportionalSizes(klog.Background(), d, active)
	if sizes[0] != 16 || sizes[1] != 4 {
		t.Errorf("sizes %v, want [16 4]", sizes)
	}
}
