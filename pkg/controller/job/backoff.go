package job

import (
	"sort"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Pod failure back-off: a Job's pods are recreated after a delay that
// doubles with each consecutive failure, from DefaultPodFailureBackOff up
// to MaxPodFailureBackOff (upstream's values).
const (
	DefaultPodFailureBackOff = 10 * time.Second
	MaxPodFailureBackOff     = 10 * time.Minute
)

// backoffRecord is a Job's run of failures since its last success.
type backoffRecord struct {
	key                      string
	failuresAfterLastSuccess int32
	lastFailureTime          *time.Time
}

// backoffStore keeps the backoffRecord of every Job that failed, in memory
// (upstream's too: a restart forgets the back-off).
type backoffStore struct {
	mu      sync.Mutex
	records map[string]backoffRecord
}

func newBackoffStore() *backoffStore {
	return &backoffStore{records: map[string]backoffRecord{}}
}

func (s *backoffStore) update(r backoffRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records[r.key] = r
}

func (s *backoffStore) remove(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.records, key)
}

// next returns the record key would have once the newly finished pods are
// counted: a success resets the run of failures, except for failures that
// finished after the last success.
func (s *backoffStore) next(key string, succeeded, failed []*v1.Pod) backoffRecord {
	s.mu.Lock()
	r, ok := s.records[key]
	s.mu.Unlock()
	if !ok {
		r = backoffRecord{key: key}
	}
	if len(succeeded) == 0 && len(failed) == 0 {
		return r
	}
	sortByFinishedTime(succeeded)
	sortByFinishedTime(failed)
	if len(succeeded) == 0 {
		r.failuresAfterLastSuccess += int32(len(failed))
		t := finishedTime(failed[len(failed)-1])
		r.lastFailureTime = &t
		return r
	}
	r.failuresAfterLastSuccess, r.lastFailureTime = 0, nil
	lastSuccess := finishedTime(succeeded[len(succeeded)-1])
	for i := len(failed) - 1; i >= 0; i-- {
		t := finishedTime(failed[i])
		if !t.After(lastSuccess) {
			break
		}
		if r.lastFailureTime == nil {
			r.lastFailureTime = &t
		}
		r.failuresAfterLastSuccess++
	}
	return r
}

func sortByFinishedTime(pods []*v1.Pod) {
	times := make(map[*v1.Pod]time.Time, len(pods))
	for _, p := range pods {
		times[p] = finishedTime(p)
	}
	sort.Slice(pods, func(i, j int) bool { return times[pods[i]].Before(times[pods[j]]) })
}

// remaining is how long the Job must still wait before creating pods.
func (r backoffRecord) remaining(clk clock.PassiveClock) time.Duration {
	return backoffRemaining(clk, r.failuresAfterLastSuccess, r.lastFailureTime)
}

// indexBackoffRemaining is how long an index whose last failed pod is
// lastFailed (nil: none) must wait before its next pod: the failures
// counted in the pod's annotations plus its own.
func indexBackoffRemaining(logger klog.Logger, clk clock.PassiveClock, lastFailed *v1.Pod) time.Duration {
	if lastFailed == nil {
		return 0
	}
	t := finishedTime(lastFailed)
	return backoffRemaining(clk, absoluteFailureCount(logger, lastFailed)+1, &t)
}

// backoffRemaining is the back-off after failures consecutive failures,
// the last at last, minus the time since.
func backoffRemaining(clk clock.PassiveClock, failures int32, last *time.Time) time.Duration {
	if failures == 0 || last == nil {
		return 0
	}
	d := DefaultPodFailureBackOff
	for i := int32(1); i < failures; i++ {
		d *= 2
		if d >= MaxPodFailureBackOff {
			d = MaxPodFailureBackOff
			break
		}
	}
	elapsed := clk.Since(*last)
	if d < elapsed {
		return 0
	}
	return d - elapsed
}
