package job

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	batch "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

const removePatch = `{"metadata":{"$deleteFromPrimitiveList/finalizers":["batch.kubernetes.io/job-tracking"]}}`

func TestCreatesPodsWithFinalizerOnce(t *testing.T) {
	job := newJob(2, 5)
	f := newFixture(t, job)
	f.mustSync()
	if got := f.pods.CreateCalls(); got != 2 {
		t.Fatalf("created %d pods, want parallelism 2", got)
	}
	tmpl := f.pods.Templates[0]
	if !slices.Equal(tmpl.Finalizers, []string{batch.JobTrackingFinalizer}) || tmpl.GenerateName != "" {
		t.Errorf("template finalizers %v, generateName %q", tmpl.Finalizers, tmpl.GenerateName)
	}
	want := metav1.OwnerReference{APIVersion: "batch/v1", Kind: "Job", Name: "pi", UID: "job-uid", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	if !reflect.DeepEqual(f.pods.ControllerRefs[0], want) {
		t.Errorf("controllerRef = %+v", f.pods.ControllerRefs[0])
	}
	st := f.lastStatus()
	if st.Active != 2 || st.StartTime == nil || *st.Ready != 0 || *st.Terminating != 0 {
		t.Errorf("status = %+v", st)
	}
	// The informer has not seen the pods: no more creations.
	f.mustSync()
	if got := f.pods.CreateCalls(); got != 2 {
		t.Errorf("created %d pods before the first were observed", got)
	}
}

func TestIndexedCreatesPendingIndexes(t *testing.T) {
	job := newJob(3, 5, indexed)
	f := newFixture(t, job,
		newPod(job, "pi-0", atIndex(0), podPhase(v1.PodSucceeded), noFinalizer),
		newPod(job, "pi-1", atIndex(1), readyPod))
	job.Status.CompletedIndexes = "0"
	job.Status.Succeeded = 1
	f.cache(job)
	f.mustSync()
	var got []string
	for _, tm := range f.pods.Templates {
		got = append(got, tm.GenerateName+"/"+tm.Annotations[batch.JobCompletionIndexAnnotation]+"/"+tm.Labels[batch.JobCompletionIndexAnnotation]+"/"+tm.Spec.Hostname)
	}
	slices.Sort(got)
	if want := []string{"pi-2-/2/2/pi-2", "pi-3-/3/3/pi-3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("created %v, want %v", got, want)
	}
	if st := f.lastStatus(); st.Active != 3 || *st.Ready != 1 || st.CompletedIndexes != "0" {
		t.Errorf("status = %+v", st)
	}
}

// A succeeded pod is counted in two writes: its UID in
// uncountedTerminatedPods, then, once its finalizer is gone, in the
// counter; the last one completes the Job.
func TestTracksSucceededPodsAndCompletes(t *testing.T) {
	job := newJob(1, 2, started, jobStatus(batch.JobStatus{Succeeded: 1, StartTime: ptr.To(metav1.NewTime(t0.Add(-time.Minute))), UncountedTerminatedPods: &batch.UncountedTerminatedPods{}}))
	f := newFixture(t, job,
		newPod(job, "a", podPhase(v1.PodSucceeded), noFinalizer),
		newPod(job, "b", podPhase(v1.PodSucceeded)))
	f.mustSync()
	updates := f.statusUpdates()
	if len(updates) != 2 {
		t.Fatalf("%d status writes, want 2", len(updates))
	}
	if u := updates[0].Status; u.Succeeded != 1 || !slices.Equal(u.UncountedTerminatedPods.Succeeded, []types.UID{"b-uid"}) || len(u.Conditions) != 1 {
		t.Errorf("first write: %+v", u)
	}
	if got := f.pods.Patches; len(got) != 1 || string(got[0]) != removePatch {
		t.Errorf("patches = %q", got)
	}
	final := updates[1].Status
	if final.Succeeded != 2 || len(final.UncountedTerminatedPods.Succeeded) != 0 || final.CompletionTime == nil {
		t.Errorf("final status: %+v", final)
	}
	if got, want := conditionTypes(final), []string{"SuccessCriteriaMet=True/CompletionsReached", "Complete=True/CompletionsReached"}; !reflect.DeepEqual(got, want) {
		t.Errorf("conditions %v, want %v", got, want)
	}
	if got := f.events(); !reflect.DeepEqual(got, []string{"Normal Completed Job completed"}) {
		t.Errorf("events = %v", got)
	}
	// Until the informer shows it finished, the Job is not synced again.
	f.client.ClearActions()
	f.mustSync()
	if n := len(f.client.Actions()); n != 0 {
		t.Errorf("%d actions after finishing", n)
	}
}

// After a restart between the two writes, a UID in uncountedTerminatedPods
// whose finalizer is gone is counted once, and a pod without the finalizer
// is never counted again.
func TestCountsUncountedOnceAfterRestart(t *testing.T) {
	job := newJob(2, 3, started, jobStatus(batch.JobStatus{Succeeded: 1, Failed: 0, Active: 1, Ready: ptr.To[int32](0), Terminating: ptr.To[int32](0),
		StartTime: ptr.To(metav1.NewTime(t0)), UncountedTerminatedPods: &batch.UncountedTerminatedPods{Succeeded: []types.UID{"b-uid"}, Failed: []types.UID{"c-uid"}}}))
	f := newFixture(t, job,
		newPod(job, "a", podPhase(v1.PodSucceeded), noFinalizer), // counted in Succeeded: 1
		newPod(job, "b", podPhase(v1.PodSucceeded), noFinalizer), // finalizer removed before the restart
		newPod(job, "c", podPhase(v1.PodFailed)),                 // still holding it
		newPod(job, "d"))
	f.mustSync()
	st := f.lastStatus()
	if st.Succeeded != 2 || st.Failed != 1 || len(st.UncountedTerminatedPods.Succeeded)+len(st.UncountedTerminatedPods.Failed) != 0 {
		t.Errorf("status = %+v", st)
	}
	if f.pods.CreateCalls() != 0 {
		t.Errorf("created %d pods; the failed pod's back-off runs", f.pods.CreateCalls())
	}
}

func TestBackoffLimitExceeded(t *testing.T) {
	job := newJob(1, 1, backoffLimit(1), started, jobStatus(batch.JobStatus{Failed: 1, StartTime: ptr.To(metav1.NewTime(t0))}))
	f := newFixture(t, job,
		newPod(job, "a", podPhase(v1.PodFailed), noFinalizer),
		newPod(job, "b", podPhase(v1.PodFailed), exitCode(1)),
		newPod(job, "c", readyPod))
	f.mustSync()
	if !slices.Equal(f.pods.Deleted, []string{"c"}) {
		t.Errorf("deleted %v, want the active pod", f.pods.Deleted)
	}
	updates := f.statusUpdates()
	// The active pod is now terminating: the Job is not Failed yet. Every
	// pod not succeeded counts as failed, the deleted one too.
	last := updates[len(updates)-1].Status
	if got := conditionTypes(last); !reflect.DeepEqual(got, []string{"FailureTarget=True/BackoffLimitExceeded"}) {
		t.Fatalf("conditions %v", got)
	}
	if last.Failed != 3 || last.Active != 0 || *last.Terminating != 1 || *last.Ready != 0 {
		t.Errorf("status = %+v", last)
	}
	// The pod terminates; its finalizer goes and it counts as failed.
	cur := updates[len(updates)-1].DeepCopy()
	f.cache(cur)
	f.cache(newPod(job, "b", podPhase(v1.PodFailed), exitCode(1), noFinalizer))
	f.cache(newPod(job, "c", podPhase(v1.PodFailed), noFinalizer))
	f.client.ClearActions()
	f.mustSync()
	final := f.lastStatus()
	if got, want := conditionTypes(final), []string{"FailureTarget=True/BackoffLimitExceeded", "Failed=True/BackoffLimitExceeded"}; !reflect.DeepEqual(got, want) {
		t.Errorf("conditions %v, want %v", got, want)
	}
	if final.CompletionTime != nil {
		t.Error("a failed Job has no completionTime")
	}
	if got := f.events(); !slices.Contains(got, "Warning BackoffLimitExceeded Job has reached the specified backoff limit") {
		t.Errorf("events = %v", got)
	}
}

func TestPodFailurePolicy(t *testing.T) {
	in := batch.PodFailurePolicyOnExitCodesOpIn
	policy := failurePolicy(
		onExit(batch.PodFailurePolicyActionFailJob, in, 42),
		onCondition(batch.PodFailurePolicyActionIgnore, v1.DisruptionTarget),
		onExit(batch.PodFailurePolicyActionCount, in, 1))
	t.Run("FailJob", func(t *testing.T) {
		job := newJob(1, 1, policy, started)
		f := newFixture(t, job, newPod(job, "a", podPhase(v1.PodFailed), exitCode(42)))
		f.mustSync()
		st := f.lastStatus()
		if got, want := conditionTypes(st), []string{"FailureTarget=True/PodFailurePolicy", "Failed=True/PodFailurePolicy"}; !reflect.DeepEqual(got, want) {
			t.Fatalf("conditions %v, want %v", got, want)
		}
		if msg := st.Conditions[1].Message; msg != "Container c for pod ns/a failed with exit code 42 matching FailJob rule at index 0" {
			t.Errorf("message %q", msg)
		}
		if st.Failed != 1 {
			t.Errorf("failed = %d", st.Failed)
		}
	})
	t.Run("Ignore", func(t *testing.T) {
		job := newJob(1, 1, policy, started, backoffLimit(0))
		f := newFixture(t, job, newPod(job, "a", podPhase(v1.PodFailed), podCondition(v1.DisruptionTarget)))
		f.mustSync()
		st := f.lastStatus()
		if st.Failed != 0 || len(st.Conditions) != 0 {
			t.Errorf("an ignored failure counted: %+v", st)
		}
		if got := f.pods.Patches; len(got) != 1 {
			t.Errorf("the finalizer must go: %q", got)
		}
		if f.pods.CreateCalls() != 1 {
			t.Errorf("the pod is replaced at once: %d creations", f.pods.CreateCalls())
		}
	})
	t.Run("Count", func(t *testing.T) {
		job := newJob(1, 1, policy, started, backoffLimit(0))
		f := newFixture(t, job, newPod(job, "a", podPhase(v1.PodFailed), exitCode(1)))
		f.mustSync()
		if got := conditionTypes(f.lastStatus()); !reflect.DeepEqual(got, []string{"FailureTarget=True/BackoffLimitExceeded", "Failed=True/BackoffLimitExceeded"}) {
			t.Errorf("conditions %v", got)
		}
	})
	t.Run("no rule matches", func(t *testing.T) {
		job := newJob(1, 1, policy, started)
		f := newFixture(t, job, newPod(job, "a", podPhase(v1.PodFailed), exitCode(7)))
		f.mustSync()
		if st := f.lastStatus(); st.Failed != 1 || len(st.Conditions) != 0 {
			t.Errorf("status = %+v", st)
		}
		if f.pods.CreateCalls() != 0 {
			t.Error("replaced before the back-off")
		}
		// Requeued for the end of the back-off (10s).
		if n := f.c.queue.Len(); n != 0 {
			t.Errorf("queue length %d before the delay", n)
		}
	})
}

func TestBackoffLimitPerIndex(t *testing.T) {
	job := newJob(2, 3, perIndex(1, ptr.To[int32](0)), started)
	f := newFixture(t, job,
		newPod(job, "a", atIndex(0), podPhase(v1.PodFailed), exitCode(1), withAnnotation(batch.JobIndexFailureCountAnnotation, "0"),
			finishedAt(-time.Minute)),
		newPod(job, "b", atIndex(1), readyPod, withAnnotation(batch.JobIndexFailureCountAnnotation, "0")))
	f.mustSync()
	// Index 0's first failure: its pod keeps the finalizer until the
	// replacement, which inherits the count, exists.
	if len(f.pods.Patches) != 0 {
		t.Errorf("finalizer removed before the replacement: %q", f.pods.Patches)
	}
	var got []string
	for _, tm := range f.pods.Templates {
		got = append(got, tm.Annotations[batch.JobCompletionIndexAnnotation]+":"+tm.Annotations[batch.JobIndexFailureCountAnnotation])
	}
	slices.Sort(got)
	if !reflect.DeepEqual(got, []string{"0:1"}) {
		t.Errorf("created %v, want index 0 with failure count 1", got)
	}

	// The replacement fails too: index 0 fails, which exceeds maxFailedIndexes 0.
	f2 := newFixture(t, job,
		newPod(job, "a", atIndex(0), podPhase(v1.PodFailed), noFinalizer),
		newPod(job, "a2", atIndex(0), podPhase(v1.PodFailed), exitCode(1), withAnnotation(batch.JobIndexFailureCountAnnotation, "1")),
		newPod(job, "b", atIndex(1), readyPod))
	f2.mustSync()
	st := f2.lastStatus()
	if ptr.Deref(st.FailedIndexes, "<nil>") != "0" {
		t.Errorf("failedIndexes = %v", ptr.Deref(st.FailedIndexes, "<nil>"))
	}
	if got := conditionTypes(st); !reflect.DeepEqual(got, []string{"FailureTarget=True/MaxFailedIndexesExceeded"}) {
		t.Errorf("conditions %v", got)
	}
}

func TestSuccessPolicy(t *testing.T) {
	job := newJob(3, 3, indexed, started, func(j *batch.Job) {
		j.Spec.SuccessPolicy = &batch.SuccessPolicy{Rules: []batch.SuccessPolicyRule{{SucceededIndexes: ptr.To("1")}}}
	})
	f := newFixture(t, job,
		newPod(job, "a", atIndex(0), readyPod),
		newPod(job, "b", atIndex(1), podPhase(v1.PodSucceeded)),
		newPod(job, "c", atIndex(2), readyPod))
	f.mustSync()
	st := f.lastStatus()
	if got := conditionTypes(st); !reflect.DeepEqual(got, []string{"SuccessCriteriaMet=True/SuccessPolicy"}) {
		t.Fatalf("conditions %v", got)
	}
	if st.Conditions[0].Message != "Matched rules at index 0" || st.CompletedIndexes != "1" {
		t.Errorf("status %+v", st)
	}
	if got := f.pods.Deleted; len(got) != 2 {
		t.Errorf("deleted %v, want the two active pods", got)
	}
	// Once they are gone, it completes: the terminated pods are not failures.
	f.cache(f.statusUpdates()[len(f.statusUpdates())-1])
	f.cache(newPod(job, "a", atIndex(0), podPhase(v1.PodFailed), noFinalizer))
	f.cache(newPod(job, "b", atIndex(1), podPhase(v1.PodSucceeded), noFinalizer))
	f.cache(newPod(job, "c", atIndex(2), podPhase(v1.PodFailed), noFinalizer))
	f.mustSync()
	final := f.lastStatus()
	if got := conditionTypes(final); !reflect.DeepEqual(got, []string{"SuccessCriteriaMet=True/SuccessPolicy", "Complete=True/SuccessPolicy"}) {
		t.Errorf("conditions %v", got)
	}
	if final.Failed != 0 || final.Succeeded != 1 {
		t.Errorf("counters %+v", final)
	}
}

func TestActiveDeadline(t *testing.T) {
	job := newJob(1, 1, func(j *batch.Job) {
		j.Spec.ActiveDeadlineSeconds = ptr.To[int64](30)
		j.Status.StartTime = ptr.To(metav1.NewTime(t0.Add(-31 * time.Second)))
	})
	f := newFixture(t, job)
	f.mustSync()
	if got := conditionTypes(f.lastStatus()); !reflect.DeepEqual(got, []string{"FailureTarget=True/DeadlineExceeded", "Failed=True/DeadlineExceeded"}) {
		t.Errorf("conditions %v", got)
	}
	if got := f.events(); !slices.Contains(got, "Warning DeadlineExceeded Job was active longer than specified deadline") {
		t.Errorf("events %v", got)
	}
}

func TestSuspendAndResume(t *testing.T) {
	job := newJob(2, 4, suspended, started)
	f := newFixture(t, job, newPod(job, "a", readyPod), newPod(job, "b"))
	f.mustSync()
	if got := f.pods.Deleted; len(got) != 2 || len(f.pods.Patches) != 2 {
		t.Errorf("deleted %v with %d finalizer removals", got, len(f.pods.Patches))
	}
	st := f.lastStatus()
	if got := conditionTypes(st); !reflect.DeepEqual(got, []string{"Suspended=True/JobSuspended"}) {
		t.Errorf("conditions %v", got)
	}
	if st.StartTime != nil || st.Active != 0 || *st.Terminating != 2 {
		t.Errorf("status %+v", st)
	}
	if got := f.events(); !slices.Contains(got, "Normal Suspended Job suspended") {
		t.Errorf("events %v", got)
	}

	resumed := f.statusUpdates()[0].DeepCopy()
	resumed.Spec.Suspend = ptr.To(false)
	f2 := newFixture(t, resumed)
	f2.clock.Step(time.Minute)
	f2.mustSync()
	st = f2.lastStatus()
	if got := conditionTypes(st); !reflect.DeepEqual(got, []string{"Suspended=False/JobResumed"}) {
		t.Errorf("conditions %v", got)
	}
	if st.StartTime == nil || !st.StartTime.Time.Equal(t0.Add(time.Minute)) {
		t.Errorf("startTime %v", st.StartTime)
	}
	if f2.pods.CreateCalls() != 2 {
		t.Errorf("created %d pods on resume", f2.pods.CreateCalls())
	}
}

func TestPodReplacementPolicyFailed(t *testing.T) {
	job := newJob(2, 4, started, func(j *batch.Job) { j.Spec.PodReplacementPolicy = ptr.To(batch.Failed) })
	f := newFixture(t, job, newPod(job, "a", readyPod, deleting), newPod(job, "b", readyPod))
	f.mustSync()
	if f.pods.CreateCalls() != 0 {
		t.Errorf("replaced a terminating pod: %d creations", f.pods.CreateCalls())
	}
	if st := f.lastStatus(); st.Failed != 0 || *st.Terminating != 1 || st.Active != 1 {
		t.Errorf("status %+v", st)
	}
	// TerminatingOrFailed (the default) replaces it and counts it failed.
	job2 := newJob(2, 4, started)
	f2 := newFixture(t, job2, newPod(job2, "a", readyPod, deleting), newPod(job2, "b", readyPod))
	f2.mustSync()
	if st := f2.lastStatus(); st.Failed != 1 {
		t.Errorf("status %+v", st)
	}
}

func TestManagedByAnotherController(t *testing.T) {
	job := newJob(1, 1, func(j *batch.Job) { j.Spec.ManagedBy = ptr.To("example.com/other") })
	f := newFixture(t, job)
	f.mustSync()
	if n := len(f.client.Actions()); n != 0 || f.pods.CreateCalls() != 0 {
		t.Errorf("%d actions, %d creations", n, f.pods.CreateCalls())
	}
}

func TestElasticIndexedScaleDown(t *testing.T) {
	job := newJob(2, 2, indexed, started)
	f := newFixture(t, job,
		newPod(job, "a", atIndex(0), readyPod),
		newPod(job, "b", atIndex(1), readyPod),
		newPod(job, "c", atIndex(2), readyPod),
		newPod(job, "d", atIndex(3), readyPod))
	f.mustSync()
	got := slices.Clone(f.pods.Deleted)
	slices.Sort(got)
	if !reflect.DeepEqual(got, []string{"c", "d"}) {
		t.Errorf("deleted %v, want the indexes past completions", got)
	}
}

func TestCreateFailuresAreBoundedAndRetried(t *testing.T) {
	job := newJob(10, 10)
	f := newFixture(t, job)
	f.pods.Err = apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("exceeded quota"))
	err := f.sync()
	if err == nil || !strings.Contains(err.Error(), "exceeded quota") {
		t.Fatalf("err = %v", err)
	}
	if got := f.pods.CreateCalls(); got != 1 {
		t.Errorf("%d creations tried; slow start stops after the first batch", got)
	}
	if add, _, _ := f.c.expectations.GetExpectations("ns/pi"); add != 0 {
		t.Errorf("still expecting %d creations", add)
	}
	if st := f.lastStatus(); st.Active != 0 {
		t.Errorf("active = %d", st.Active)
	}
}

func TestJobBeingDeletedReleasesFinalizers(t *testing.T) {
	job := newJob(2, 2, started, func(j *batch.Job) { j.DeletionTimestamp = ptr.To(metav1.NewTime(t0)) })
	f := newFixture(t, job, newPod(job, "a", readyPod), newPod(job, "b", podPhase(v1.PodSucceeded)))
	f.mustSync()
	if n := len(f.pods.Patches); n != 2 {
		t.Errorf("%d finalizers removed, want 2", n)
	}
	if f.pods.CreateCalls() != 0 || len(f.pods.Deleted) != 0 {
		t.Error("a Job being deleted manages no pods")
	}
}

func TestOrphanPodsLoseFinalizer(t *testing.T) {
	job := newJob(1, 1)
	running := newJob(1, 1, func(j *batch.Job) { j.Name, j.UID = "run", "run-uid" })
	other := newPod(job, "other", func(p *v1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "rs-uid", Controller: ptr.To(true)}}
	})
	f := newFixture(t, running,
		newPod(job, "gone"),     // its Job was deleted
		newPod(running, "kept"), // its Job runs
		other,                   // not a Job's
		newPod(job, "plain", noFinalizer))
	ctx := t.Context()
	for _, key := range []string{"pod/ns/gone", "pod/ns/kept", "pod/ns/other", "pod/ns/plain", "pod/ns/missing", "selector/ns/batch.kubernetes.io/controller-uid=job-uid"} {
		if err := f.c.syncOrphan(ctx, key); err != nil {
			t.Fatalf("%s: %v", key, err)
		}
	}
	if n := len(f.pods.Patches); n != 2 { // gone, twice (by name and by selector)
		t.Errorf("%d patches, want 2", n)
	}
	if err := f.c.syncOrphan(ctx, "bogus"); err == nil {
		t.Error("a malformed key is an error")
	}
}

func TestHandlersOnlyEnqueue(t *testing.T) {
	job := newJob(1, 1)
	f := newFixture(t, job)
	finished := job.DeepCopy()
	finished.Status.Conditions = []batch.JobCondition{{Type: batch.JobComplete, Status: v1.ConditionTrue}}
	f.c.updateJob(klogFor(t), job, finished)
	f.c.updateJob(klogFor(t), finished, finished)
	if n := f.c.orphans.Len(); n != 1 {
		t.Errorf("%d orphan keys, want one selector scan when the Job finishes", n)
	}
	if n := len(f.client.Actions()); n != 0 {
		t.Errorf("handlers made %d API calls", n)
	}
}

// A finished Job's pod whose finalizer removal the last sync made and the
// informer has not shown yet is not patched a second time by the orphan
// worker; once the removal failed (or showed), it is.
func TestOrphanWorkerSkipsPendingRemovals(t *testing.T) {
	job := newJob(1, 1, started, jobStatus(batch.JobStatus{Conditions: []batch.JobCondition{{Type: batch.JobComplete, Status: v1.ConditionTrue}}}))
	pod := newPod(job, "done", podPhase(v1.PodSucceeded))
	f := newFixture(t, job, pod)
	logger := klogFor(t)
	f.c.finalizers.expect(logger, jobKey(job), []types.UID{pod.UID})
	if err := f.c.syncOrphan(t.Context(), "pod/ns/done"); err != nil {
		t.Fatal(err)
	}
	if n := len(f.pods.Patches); n != 0 {
		t.Fatalf("%d patches while the removal is pending, want 0", n)
	}
	f.c.finalizers.observed(logger, jobKey(job), pod.UID)
	if err := f.c.syncOrphan(t.Context(), "pod/ns/done"); err != nil {
		t.Fatal(err)
	}
	if n := len(f.pods.Patches); n != 1 {
		t.Fatalf("%d patches once nothing is pending, want 1", n)
	}
}
