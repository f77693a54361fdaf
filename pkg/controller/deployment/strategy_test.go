package deployment

import (
	"testing"

	apps "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func TestResolveFenceposts(t *testing.T) {
	tests := []struct {
		surge, unavailable string // "" is nil
		desired            int32
		wantSurge, wantUn  int32
		wantErr            bool
	}{
		{"0", "0", 10, 0, 1, false},
		{"", "", 10, 0, 1, false},
		{"1", "0", 10, 1, 0, false},
		{"0", "1", 10, 0, 1, false},
		{"3", "2", 10, 3, 2, false},
		// Percentages: surge rounds up, unavailable down.
		{"25%", "25%", 10, 3, 2, false},
		{"25%", "25%", 1, 1, 0, false},
		{"25%", "25%", 3, 1, 0, false},
		{"25%", "25%", 4, 1, 1, false},
		{"10%", "10%", 5, 1, 0, false},
		{"0%", "0%", 100, 0, 1, false},
		{"50%", "50%", 7, 4, 3, false},
		{"100%", "100%", 7, 7, 7, false},
		{"1%", "99%", 0, 0, 1, false}, // no replicas: both 0, unavailable becomes 1
		{"foo", "0", 10, 0, 0, true},
		{"0", "bar%", 10, 0, 0, true},
	}
	for _, tc := range tests {
		var s, u *intstr.IntOrString
		if tc.surge != "" {
			s = ptr.To(intstr.Parse(tc.surge))
		}
		if tc.unavailable != "" {
			u = ptr.To(intstr.Parse(tc.unavailable))
		}
		gotS, gotU, err := resolveFenceposts(s, u, tc.desired)
		if (err != nil) != tc.wantErr || gotS != tc.wantSurge || gotU != tc.wantUn {
			t.Errorf("resolveFenceposts(%q, %q, %d) = %d, %d, %v; want %d, %d, error %v",
				tc.surge, tc.unavailable, tc.desired, gotS, gotU, err, tc.wantSurge, tc.wantUn, tc.wantErr)
		}
	}
}

func TestMaxSurgeAndUnavailable(t *testing.T) {
	tests := []struct {
		name      string
		d         *apps.Deployment
		wantSurge int32
		wantUn    int32
	}{
		{"defaults 25%", deployment(10, surge("25%"), unavailable("25%")), 3, 2},
		{"unavailable clamped to replicas", deployment(2, surge("0"), unavailable("5")), 0, 2},
		{"zero replicas: nothing unavailable", deployment(0, surge("1"), unavailable("1")), 1, 0},
		{"zero and zero", deployment(5), 0, 1},
		{"recreate", deployment(5, recreate), 0, 0},
		{"invalid surge", deployment(5, surge("x"), unavailable("1")), 0, 0},
	}
	for _, tc := range tests {
		if got := maxSurge(tc.d); got != tc.wantSurge {
			t.Errorf("%s: maxSurge = %d, want %d", tc.name, got, tc.wantSurge)
		}
		if got := maxUnavailable(tc.d); got != tc.wantUn {
			t.Errorf("%s: maxUnavailable = %d, want %d", tc.name, got, tc.wantUn)
		}
	}
}

func TestNewRSNewReplicas(t *testing.T) {
	d := deployment(10)
	tests := []struct {
		name   string
		d      *apps.Deployment
		newRS  int32
		oldRSs []int32
		want   int32
	}{
		{"surge 25%: 10 old + 3 new", deployment(10, surge("25%")), 0, []int32{10}, 3},
		{"at max total: no change", deployment(10, surge("2")), 2, []int32{10}, 2},
		{"above max total: no change", deployment(10, surge("2")), 2, []int32{12}, 2},
		{"never beyond replicas", deployment(10, surge("5")), 8, []int32{0}, 10},
		{"old ones shrank", deployment(10, surge("1")), 3, []int32{6}, 5},
		{"fresh deployment", deployment(3, surge("25%")), 0, nil, 3},
		{"recreate: all at once", deployment(7, recreate), 0, []int32{7}, 7},
	}
	for _, tc := range tests {
		newRS := replicaSet(d, "web-new", "img:2", tc.newRS, newer)
		all := []*apps.ReplicaSet{newRS}
		for _, n := range tc.oldRSs {
			all = append(all, replicaSet(d, "web-old", "img:1", n, old))
		}
		got, err := newRSNewReplicas(tc.d, all, newRS)
		if err != nil || got != tc.want {
			t.Errorf("%s: newRSNewReplicas = %d, %v; want %d", tc.name, got, err, tc.want)
		}
	}
	bad := deployment(3)
	bad.Spec.Strategy.Type = "Unknown"
	if _, err := newRSNewReplicas(bad, nil, nil); err == nil {
		t.Error("unknown strategy: no error")
	}
	noSurge := deployment(3)
	noSurge.Spec.Strategy.RollingUpdate.MaxSurge = nil
	if _, err := newRSNewReplicas(noSurge, nil, nil); err == nil {
		t.Error("nil maxSurge: no error (upstream fails too)")
	}
}

func TestMaxScaleDown(t *testing.T) {
	d := deployment(10, surge("3"), unavailable("2"))
	tests := []struct {
		name                  string
		newSpec, newAvailable int32
		oldSpec               int32
		want                  int32
	}{
		{"rollout start: 13 - 8 - 3", 3, 0, 10, 2},
		{"new ones available", 3, 3, 10, 5},
		{"nothing may go", 3, 0, 7, -1},
	}
	for _, tc := range tests {
		newRS := replicaSet(d, "web-new", "img:2", tc.newSpec, newer)
		newRS.Status.AvailableReplicas = tc.newAvailable
		all := []*apps.ReplicaSet{replicaSet(d, "web-old", "img:1", tc.oldSpec, old), newRS}
		if got := maxScaleDown(d, all, newRS); got != tc.want {
			t.Errorf("%s: maxScaleDown = %d, want %d", tc.name, got, tc.want)
		}
	}
}
