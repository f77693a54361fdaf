package podranking

import (
	"math"
	"time"

	v1 "k8s.io/api/core/v1"
)

// phaseOrder ranks phases for deletion: Pending first, Running last.
// Phases not listed (Succeeded, Failed, empty) rank with Pending.
var phaseOrder = map[v1.PodPhase]int{v1.PodPending: 0, v1.PodUnknown: 1, v1.PodRunning: 2}

// ActivePodsWithRanks sorts (sort.Sort) Pods, and Rank alongside, so that
// the pods a controller should delete first come first; see the package
// documentation for the order. Rank[i] belongs to Pods[i]; controllers use
// the number of related pods on the pod's node.
type ActivePodsWithRanks struct {
	Pods []*v1.Pod
	Rank []int
	// Now is the reference for the logarithmic comparison of times. If
	// zero, times are compared exactly.
	Now time.Time
	// UseDeletionCost honours the pod-deletion-cost annotation (the
	// PodDeletionCost feature gate).
	UseDeletionCost bool
}

func (s ActivePodsWithRanks) Len() int { return len(s.Pods) }

func (s ActivePodsWithRanks) Swap(i, j int) {
	s.Pods[i], s.Pods[j] = s.Pods[j], s.Pods[i]
	s.Rank[i], s.Rank[j] = s.Rank[j], s.Rank[i]
}

// Less reports whether Pods[i] should be deleted before Pods[j].
func (s ActivePodsWithRanks) Less(i, j int) bool {
	pi, pj := s.Pods[i], s.Pods[j]
	// Unassigned before assigned.
	if ai, aj := pi.Spec.NodeName != "", pj.Spec.NodeName != ""; ai != aj {
		return !ai
	}
	// Pending < Unknown < Running.
	if oi, oj := phaseOrder[pi.Status.Phase], phaseOrder[pj.Status.Phase]; oi != oj {
		return oi < oj
	}
	// Not ready before ready.
	ri, rj := IsReady(pi), IsReady(pj)
	if ri != rj {
		return !ri
	}
	// Lower deletion cost first.
	if s.UseDeletionCost {
		if ci, cj := DeletionCost(pi), DeletionCost(pj); ci != cj {
			return ci < cj
		}
	}
	// More co-located pods first.
	if s.Rank[i] != s.Rank[j] {
		return s.Rank[i] > s.Rank[j]
	}
	// Ready more recently first.
	if ri && rj {
		if ti, tj := readyTime(pi), readyTime(pj); !ti.Equal(tj) {
			return s.newerFirst(pi, pj, ti, tj)
		}
	}
	// More restarts first, regular containers before sidecars.
	regI, sideI := maxRestarts(pi)
	regJ, sideJ := maxRestarts(pj)
	if regI != regJ {
		return regI > regJ
	}
	if sideI != sideJ {
		return sideI > sideJ
	}
	// Created more recently first.
	if ti, tj := pi.CreationTimestamp.Time, pj.CreationTimestamp.Time; !ti.Equal(tj) {
		return s.newerFirst(pi, pj, ti, tj)
	}
	return false
}

// newerFirst compares two distinct times, the newer one first and a zero
// time before any other. With a reference time, times within the same
// power-of-two age bucket tie and are ordered by UID.
func (s ActivePodsWithRanks) newerFirst(pi, pj *v1.Pod, ti, tj time.Time) bool {
	if s.Now.IsZero() || ti.IsZero() || tj.IsZero() {
		return afterOrZero(ti, tj)
	}
	if d := logRank(s.Now, ti) - logRank(s.Now, tj); d != 0 {
		return d < 0
	}
	return pi.UID < pj.UID
}

// afterOrZero reports whether a is after b, a zero time counting as after
// any other.
func afterOrZero(a, b time.Time) bool {
	if a.IsZero() || b.IsZero() {
		return a.IsZero()
	}
	return a.After(b)
}

// logRank is the base-2 logarithm of t's age at now in nanoseconds, or -1
// if t is not in the past.
func logRank(now, t time.Time) int64 {
	d := now.Sub(t)
	if d <= 0 {
		return -1
	}
	return int64(math.Log2(float64(d)))
}
