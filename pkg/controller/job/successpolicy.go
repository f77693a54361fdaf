package job

import (
	"fmt"

	batch "k8s.io/api/batch/v1"
	"k8s.io/klog/v2"
)

// matchSuccessPolicy returns the SuccessCriteriaMet message of the first
// rule the succeeded indexes satisfy: all of the rule's succeededIndexes
// (or succeededCount of them), or, without succeededIndexes, at least
// succeededCount indexes in all.
func matchSuccessPolicy(logger klog.Logger, policy *batch.SuccessPolicy, completions int32, succeeded intervals) (string, bool) {
	if policy == nil || len(succeeded) == 0 {
		return "", false
	}
	for i, rule := range policy.Rules {
		met := false
		switch {
		case rule.SucceededIndexes != nil:
			required := parseIntervals(logger, *rule.SucceededIndexes, int(completions))
			if len(required) == 0 {
				// Nothing parsed (malformed, or all out of range).
				continue
			}
			met = succeededIndexesRuleMet(required, succeeded, rule.SucceededCount)
		case rule.SucceededCount != nil:
			met = succeeded.total() >= int(*rule.SucceededCount)
		}
		if met {
			return fmt.Sprintf("Matched rules at index %d", i), true
		}
	}
	return "", false
}

// succeededIndexesRuleMet reports whether succeeded covers every required
// index, or at least count of them when count is set.
func succeededIndexesRuleMet(required, succeeded intervals, count *int32) bool {
	covered := 0
	r, s := 0, 0
	for r < len(required) && s < len(succeeded) {
		if overlap := min(required[r].last, succeeded[s].last) - max(required[r].first, succeeded[s].first) + 1; overlap > 0 {
			covered += overlap
		}
		switch {
		case succeeded[s].last < required[r].last:
			s++
		case succeeded[s].last > required[r].last:
			r++
		default:
			s++
			r++
		}
	}
	return covered == required.total() || (count != nil && covered >= int(*count))
}
