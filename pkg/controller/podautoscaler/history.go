package podautoscaler

import (
	"sync"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
)

// recommendation is a replica count the metrics asked for, unstabilized.
type recommendation struct {
	replicas  int32
	timestamp time.Time
}

// scaleEvent is a scaling the controller made: the absolute change.
type scaleEvent struct {
	change    int32
	timestamp time.Time
	// outdated events are older than every policy period and are reused.
	outdated bool
}

// history keeps, per HPA key, what stabilization windows and scaling
// policies look back on. It lives in memory, as upstream's: a restarted
// controller starts with the current replica count as its only
// recommendation and no scale events.
type history struct {
	mu              sync.Mutex
	recommendations map[string][]recommendation
	scaleUps        map[string][]scaleEvent
	scaleDowns      map[string][]scaleEvent
}

func newHistory() *history {
	return &history{
		recommendations: map[string][]recommendation{},
		scaleUps:        map[string][]scaleEvent{},
		scaleDowns:      map[string][]scaleEvent{},
	}
}

// forget drops everything recorded for a deleted HPA.
func (h *history) forget(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.recommendations, key)
	delete(h.scaleUps, key)
	delete(h.scaleDowns, key)
}

// recordInitial makes the current count the first recommendation.
func (h *history) recordInitial(key string, current int32, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.recommendations[key] == nil {
		h.recommendations[key] = []recommendation{{current, now}}
	}
}

// recommend records r, reusing the slot of the last recommendation older
// than every window (isOld), and returns the recommendations before it.
func (h *history) recommend(key string, r recommendation, isOld func(recommendation) bool, visit func(recommendation)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	old := -1
	for i, rec := range h.recommendations[key] {
		visit(rec)
		if isOld(rec) {
			old = i
		}
	}
	if old >= 0 {
		h.recommendations[key][old] = r
	} else {
		h.recommendations[key] = append(h.recommendations[key], r)
	}
}

// stabilize returns the highest recommendation within window, including
// desired, and records desired (the downscale stabilization of HPAs
// without behavior).
func (h *history) stabilize(key string, desired int32, window time.Duration, now time.Time) int32 {
	highest := desired
	cutoff := now.Add(-window)
	h.recommend(key, recommendation{desired, now},
		func(r recommendation) bool { return r.timestamp.Before(cutoff) },
		func(r recommendation) {
			if !r.timestamp.Before(cutoff) && r.replicas > highest {
				highest = r.replicas
			}
		})
	return highest
}

// stabilizeWithBehaviors bounds desired by the lowest recommendation of
// the scale-up window and the highest of the scale-down window, starting
// from current, and records desired.
func (h *history) stabilizeWithBehaviors(key string, current, desired int32, upWindow, downWindow time.Duration, now time.Time) int32 {
	up, down := desired, desired
	upCutoff, downCutoff := now.Add(-upWindow), now.Add(-downWindow)
	h.recommend(key, recommendation{desired, now},
		func(r recommendation) bool { return r.timestamp.Before(upCutoff) && r.timestamp.Before(downCutoff) },
		func(r recommendation) {
			if r.timestamp.After(upCutoff) {
				up = min(up, r.replicas)
			}
			if r.timestamp.After(downCutoff) {
				down = max(down, r.replicas)
			}
		})
	stabilized := current
	if stabilized < up {
		stabilized = up
	}
	if stabilized > down {
		stabilized = down
	}
	return stabilized
}

// storeScaleEvent records a scaling from prev to next when the HPA has a
// behavior (only policies read them), reusing an outdated slot.
func (h *history) storeScaleEvent(b *autoscalingv2.HorizontalPodAutoscalerBehavior, key string, prev, next int32, now time.Time) {
	if b == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	events, rules, change := h.scaleDowns, b.ScaleDown, prev-next
	if next > prev {
		events, rules, change = h.scaleUps, b.ScaleUp, next-prev
	}
	list := events[key]
	cutoff := now.Add(-time.Duration(longestPolicyPeriod(rules)) * time.Second)
	old := -1
	for i := range list {
		if list[i].timestamp.Before(cutoff) {
			list[i].outdated = true
		}
		if list[i].outdated {
			old = i
		}
	}
	e := scaleEvent{change: change, timestamp: now}
	if old >= 0 {
		list[old] = e
	} else {
		list = append(list, e)
	}
	events[key] = list
}

// events returns copies of the HPA's scale-up and scale-down events.
func (h *history) events(key string) (ups, downs []scaleEvent) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]scaleEvent(nil), h.scaleUps[key]...), append([]scaleEvent(nil), h.scaleDowns[key]...)
}

func longestPolicyPeriod(rules *autoscalingv2.HPAScalingRules) int32 {
	var longest int32
	if rules == nil {
		return 0
	}
	for _, p := range rules.Policies {
		longest = max(longest, p.PeriodSeconds)
	}
	return longest
}
