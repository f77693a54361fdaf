package job

import (
	"reflect"
	"testing"

	"k8s.io/klog/v2"
)

func TestParseAndFormatIntervals(t *testing.T) {
	tests := []struct {
		in          string
		completions int
		want        intervals
		out         string
	}{
		{in: "", completions: 5, want: nil, out: ""},
		{in: "0", completions: 5, want: intervals{{0, 0}}, out: "0"},
		{in: "0,1", completions: 5, want: intervals{{0, 1}}, out: "0,1"},
		{in: "0-2", completions: 5, want: intervals{{0, 2}}, out: "0-2"},
		{in: "0,1,2", completions: 5, want: intervals{{0, 2}}, out: "0-2"},
		{in: "1,3-5,7", completions: 10, want: intervals{{1, 1}, {3, 5}, {7, 7}}, out: "1,3-5,7"},
		{in: "0-2,3-4", completions: 10, want: intervals{{0, 4}}, out: "0-4"},
		// Out of range: cut at completions, later pieces dropped.
		{in: "1,3-8,9", completions: 5, want: intervals{{1, 1}, {3, 4}}, out: "1,3,4"},
		{in: "7", completions: 5, want: nil, out: ""},
		// Malformed pieces are skipped.
		{in: "a,2,3-b,5", completions: 10, want: intervals{{2, 2}, {5, 5}}, out: "2,5"},
	}
	for _, tc := range tests {
		got := parseIntervals(klog.Background(), tc.in, tc.completions)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parse(%q, %d) = %v, want %v", tc.in, tc.completions, got, tc.want)
		}
		if s := got.String(); s != tc.out {
			t.Errorf("parse(%q).String() = %q, want %q", tc.in, s, tc.out)
		}
	}
}

func TestIntervalsMergeHasTotal(t *testing.T) {
	base := intervals{{1, 3}, {7, 7}}
	got := base.withIndexes([]int{0, 4, 4, 5, 9})
	if want := (intervals{{0, 5}, {7, 7}, {9, 9}}); !reflect.DeepEqual(got, want) {
		t.Fatalf("withIndexes = %v, want %v", got, want)
	}
	if !reflect.DeepEqual(base, intervals{{1, 3}, {7, 7}}) {
		t.Errorf("withIndexes modified its receiver: %v", base)
	}
	if got.total() != 8 {
		t.Errorf("total = %d, want 8", got.total())
	}
	for ix, want := range map[int]bool{-1: false, 0: true, 5: true, 6: false, 7: true, 8: false, 9: true, 10: false} {
		if got.has(ix) != want {
			t.Errorf("has(%d) = %v", ix, !want)
		}
	}
	merged := intervals{{0, 2}, {10, 12}}.merge(intervals{{3, 4}, {8, 11}, {20, 20}})
	if want := (intervals{{0, 4}, {8, 12}, {20, 20}}); !reflect.DeepEqual(merged, want) {
		t.Errorf("merge = %v, want %v", merged, want)
	}
	if intervals(nil).merge(nil) != nil || intervals(nil).has(0) {
		t.Error("empty intervals")
	}
}
