package job

import (
	"testing"

	batch "k8s.io/api/batch/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

func TestMatchSuccessPolicy(t *testing.T) {
	rule := func(indexes *string, count *int32) batch.SuccessPolicyRule {
		return batch.SuccessPolicyRule{SucceededIndexes: indexes, SucceededCount: count}
	}
	tests := []struct {
		name      string
		rules     []batch.SuccessPolicyRule
		succeeded string
		want      string // "" for not met
	}{
		{name: "nothing succeeded", rules: []batch.SuccessPolicyRule{rule(nil, ptr.To[int32](1))}, succeeded: ""},
		{name: "count", rules: []batch.SuccessPolicyRule{rule(nil, ptr.To[int32](3))}, succeeded: "0,2,4", want: "Matched rules at index 0"},
		{name: "count not reached", rules: []batch.SuccessPolicyRule{rule(nil, ptr.To[int32](4))}, succeeded: "0,2,4"},
		{name: "all indexes", rules: []batch.SuccessPolicyRule{rule(ptr.To("1-3"), nil)}, succeeded: "0-3", want: "Matched rules at index 0"},
		{name: "indexes missing", rules: []batch.SuccessPolicyRule{rule(ptr.To("1-3"), nil)}, succeeded: "1,3"},
		{name: "count of indexes", rules: []batch.SuccessPolicyRule{rule(ptr.To("1-3,5"), ptr.To[int32](2)), rule(nil, ptr.To[int32](1))},
			succeeded: "3,5", want: "Matched rules at index 0"},
		{name: "second rule", rules: []batch.SuccessPolicyRule{rule(ptr.To("0"), nil), rule(ptr.To("2,4-6"), nil)},
			succeeded: "1-7", want: "Matched rules at index 1"},
		{name: "rule out of range ignored", rules: []batch.SuccessPolicyRule{rule(ptr.To("9"), nil)}, succeeded: "0-7"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			logger := klog.Background()
			got, met := matchSuccessPolicy(logger, &batch.SuccessPolicy{Rules: tc.rules}, 8, parseIntervals(logger, tc.succeeded, 8))
			if met != (tc.want != "") || got != tc.want {
				t.Errorf("= %q, %v; want %q", got, met, tc.want)
			}
		})
	}
}
