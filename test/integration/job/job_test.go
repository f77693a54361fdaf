package job

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	batch "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/test/integration/framework"
)

func TestNonIndexedJobCompletes(t *testing.T) {
	e := setup(t)
	j := e.createJob("work", 2, 3)
	pods := e.waitPods("work", 2)
	for _, p := range pods {
		if !slices.Contains(p.Finalizers, batch.JobTrackingFinalizer) {
			t.Errorf("pod %s lacks the tracking finalizer: %v", p.Name, p.Finalizers)
		}
		ref := metav1.GetControllerOf(&p)
		if ref == nil || ref.UID != j.UID || ref.Kind != "Job" || !ptr.Deref(ref.BlockOwnerDeletion, false) {
			t.Errorf("pod %s controllerRef = %+v", p.Name, ref)
		}
		for _, l := range []string{batch.JobNameLabel, batch.ControllerUidLabel, "job-name", "controller-uid"} {
			if p.Labels[l] == "" {
				t.Errorf("pod %s lacks label %s: %v", p.Name, l, p.Labels)
			}
		}
		if p.GenerateName != "work-" {
			t.Errorf("generateName %q", p.GenerateName)
		}
	}
	e.waitJob("work", "2 active", func(j *batch.Job) bool { return j.Status.Active == 2 && j.Status.StartTime != nil })
	for _, p := range pods {
		e.finish(p, v1.PodSucceeded, 0)
	}
	e.finish(e.waitPods("work", 1)[0], v1.PodSucceeded, 0)
	j = e.waitJob("work", "Complete", func(j *batch.Job) bool { return hasCondition(j, batch.JobComplete, batch.JobReasonCompletionsReached) })
	if got, want := conditionTypes(j), []string{"SuccessCriteriaMet=True/CompletionsReached", "Complete=True/CompletionsReached"}; !reflect.DeepEqual(got, want) {
		t.Errorf("conditions %v, want %v", got, want)
	}
	st := j.Status
	if st.Succeeded != 3 || st.Failed != 0 || st.Active != 0 || *st.Ready != 0 || *st.Terminating != 0 || st.CompletionTime == nil ||
		len(st.UncountedTerminatedPods.Succeeded)+len(st.UncountedTerminatedPods.Failed) != 0 {
		t.Errorf("status %+v", st)
	}
	e.waitNoFinalizers("work")
	e.waitEvent("work", "Completed Job completed")
	created := 0
	for _, ev := range e.events("work") {
		if len(ev) > 16 && ev[:16] == "SuccessfulCreate" {
			created++
		}
	}
	if created != 3 || e.podCreates.Load() != 3 {
		t.Errorf("%d SuccessfulCreate Events, %d creations; want 3", created, e.podCreates.Load())
	}
}

func TestIndexedJobCompletes(t *testing.T) {
	e := setup(t)
	e.createJob("idx", 3, 3, func(j *batch.Job) { j.Spec.CompletionMode = ptr.To(batch.IndexedCompletion) })
	pods := e.waitPods("idx", 3)
	byIndex := map[string]v1.Pod{}
	for _, p := range pods {
		ix := p.Annotations[batch.JobCompletionIndexAnnotation]
		if p.Labels[batch.JobCompletionIndexAnnotation] != ix || p.Spec.Hostname != "idx-"+ix || p.GenerateName != "idx-"+ix+"-" {
			t.Errorf("pod %s: label %q, hostname %q, generateName %q for index %q", p.Name, p.Labels[batch.JobCompletionIndexAnnotation], p.Spec.Hostname, p.GenerateName, ix)
		}
		env := p.Spec.Containers[0].Env
		if len(env) != 1 || env[0].Name != "JOB_COMPLETION_INDEX" {
			t.Errorf("pod %s env %+v", p.Name, env)
		}
		byIndex[ix] = p
	}
	if len(byIndex) != 3 {
		t.Fatalf("indexes %v", byIndex)
	}
	e.finish(byIndex["1"], v1.PodSucceeded, 0)
	e.waitJob("idx", "index 1 completed", func(j *batch.Job) bool { return j.Status.CompletedIndexes == "1" && j.Status.Succeeded == 1 })
	e.finish(byIndex["0"], v1.PodSucceeded, 0)
	e.finish(byIndex["2"], v1.PodSucceeded, 0)
	j := e.waitJob("idx", "Complete", func(j *batch.Job) bool { return hasCondition(j, batch.JobComplete, batch.JobReasonCompletionsReached) })
	if j.Status.CompletedIndexes != "0-2" || j.Status.Succeeded != 3 {
		t.Errorf("status %+v", j.Status)
	}
	e.waitNoFinalizers("idx")
}

func TestBackoffLimitAndRecreationDelay(t *testing.T) {
	e := setup(t)
	e.createJob("fail", 1, 1, func(j *batch.Job) { j.Spec.BackoffLimit = ptr.To[int32](1) })
	first := e.waitPods("fail", 1)[0]
	failedAt := time.Now()
	e.finish(first, v1.PodFailed, 1)
	e.waitJob("fail", "1 failed", func(j *batch.Job) bool { return j.Status.Failed == 1 })
	// The replacement waits for the back-off: 10s after the failure.
	second := e.waitPods("fail", 1)[0]
	if d := time.Since(failedAt); d < 9*time.Second {
		t.Errorf("replacement created %v after the failure, before the 10s back-off", d)
	}
	e.finish(second, v1.PodFailed, 1)
	j := e.waitJob("fail", "Failed", func(j *batch.Job) bool { return hasCondition(j, batch.JobFailed, batch.JobReasonBackoffLimitExceeded) })
	if got, want := conditionTypes(j), []string{"FailureTarget=True/BackoffLimitExceeded", "Failed=True/BackoffLimitExceeded"}; !reflect.DeepEqual(got, want) {
		t.Errorf("conditions %v, want %v", got, want)
	}
	if j.Status.Failed != 2 || j.Status.CompletionTime != nil {
		t.Errorf("status %+v", j.Status)
	}
	e.waitNoFinalizers("fail")
	e.waitEvent("fail", "BackoffLimitExceeded Job has reached the specified backoff limit")
}

func TestPodFailurePolicyActions(t *testing.T) {
	e := setup(t)
	in := batch.PodFailurePolicyOnExitCodesOpIn
	e.createJob("pfp", 1, 1, func(j *batch.Job) {
		j.Spec.BackoffLimit = ptr.To[int32](0)
		j.Spec.PodFailurePolicy = &batch.PodFailurePolicy{Rules: []batch.PodFailurePolicyRule{
			{Action: batch.PodFailurePolicyActionFailJob, OnExitCodes: &batch.PodFailurePolicyOnExitCodesRequirement{Operator: in, Values: []int32{42}}},
			{Action: batch.PodFailurePolicyActionIgnore, OnPodConditions: []batch.PodFailurePolicyOnPodConditionsPattern{{Type: v1.DisruptionTarget, Status: v1.ConditionTrue}}},
		}}
	})
	// A disruption is ignored: replaced at once, not counted.
	e.finish(e.waitPods("pfp", 1)[0], v1.PodFailed, 137, v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: "PreemptionByScheduler"})
	second := e.waitPods("pfp", 1)[0]
	if j := e.getJob("pfp"); j.Status.Failed != 0 {
		t.Errorf("an ignored failure counted: %+v", j.Status)
	}
	e.finish(second, v1.PodFailed, 42)
	j := e.waitJob("pfp", "Failed", func(j *batch.Job) bool { return hasCondition(j, batch.JobFailed, batch.JobReasonPodFailurePolicy) })
	want := "Container c for pod " + e.ns + "/" + second.Name + " failed with exit code 42 matching FailJob rule at index 0"
	if msg := j.Status.Conditions[len(j.Status.Conditions)-1].Message; msg != want {
		t.Errorf("message %q, want %q", msg, want)
	}
	if j.Status.Failed != 1 {
		t.Errorf("status %+v", j.Status)
	}
}

func TestSuspendAndResume(t *testing.T) {
	e := setup(t)
	e.createJob("sus", 2, 2, func(j *batch.Job) { j.Spec.Suspend = ptr.To(true) })
	j := e.waitJob("sus", "Suspended", func(j *batch.Job) bool { return hasCondition(j, batch.JobSuspended, "JobSuspended") })
	if j.Status.StartTime != nil || len(e.pods("sus", "")) != 0 {
		t.Errorf("a Job created suspended started: %+v", j.Status)
	}
	j.Spec.Suspend = ptr.To(false)
	if _, err := e.client.BatchV1().Jobs(e.ns).Update(e.ctx, j, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitPods("sus", 2)
	j = e.waitJob("sus", "resumed", func(j *batch.Job) bool {
		c := j.Status.Conditions
		return len(c) == 1 && c[0].Status == v1.ConditionFalse && c[0].Reason == "JobResumed" && j.Status.StartTime != nil
	})
	// Suspended again: active pods are deleted and startTime is reset.
	j.Spec.Suspend = ptr.To(true)
	if _, err := e.client.BatchV1().Jobs(e.ns).Update(e.ctx, j, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitJob("sus", "suspended again", func(j *batch.Job) bool {
		return hasCondition(j, batch.JobSuspended, "JobSuspended") && j.Status.StartTime == nil && j.Status.Active == 0
	})
	framework.Eventually(t, timeout, func() (bool, error) { return len(e.pods("sus", "")) == 0, nil })
	e.waitEvent("sus", "Suspended Job suspended")
	e.waitEvent("sus", "Resumed Job resumed")
	e.waitEvent("sus", "SuccessfulDelete Deleted pod: ")
}

// A Job deleted while its pods still hold the tracking finalizer (no
// garbage collector here: the pods stay, pointing at a Job that is gone)
// leaves no finalizer behind.
func TestDeletedJobReleasesFinalizers(t *testing.T) {
	e := setup(t)
	e.createJob("gone", 3, 3)
	e.waitPods("gone", 3)
	if err := e.client.BatchV1().Jobs(e.ns).Delete(e.ctx, "gone", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationOrphan)}); err != nil {
		t.Fatal(err)
	}
	e.waitNoFinalizers("gone")
}

// Finished pods are counted exactly once across a restart: pods that
// finish while the controller is down are counted when it is back.
func TestRestartCountsOnce(t *testing.T) {
	e := setup(t)
	e.createJob("rs", 3, 4)
	pods := e.waitPods("rs", 3)
	e.finish(pods[0], v1.PodSucceeded, 0)
	e.waitJob("rs", "1 succeeded", func(j *batch.Job) bool { return j.Status.Succeeded == 1 })
	e.stop()
	e.finish(pods[1], v1.PodSucceeded, 0)
	e.finish(pods[2], v1.PodSucceeded, 0)
	e.start()
	e.finish(e.waitPods("rs", 1)[0], v1.PodSucceeded, 0)
	j := e.waitJob("rs", "Complete", func(j *batch.Job) bool { return hasCondition(j, batch.JobComplete, batch.JobReasonCompletionsReached) })
	if j.Status.Succeeded != 4 || e.podCreates.Load() != 4 {
		t.Errorf("succeeded %d with %d creations, want 4 and 4", j.Status.Succeeded, e.podCreates.Load())
	}
	e.waitNoFinalizers("rs")
}

// Pods the API server rejects (a quota of 0 pods): FailedCreate Events and
// retries with growing back-off, one creation per attempt.
func TestRejectedPodsBackOff(t *testing.T) {
	e := setup(t)
	quota, err := e.client.CoreV1().ResourceQuotas(e.ns).Create(e.ctx, &v1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "none"},
		Spec:       v1.ResourceQuotaSpec{Hard: v1.ResourceList{v1.ResourcePods: resource.MustParse("0")}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// No resourcequota-controller here: publish the quota's status ourselves.
	quota.Status = v1.ResourceQuotaStatus{Hard: quota.Spec.Hard, Used: v1.ResourceList{v1.ResourcePods: resource.MustParse("0")}}
	if _, err := e.client.CoreV1().ResourceQuotas(e.ns).UpdateStatus(e.ctx, quota, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.createJob("quota", 5, 5)
	e.waitEvent("quota", "FailedCreate Error creating: ")
	// Retries after 1s, 2s, 4s: a handful of attempts, not a hot loop.
	framework.Consistently(t, 6*time.Second, "at most 6 creation attempts", func() bool { return e.podCreates.Load() <= 6 })
	if n := e.podCreates.Load(); n < 3 {
		t.Errorf("%d creation attempts in 6s: not retried", n)
	}
	if j := e.getJob("quota"); j.Status.Active != 0 {
		t.Errorf("status %+v", j.Status)
	}
}

// 100,000 completions: one sync creates at most parallelism pods, in
// slow-start batches, and the status stays small.
func TestManyCompletions(t *testing.T) {
	e := setup(t)
	e.createJob("big", 50, 100000, func(j *batch.Job) { j.Spec.CompletionMode = ptr.To(batch.IndexedCompletion) })
	pods := e.waitPods("big", 50)
	ixs := make([]int, 0, len(pods))
	for _, p := range pods {
		ix, _ := strconv.Atoi(p.Annotations[batch.JobCompletionIndexAnnotation])
		ixs = append(ixs, ix)
	}
	slices.Sort(ixs)
	if ixs[0] != 0 || ixs[49] != 49 {
		t.Errorf("indexes %v", ixs)
	}
	for _, p := range pods[:10] {
		e.finish(p, v1.PodSucceeded, 0)
	}
	j := e.waitJob("big", "10 succeeded", func(j *batch.Job) bool { return j.Status.Succeeded == 10 })
	if len(j.Status.CompletedIndexes) > 20 {
		t.Errorf("completedIndexes %q", j.Status.CompletedIndexes)
	}
	e.waitPods("big", 50)
	// Settled at 50 active: no hot loop, no retries, 60 creations in all.
	e.waitQuiet(3 * time.Second)
	j = e.getJob("big")
	if j.Status.Active != 50 || j.Status.Succeeded != 10 || e.podCreates.Load() != 60 {
		t.Errorf("status %+v after %d creations", j.Status, e.podCreates.Load())
	}
}

// 100,000 completions of a NonIndexed Job with parallelism 10: rounds of
// finished pods are counted and replaced, the controller settles between
// rounds and its status does not grow.
func TestManyCompletionsNonIndexed(t *testing.T) {
	e := setup(t)
	e.createJob("many", 10, 100000)
	for round := 1; round <= 3; round++ {
		for _, p := range e.waitPods("many", 10) {
			e.finish(p, v1.PodSucceeded, 0)
		}
		want := int32(10 * round)
		e.waitJob("many", fmt.Sprintf("%d succeeded", want), func(j *batch.Job) bool {
			return j.Status.Succeeded == want && j.Status.Active == 10 && len(j.Status.UncountedTerminatedPods.Succeeded) == 0
		})
	}
	e.waitPods("many", 10)
	e.waitQuiet(3 * time.Second)
	j := e.getJob("many")
	if j.Status.Succeeded != 30 || j.Status.Active != 10 || len(j.Status.Conditions) != 0 || e.podCreates.Load() != 40 {
		t.Errorf("status %+v after %d creations", j.Status, e.podCreates.Load())
	}
	for _, p := range e.pods("many", v1.PodSucceeded) {
		if slices.Contains(p.Finalizers, batch.JobTrackingFinalizer) {
			t.Errorf("counted pod %s keeps the tracking finalizer", p.Name)
		}
	}
}
