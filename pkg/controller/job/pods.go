package job

import (
	"slices"
	"sort"
	"time"

	batch "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/internal/controller/podranking"
)

// hasTrackingFinalizer reports whether the pod still holds
// batch.kubernetes.io/job-tracking: its Job has not counted it yet.
func hasTrackingFinalizer(pod *v1.Pod) bool {
	return slices.Contains(pod.Finalizers, batch.JobTrackingFinalizer)
}

// isActive reports whether a pod counts as active: not terminal and not
// being deleted.
func isActive(p *v1.Pod) bool { return podranking.IsActive(p) }

// isTerminating reports whether a pod is being deleted and not terminal.
func isTerminating(p *v1.Pod) bool { return podranking.IsTerminating(p) }

// onlyReplaceFailedPods reports podReplacementPolicy Failed: a pod is
// replaced only once it reached the Failed phase, not while it terminates.
func onlyReplaceFailedPods(job *batch.Job) bool {
	return ptr.Deref(job.Spec.PodReplacementPolicy, batch.TerminatingOrFailed) == batch.Failed
}

// isPodFailed reports whether the Job counts the pod as failed: in phase
// Failed or, unless only failed pods are replaced, deleted before it
// succeeded (an orphan that never had the chance to reach Failed).
func isPodFailed(p *v1.Pod, job *batch.Job) bool {
	if p.Status.Phase == v1.PodFailed {
		return true
	}
	if onlyReplaceFailedPods(job) {
		return false
	}
	return p.DeletionTimestamp != nil && p.Status.Phase != v1.PodSucceeded
}

func filterPods(pods []*v1.Pod, keep func(*v1.Pod) bool) []*v1.Pod {
	var out []*v1.Pod
	for _, p := range pods {
		if keep(p) {
			out = append(out, p)
		}
	}
	return out
}

func countPods(pods []*v1.Pod, match func(*v1.Pod) bool) int32 {
	var n int32
	for _, p := range pods {
		if match(p) {
			n++
		}
	}
	return n
}

// sortForRemoval orders pods so that those in earlier stages come first
// (upstream's ActivePods order: unscheduled, pending, not ready, ready
// for less time, more restarts, newer).
func sortForRemoval(pods []*v1.Pod) {
	sort.Sort(podranking.ActivePodsWithRanks{Pods: pods, Rank: make([]int, len(pods))})
}

// finishedTime estimates when a pod finished: when its last container
// (and sidecar) terminated, else when it stopped being ready, else when it
// was deleted (minus its grace period), else its creation.
func finishedTime(p *v1.Pod) time.Time {
	if t, ok := containersFinishedTime(p); ok {
		return t
	}
	if c := podranking.ReadyCondition(&p.Status); c != nil && c.Status == v1.ConditionFalse && !c.LastTransitionTime.IsZero() {
		return c.LastTransitionTime.Time
	}
	if p.DeletionTimestamp != nil {
		return p.DeletionTimestamp.Add(-time.Duration(ptr.Deref(p.DeletionGracePeriodSeconds, 0)) * time.Second)
	}
	return p.CreationTimestamp.Time
}

// containersFinishedTime is the latest termination of the pod's containers
// and then of its sidecars. A container still running, or terminated
// without a time, voids what was found before it (as upstream's lookup,
// which then may still find a sidecar's time).
func containersFinishedTime(p *v1.Pod) (time.Time, bool) {
	t, ok := latestFinish(time.Time{}, false, p.Status.ContainerStatuses, nil)
	sidecars := map[string]bool{}
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			sidecars[c.Name] = true
		}
	}
	return latestFinish(t, ok, p.Status.InitContainerStatuses, sidecars)
}

func latestFinish(t time.Time, ok bool, statuses []v1.ContainerStatus, only map[string]bool) (time.Time, bool) {
	for _, s := range statuses {
		if only != nil && !only[s.Name] {
			continue
		}
		if s.State.Terminated == nil || s.State.Terminated.FinishedAt.IsZero() {
			return time.Time{}, false
		}
		if !ok || t.Before(s.State.Terminated.FinishedAt.Time) {
			t, ok = s.State.Terminated.FinishedAt.Time, true
		}
	}
	return t, ok
}
