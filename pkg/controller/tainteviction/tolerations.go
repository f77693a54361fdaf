package tainteviction

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// forever is the toleration time of a pod that tolerates its node's taints
// without a time limit.
const forever time.Duration = -1

// noExecuteTaints returns the taints with effect NoExecute, the only ones
// that evict running pods.
func noExecuteTaints(taints []v1.Taint) []v1.Taint {
	var out []v1.Taint
	for _, t := range taints {
		if t.Effect == v1.TaintEffectNoExecute {
			out = append(out, t)
		}
	}
	return out
}

// noExecuteTaintsEqual reports whether a and b hold the same NoExecute
// taints in the same order (equality.Semantic.DeepEqual of their
// noExecuteTaints, without reflection or copies: the node handler asks it
// for every node update).
func noExecuteTaintsEqual(a, b []v1.Taint) bool {
	i, j := 0, 0
	for {
		for i < len(a) && a[i].Effect != v1.TaintEffectNoExecute {
			i++
		}
		for j < len(b) && b[j].Effect != v1.TaintEffectNoExecute {
			j++
		}
		if i == len(a) || j == len(b) {
			return i == len(a) && j == len(b)
		}
		x, y := &a[i], &b[j]
		if x.Key != y.Key || x.Value != y.Value ||
			(x.TimeAdded == nil) != (y.TimeAdded == nil) ||
			x.TimeAdded != nil && !x.TimeAdded.Equal(y.TimeAdded) {
			return false
		}
		i, j = i+1, j+1
	}
}

// matchingTolerations returns, for each taint, the first toleration in
// tolerations that tolerates it, and false if some taint is tolerated by
// none. compareOps enables the numeric Lt and Gt operators (the
// TaintTolerationComparisonOperators feature gate).
func matchingTolerations(logger klog.Logger, taints []v1.Taint, tolerations []v1.Toleration, compareOps bool) ([]v1.Toleration, bool) {
	used := make([]v1.Toleration, 0, len(taints))
	for i := range taints {
		j := firstTolerating(logger, &taints[i], tolerations, compareOps)
		if j < 0 {
			return nil, false
		}
		used = append(used, tolerations[j])
	}
	return used, true
}

func firstTolerating(logger klog.Logger, taint *v1.Taint, tolerations []v1.Toleration, compareOps bool) int {
	for j := range tolerations {
		if tolerations[j].ToleratesTaint(logger, taint, compareOps) {
			return j
		}
	}
	return -1
}

// minTolerationTime returns the shortest tolerationSeconds among
// tolerations: zero if there are no tolerations or one of them is zero or
// negative, forever if none has tolerationSeconds.
func minTolerationTime(tolerations []v1.Toleration) time.Duration {
	if len(tolerations) == 0 {
		return 0
	}
	var minSeconds *int64
	for _, t := range tolerations {
		s := t.TolerationSeconds
		switch {
		case s == nil:
		case *s <= 0:
			return 0
		case minSeconds == nil || *s < *minSeconds:
			minSeconds = s
		}
	}
	if minSeconds == nil {
		return forever
	}
	return time.Duration(*minSeconds) * time.Second
}

// tolerationTime reports whether tolerations tolerate every one of taints
// and, if so, for how long (forever, or a duration of zero or more).
func tolerationTime(logger klog.Logger, taints []v1.Taint, tolerations []v1.Toleration, compareOps bool) (time.Duration, bool) {
	used, ok := matchingTolerations(logger, taints, tolerations, compareOps)
	if !ok {
		return 0, false
	}
	return minTolerationTime(used), true
}

// tolerationsEqual is equality.Semantic.DeepEqual on tolerations without
// reflection: the pod handler asks it for every pod update.
func tolerationsEqual(a, b []v1.Toleration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.Key != y.Key || x.Operator != y.Operator || x.Value != y.Value || x.Effect != y.Effect {
			return false
		}
		if (x.TolerationSeconds == nil) != (y.TolerationSeconds == nil) ||
			x.TolerationSeconds != nil && *x.TolerationSeconds != *y.TolerationSeconds {
			return false
		}
	}
	return true
}
