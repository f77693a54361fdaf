package deployment

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
)

func TestSetNewReplicaSetAnnotations(t *testing.T) {
	long := strings.Repeat("1234,", 399) + "1234" // 1999 characters
	tests := []struct {
		name        string
		dAnnots     map[string]string
		rsAnnots    map[string]string
		newRevision string
		exists      bool
		want        map[string]string
		wantChanged bool
	}{
		{name: "new replica set", newRevision: "1",
			dAnnots: map[string]string{"kubernetes.io/change-cause": "v1", v1.LastAppliedConfigAnnotation: "{}", RevisionAnnotation: "9", apps.DeprecatedRollbackTo: "2"},
			want: map[string]string{"kubernetes.io/change-cause": "v1", RevisionAnnotation: "1",
				DesiredReplicasAnnotation: "4", MaxReplicasAnnotation: "5"},
			wantChanged: true},
		{name: "up to date", exists: true, newRevision: "3",
			dAnnots:  map[string]string{"a": "b"},
			rsAnnots: map[string]string{"a": "b", RevisionAnnotation: "3"},
			want:     map[string]string{"a": "b", RevisionAnnotation: "3"}},
		{name: "higher revision kept", exists: true, newRevision: "2",
			rsAnnots: map[string]string{RevisionAnnotation: "5"},
			want:     map[string]string{RevisionAnnotation: "5"}},
		{name: "rolled back to: old revision into history", exists: true, newRevision: "4",
			rsAnnots: map[string]string{RevisionAnnotation: "2"},
			want:     map[string]string{RevisionAnnotation: "4", RevisionHistoryAnnotation: "2"}, wantChanged: true},
		{name: "history appended", exists: true, newRevision: "6",
			rsAnnots: map[string]string{RevisionAnnotation: "4", RevisionHistoryAnnotation: "1,2"},
			want:     map[string]string{RevisionAnnotation: "6", RevisionHistoryAnnotation: "1,2,4"}, wantChanged: true},
		{name: "history trimmed to 2000 characters", exists: true, newRevision: "99999",
			rsAnnots: map[string]string{RevisionAnnotation: "88888", RevisionHistoryAnnotation: long},
			want:     map[string]string{RevisionAnnotation: "99999", RevisionHistoryAnnotation: long[5:] + ",88888"}, wantChanged: true},
		{name: "annotation changed on the deployment", exists: true, newRevision: "2",
			dAnnots:  map[string]string{"kubernetes.io/change-cause": "v2"},
			rsAnnots: map[string]string{"kubernetes.io/change-cause": "v1", "own": "x", RevisionAnnotation: "2"},
			want:     map[string]string{"kubernetes.io/change-cause": "v2", "own": "x", RevisionAnnotation: "2"}, wantChanged: true},
		{name: "unparseable revision: untouched", exists: true, newRevision: "2",
			rsAnnots: map[string]string{RevisionAnnotation: "x"},
			want:     map[string]string{RevisionAnnotation: "x"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := deployment(4, surge("1"))
			d.Annotations = tc.dAnnots
			rs := replicaSet(d, "web-a", "img:1", 4, old)
			rs.Annotations = maps.Clone(tc.rsAnnots)
			changed := setNewReplicaSetAnnotations(klog.Background(), d, rs, tc.newRevision, tc.exists)
			if changed != tc.wantChanged || !maps.Equal(rs.Annotations, tc.want) {
				t.Errorf("changed %v, annotations %v\nwant %v, %v", changed, rs.Annotations, tc.wantChanged, tc.want)
			}
		})
	}
}

func TestRevisions(t *testing.T) {
	d := deployment(1)
	mk := func(revs ...string) []*apps.ReplicaSet {
		var out []*apps.ReplicaSet
		for i, r := range revs {
			rs := replicaSet(d, "web-"+string(rune('a'+i)), "img:1", 0, old)
			if r != "" {
				rs.Annotations = map[string]string{RevisionAnnotation: r}
			}
			out = append(out, rs)
		}
		return out
	}
	tests := []struct {
		revs          []string
		wantMax       int64
		wantLast      int64
		wantNextLabel string
	}{
		{nil, 0, 0, "1"},
		{[]string{"3"}, 3, 0, "4"},
		{[]string{"1", "3", "2"}, 3, 2, "4"},
		{[]string{"3", "3"}, 3, 3, "4"},
		{[]string{"", "x", "5"}, 5, 0, "6"},
	}
	for _, tc := range tests {
		rss := mk(tc.revs...)
		if got := maxRevision(klog.Background(), rss); got != tc.wantMax {
			t.Errorf("%v: maxRevision %d, want %d", tc.revs, got, tc.wantMax)
		}
		if got := lastRevision(klog.Background(), rss); got != tc.wantLast {
			t.Errorf("%v: lastRevision %d, want %d", tc.revs, got, tc.wantLast)
		}
		if got := nextRevision(klog.Background(), rss); got != tc.wantNextLabel {
			t.Errorf("%v: nextRevision %s, want %s", tc.revs, got, tc.wantNextLabel)
		}
	}
}

func TestCleanupOldReplicaSets(t *testing.T) {
	d := deployment(1)
	idle := func(rs *apps.ReplicaSet) {}
	withPods := func(rs *apps.ReplicaSet) { rs.Status.Replicas = 1 }
	unobserved := func(rs *apps.ReplicaSet) { rs.Generation = 2; rs.Status.ObservedGeneration = 1 }
	deleting := func(rs *apps.ReplicaSet) { rs.DeletionTimestamp = &metav1.Time{} }
	tests := []struct {
		name  string
		limit *int32
		// one old ReplicaSet per entry, revision = index+1, size 0 unless scaled
		opts       []rsOpt
		scaled     []bool
		wantDelete []string
	}{
		{name: "no limit", opts: []rsOpt{idle, idle, idle}},
		{name: "within limit", limit: ptr32(3), opts: []rsOpt{idle, idle, idle}},
		{name: "oldest beyond limit go", limit: ptr32(1), opts: []rsOpt{idle, idle, idle}, wantDelete: []string{"web-r1", "web-r2"}},
		{name: "limit 0 deletes all idle", limit: ptr32(0), opts: []rsOpt{idle, idle}, wantDelete: []string{"web-r1", "web-r2"}},
		{name: "busy ones stay, and count", limit: ptr32(1), opts: []rsOpt{withPods, unobserved, idle}, scaled: []bool{false, false, false}},
		{name: "scaled ones stay", limit: ptr32(0), opts: []rsOpt{idle, idle}, scaled: []bool{true, false}, wantDelete: []string{"web-r2"}},
		{name: "being deleted: neither deleted nor counted", limit: ptr32(1), opts: []rsOpt{deleting, idle, idle}, wantDelete: []string{"web-r2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dd := d.DeepCopy()
			dd.Spec.RevisionHistoryLimit = tc.limit
			var objs []runtime.Object
			var rss []*apps.ReplicaSet
			for i, o := range tc.opts {
				size := int32(0)
				if tc.scaled != nil && tc.scaled[i] {
					size = 1
				}
				// Newer revisions were created earlier: revision order wins.
				rs := replicaSet(d, "web-r"+string(rune('1'+i)), "img:"+string(rune('1'+i)), size, metav1.NewTime(t0.Add(-time.Duration(i)*time.Hour)), rev(i+1), o)
				rss = append(rss, rs)
				objs = append(objs, rs)
			}
			f := newFixture(t, objs...)
			if err := f.c.cleanupOldReplicaSets(f.ctx, dd, rss); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range describe(f.client.Actions()) {
				got = append(got, strings.TrimPrefix(a, "delete replicasets "))
			}
			if !slices.Equal(got, tc.wantDelete) {
				t.Errorf("deleted %v, want %v", got, tc.wantDelete)
			}
		})
	}
}
