package job

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	batch "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
)

const (
	// completionIndexEnv is the environment variable Indexed Jobs' containers
	// get, from the completion index label.
	completionIndexEnv = "JOB_COMPLETION_INDEX"
	// noIndex is the completion index of a pod without a valid one.
	noIndex = -1
	// maxGeneratedNameLength is the longest generateName the API server
	// keeps whole (63 minus its 5-character random suffix).
	maxGeneratedNameLength = 58
)

func isIndexed(job *batch.Job) bool {
	return job.Spec.CompletionMode != nil && *job.Spec.CompletionMode == batch.IndexedCompletion
}

func hasBackoffLimitPerIndex(job *batch.Job) bool {
	return job.Spec.BackoffLimitPerIndex != nil
}

// completionMode is the Job's completion mode as metrics label it.
func completionMode(job *batch.Job) string {
	if isIndexed(job) {
		return string(batch.IndexedCompletion)
	}
	return string(batch.NonIndexedCompletion)
}

// completionIndex reads a pod's completion index annotation; noIndex if it
// is missing, malformed or negative.
func completionIndex(pod *v1.Pod) int {
	v, ok := pod.Annotations[batch.JobCompletionIndexAnnotation]
	if !ok {
		return noIndex
	}
	i, err := strconv.Atoi(v)
	if err != nil || i < 0 {
		return noIndex
	}
	return i
}

// validIndex returns the pod's completion index if it is below
// completions, else noIndex.
func validIndex(pod *v1.Pod, completions int32) int {
	if ix := completionIndex(pod); ix != noIndex && ix < int(completions) {
		return ix
	}
	return noIndex
}

// sortByIndex sorts pods by completion index, those without one first. The
// index of each pod is parsed once.
func sortByIndex(pods []*v1.Pod) {
	idx := make(map[*v1.Pod]int, len(pods))
	for _, p := range pods {
		idx[p] = completionIndex(p)
	}
	sort.SliceStable(pods, func(i, j int) bool { return idx[pods[i]] < idx[pods[j]] })
}

// indexesOf returns the valid-looking completion indexes of pods.
func indexesOf(pods []*v1.Pod) sets.Set[int] {
	out := sets.New[int]()
	for _, p := range pods {
		if ix := completionIndex(p); ix != noIndex {
			out.Insert(ix)
		}
	}
	return out
}

// succeededIndexes returns the indexes status.completedIndexes records and
// those plus the indexes of succeeded pods not counted yet (they still hold
// the finalizer).
func succeededIndexes(logger klog.Logger, job *batch.Job, pods []*v1.Pod) (prev, now intervals) {
	completions := *job.Spec.Completions
	prev = parseIntervals(logger, job.Status.CompletedIndexes, int(completions))
	fresh := sets.New[int]()
	for _, p := range pods {
		if p.Status.Phase == v1.PodSucceeded && hasTrackingFinalizer(p) {
			if ix := validIndex(p, completions); ix != noIndex {
				fresh.Insert(ix)
			}
		}
	}
	return prev, prev.withIndexes(sets.List(fresh))
}

// failedIndexes returns the indexes status.failedIndexes records plus
// those of pods not counted yet that fail their index.
func failedIndexes(logger klog.Logger, job *batch.Job, pods []*v1.Pod) intervals {
	completions := *job.Spec.Completions
	var prev intervals
	if job.Status.FailedIndexes != nil {
		prev = parseIntervals(logger, *job.Status.FailedIndexes, int(completions))
	}
	fresh := sets.New[int]()
	for _, p := range pods {
		if !hasTrackingFinalizer(p) {
			continue
		}
		if ix := validIndex(p, completions); ix != noIndex && failsIndex(logger, job, p) {
			fresh.Insert(ix)
		}
	}
	return prev.withIndexes(sets.List(fresh))
}

// failsIndex reports whether a pod's failure fails its index: a FailIndex
// rule matched, or a counted failure brought the index to its
// backoffLimitPerIndex.
func failsIndex(logger klog.Logger, job *batch.Job, pod *v1.Pod) bool {
	if !isPodFailed(pod, job) {
		return false
	}
	m := matchFailurePolicy(job.Spec.PodFailurePolicy, pod)
	if m.action != nil && *m.action == batch.PodFailurePolicyActionFailIndex {
		return true
	}
	return m.count && indexFailureCount(logger, pod) >= *job.Spec.BackoffLimitPerIndex
}

// firstPendingIndexes returns up to count indexes below completions, in
// order, that no active pod runs and that have neither succeeded nor
// failed (nor, with podReplacementPolicy Failed, a terminating pod).
func firstPendingIndexes(st *syncState, count, completions int) []int {
	if count == 0 {
		return nil
	}
	taken := st.succeededIndexes.withIndexes(sets.List(indexesOf(st.activePods)))
	if onlyReplaceFailedPods(st.job) {
		taken = taken.withIndexes(sets.List(indexesOf(filterPods(st.pods, isTerminating))))
	}
	if st.failedIndexes != nil {
		taken = taken.merge(st.failedIndexes)
	}
	out := make([]int, 0, count)
	candidate := 0
	for _, r := range taken {
		for ; candidate < completions && len(out) < count && candidate < r.first; candidate++ {
			out = append(out, candidate)
		}
		candidate = max(candidate, r.last+1)
	}
	for ; candidate < completions && len(out) < count; candidate++ {
		out = append(out, candidate)
	}
	return out
}

// duplicatesForRemoval splits active pods of an Indexed Job into those to
// remove (no index, an index not below completions, or all but one of the
// pods sharing an index: the one that came furthest stays) and the rest.
func duplicatesForRemoval(pods []*v1.Pod, completions int) (rm, left []*v1.Pod) {
	sorted := append([]*v1.Pod(nil), pods...)
	sortByIndex(sorted)
	for start := 0; start < len(sorted); {
		ix := completionIndex(sorted[start])
		if ix >= completions {
			rm = append(rm, sorted[start:]...)
			break
		}
		end := start + 1
		for end < len(sorted) && completionIndex(sorted[end]) == ix {
			end++
		}
		group := sorted[start:end]
		switch {
		case ix == noIndex:
			rm = append(rm, group...)
		case len(group) == 1:
			left = append(left, group[0])
		default:
			sortForRemoval(group)
			rm = append(rm, group[:len(group)-1]...)
			left = append(left, group[len(group)-1])
		}
		start = end
	}
	return rm, left
}

// podsWithDelayedDeletion returns, per index with a failed pod not counted
// yet and nothing active, succeeded or failed, the failed pod whose
// finalizer stays until its replacement exists: the replacement inherits
// its failure counts. Of several, the one with the most failures that
// finished last.
func podsWithDelayedDeletion(logger klog.Logger, st *syncState) map[int]*v1.Pod {
	active := indexesOf(st.activePods)
	completions := *st.job.Spec.Completions
	out := map[int]*v1.Pod{}
	for _, p := range st.pods {
		if !hasTrackingFinalizer(p) || st.expectedRmFinalizers.Has(p.UID) || !isPodFailed(p, st.job) {
			continue
		}
		ix := validIndex(p, completions)
		if ix == noIndex || st.succeededIndexes.has(ix) || st.failedIndexes.has(ix) || active.Has(ix) {
			continue
		}
		if last, ok := out[ix]; ok {
			if absoluteFailureCount(logger, last) > absoluteFailureCount(logger, p) || finishedTime(p).Before(finishedTime(last)) {
				continue
			}
		}
		out[ix] = p
	}
	return out
}

// indexFailureCount reads batch.kubernetes.io/job-index-failure-count, 0
// if missing or invalid.
func indexFailureCount(logger klog.Logger, pod *v1.Pod) int32 {
	v, ok := pod.Annotations[batch.JobIndexFailureCountAnnotation]
	if !ok {
		logger.V(3).Info("There is no expected annotation", "annotationKey", batch.JobIndexFailureCountAnnotation, "pod", klog.KObj(pod), "podUID", pod.UID)
		return 0
	}
	return parseCount(logger, v)
}

// indexIgnoredFailureCount reads
// batch.kubernetes.io/job-index-ignored-failure-count, 0 if missing or
// invalid.
func indexIgnoredFailureCount(logger klog.Logger, pod *v1.Pod) int32 {
	if v, ok := pod.Annotations[batch.JobIndexIgnoredFailureCountAnnotation]; ok {
		return parseCount(logger, v)
	}
	return 0
}

func absoluteFailureCount(logger klog.Logger, pod *v1.Pod) int32 {
	return indexFailureCount(logger, pod) + indexIgnoredFailureCount(logger, pod)
}

func parseCount(logger klog.Logger, s string) int32 {
	v, err := strconv.Atoi(s)
	switch {
	case err != nil:
		logger.Error(err, "Failed to parse the value", "value", s)
		return 0
	case v < 0 || v > math.MaxInt32:
		logger.Info("The value is invalid", "value", v)
		return 0
	}
	return int32(v)
}

// replacementFailureCounts returns the failure counts a pod replacing
// failed (nil: the index's first pod) carries: its own plus its failure,
// counted or, when an Ignore rule matched, ignored.
func replacementFailureCounts(logger klog.Logger, job *batch.Job, failed *v1.Pod) (counted, ignored int32) {
	if failed == nil {
		return 0, 0
	}
	counted, ignored = indexFailureCount(logger, failed), indexIgnoredFailureCount(logger, failed)
	if matchFailurePolicy(job.Spec.PodFailurePolicy, failed).count {
		counted++
	} else {
		ignored++
	}
	return counted, ignored
}

// indexedTemplate returns the template of the pod for index ix: the
// completion index annotation and label, hostname <job>-<ix> and, with
// backoffLimitPerIndex, the failure counts inherited from replaced. It
// returns the generateName too. base is not modified.
func indexedTemplate(logger klog.Logger, job *batch.Job, base *v1.PodTemplateSpec, ix int, replaced *v1.Pod) (*v1.PodTemplateSpec, string) {
	t := base.DeepCopy()
	s := strconv.Itoa(ix)
	if t.Annotations == nil {
		t.Annotations = map[string]string{}
	}
	t.Annotations[batch.JobCompletionIndexAnnotation] = s
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	t.Labels[batch.JobCompletionIndexAnnotation] = s
	t.Spec.Hostname = fmt.Sprintf("%s-%d", job.Name, ix)
	if hasBackoffLimitPerIndex(job) {
		counted, ignored := replacementFailureCounts(logger, job, replaced)
		t.Annotations[batch.JobIndexFailureCountAnnotation] = strconv.Itoa(int(counted))
		if ignored > 0 {
			t.Annotations[batch.JobIndexIgnoredFailureCountAnnotation] = strconv.Itoa(int(ignored))
		}
	}
	return t, indexedGenerateName(job.Name, ix)
}

// indexedGenerateName is "<job>-<ix>-", the job name cut so that the whole
// fits maxGeneratedNameLength.
func indexedGenerateName(jobName string, ix int) string {
	suffix := "-" + strconv.Itoa(ix) + "-"
	name := jobName + suffix
	if len(name) > maxGeneratedNameLength {
		name = name[:maxGeneratedNameLength-len(suffix)] + suffix
	}
	return name
}

// addCompletionIndexEnv gives every container and init container
// JOB_COMPLETION_INDEX from the completion index label, unless it has it.
func addCompletionIndexEnv(t *v1.PodTemplateSpec) {
	env := v1.EnvVar{
		Name: completionIndexEnv,
		ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{
			FieldPath: fmt.Sprintf("metadata.labels['%s']", batch.JobCompletionIndexAnnotation),
		}},
	}
	add := func(c *v1.Container) {
		for _, e := range c.Env {
			if e.Name == completionIndexEnv {
				return
			}
		}
		c.Env = append(c.Env, env)
	}
	for i := range t.Spec.InitContainers {
		add(&t.Spec.InitContainers[i])
	}
	for i := range t.Spec.Containers {
		add(&t.Spec.Containers[i])
	}
}
