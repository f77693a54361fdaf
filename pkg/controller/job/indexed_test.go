package job

import (
	"fmt"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	batch "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

func TestFirstPendingIndexes(t *testing.T) {
	job := newJob(3, 10, indexed)
	active := []*v1.Pod{newPod(job, "a", atIndex(1)), newPod(job, "b", atIndex(4))}
	st := &syncState{job: job, activePods: active, pods: active, succeededIndexes: intervals{{0, 0}, {5, 6}}}
	if got := firstPendingIndexes(st, 4, 10); !reflect.DeepEqual(got, []int{2, 3, 7, 8}) {
		t.Errorf("got %v", got)
	}
	if got := firstPendingIndexes(st, 20, 8); !reflect.DeepEqual(got, []int{2, 3, 7}) {
		t.Errorf("bounded by completions: %v", got)
	}
	st.failedIndexes = intervals{{2, 3}}
	if got := firstPendingIndexes(st, 2, 10); !reflect.DeepEqual(got, []int{7, 8}) {
		t.Errorf("failed indexes skipped: %v", got)
	}
	// With podReplacementPolicy Failed, a terminating pod's index waits.
	job.Spec.PodReplacementPolicy = ptr.To(batch.Failed)
	st.pods = append(st.pods, newPod(job, "c", atIndex(7), deleting))
	if got := firstPendingIndexes(st, 2, 10); !reflect.DeepEqual(got, []int{8, 9}) {
		t.Errorf("terminating index skipped: %v", got)
	}
}

func TestDuplicatesForRemoval(t *testing.T) {
	job := newJob(3, 3, indexed)
	pods := []*v1.Pod{
		newPod(job, "dup-running", atIndex(1), readyPod),
		newPod(job, "no-index"),
		newPod(job, "dup-pending", atIndex(1)),
		newPod(job, "out-of-range", atIndex(3)),
		newPod(job, "zero", atIndex(0)),
	}
	rm, left := duplicatesForRemoval(pods, 3)
	names := func(ps []*v1.Pod) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Name)
		}
		return out
	}
	if got := names(rm); !reflect.DeepEqual(got, []string{"no-index", "dup-pending", "out-of-range"}) {
		t.Errorf("rm = %v", got)
	}
	if got := names(left); !reflect.DeepEqual(got, []string{"zero", "dup-running"}) {
		t.Errorf("left = %v", got)
	}
}

func TestIndexedTemplate(t *testing.T) {
	job := newJob(1, 3, perIndex(2, nil))
	base := job.Spec.Template.DeepCopy()
	addCompletionIndexEnv(base)
	addCompletionIndexEnv(base) // idempotent
	failed := newPod(job, "old", atIndex(2), podPhase(v1.PodFailed), withAnnotation(batch.JobIndexFailureCountAnnotation, "1"))
	tmpl, gen := indexedTemplate(klog.Background(), job, base, 2, failed)
	if gen != "pi-2-" || tmpl.Spec.Hostname != "pi-2" {
		t.Errorf("generateName %q, hostname %q", gen, tmpl.Spec.Hostname)
	}
	if tmpl.Annotations[batch.JobCompletionIndexAnnotation] != "2" || tmpl.Labels[batch.JobCompletionIndexAnnotation] != "2" {
		t.Errorf("index annotation/label: %v %v", tmpl.Annotations, tmpl.Labels)
	}
	if tmpl.Annotations[batch.JobIndexFailureCountAnnotation] != "2" {
		t.Errorf("failure count: %v", tmpl.Annotations)
	}
	if _, ok := base.Annotations[batch.JobCompletionIndexAnnotation]; ok {
		t.Error("base template modified")
	}
	env := tmpl.Spec.Containers[0].Env
	if len(env) != 1 || env[0].Name != "JOB_COMPLETION_INDEX" || env[0].ValueFrom.FieldRef.FieldPath != "metadata.labels['batch.kubernetes.io/job-completion-index']" {
		t.Errorf("env = %+v", env)
	}
	long := strings.Repeat("x", 60)
	if g := indexedGenerateName(long, 123); len(g) != maxGeneratedNameLength || !strings.HasSuffix(g, "-123-") {
		t.Errorf("long name: %q", g)
	}
}

func TestFailedIndexes(t *testing.T) {
	logger := klog.Background()
	job := newJob(3, 4, perIndex(1, nil), failurePolicy(onExit(batch.PodFailurePolicyActionFailIndex, batch.PodFailurePolicyOnExitCodesOpIn, 42)))
	job.Status.FailedIndexes = ptr.To("3")
	pods := []*v1.Pod{
		// First failure of index 0: within backoffLimitPerIndex.
		newPod(job, "a", atIndex(0), podPhase(v1.PodFailed), exitCode(1), withAnnotation(batch.JobIndexFailureCountAnnotation, "0")),
		// Second failure of index 1: over it.
		newPod(job, "b", atIndex(1), podPhase(v1.PodFailed), exitCode(1), withAnnotation(batch.JobIndexFailureCountAnnotation, "1")),
		// FailIndex at once.
		newPod(job, "c", atIndex(2), podPhase(v1.PodFailed), exitCode(42), withAnnotation(batch.JobIndexFailureCountAnnotation, "0")),
	}
	if got := failedIndexes(logger, job, pods).String(); got != "1-3" {
		t.Errorf("failed indexes = %q, want 1-3", got)
	}
}

// What a sync computes about indexes costs by the Job's pods and the
// intervals of its status, never by its completions: the same work for
// 1,000 and 100,000 completions.
func TestIndexCostIndependentOfCompletions(t *testing.T) {
	var completed []string
	for i := 0; i < 100; i += 2 {
		completed = append(completed, strconv.Itoa(i))
	}
	completed = append(completed, "200-899")
	cost := func(completions int32) float64 {
		job := newJob(50, completions, indexed)
		job.Status.CompletedIndexes = strings.Join(completed, ",")
		var pods []*v1.Pod
		for i := range 50 {
			pods = append(pods, newPod(job, fmt.Sprint("p", i), atIndex(101+2*i)))
		}
		pods = append(pods, newPod(job, "done", atIndex(900), podPhase(v1.PodSucceeded)))
		logger := klog.Background()
		return bytesPerRun(20, func() {
			st := &syncState{job: job, pods: pods, activePods: pods[:50]}
			st.prevSucceededIndexes, st.succeededIndexes = succeededIndexes(logger, job, pods)
			if got := firstPendingIndexes(st, 50, int(completions)); len(got) != 50 || got[0] != 1 {
				t.Fatalf("completions %d: pending %v", completions, got)
			}
			if s := st.succeededIndexes.String(); !strings.HasSuffix(s, ",200-900") {
				t.Fatalf("completions %d: completedIndexes %q", completions, s)
			}
		})
	}
	cost(1000) // warm up
	if small, large := cost(1000), cost(100000); large > small*1.1+1024 {
		t.Errorf("bytes allocated per sync: %.0f with 1,000 completions, %.0f with 100,000", small, large)
	}
}

// bytesPerRun is the average number of bytes f allocates.
func bytesPerRun(runs int, f func()) float64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return float64(after.TotalAlloc-before.TotalAlloc) / float64(runs)
}
