// Package cronjob tests the cronjob-controller against a real
// kube-apiserver, on a fake clock: each test waits for the controller to
// register its requeue for a scheduled time, then moves the clock there.
// No job controller runs, so the tests finish Jobs themselves, and no
// garbage collector either (Jobs deleted in the background go at once).
package cronjob

import (
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/test/integration/framework"
)

// firstMinute is the first scheduled time of an every-minute CronJob: the
// minute after its creation.
func firstMinute(cj *batchv1.CronJob) time.Time {
	return cj.CreationTimestamp.Truncate(time.Minute).Add(time.Minute)
}

func withPolicy(p batchv1.ConcurrencyPolicy) func(*batchv1.CronJob) {
	return func(cj *batchv1.CronJob) { cj.Spec.ConcurrencyPolicy = p }
}

var created = []string{"SuccessfulCreate"}

func TestAllowRunsJobsConcurrently(t *testing.T) {
	e := setup(t)
	cj := e.createCronJob("allow", "* * * * *")
	t1 := firstMinute(cj)
	t2 := t1.Add(time.Minute)
	j1, j2 := jobName("allow", t1), jobName("allow", t2)

	e.fireAt(t1)
	e.waitJobs(j1)
	got := e.waitActive("allow", j1)
	if !got.Status.LastScheduleTime.Time.Equal(t1) {
		t.Errorf("lastScheduleTime = %v, want %v", got.Status.LastScheduleTime, t1)
	}
	job, err := e.client.BatchV1().Jobs(e.ns).Get(e.ctx, j1, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if job.Labels["app"] != "allow" || job.Annotations["note"] != "kept" ||
		job.Annotations[batchv1.CronJobScheduledTimestampAnnotation] != t1.UTC().Format(time.RFC3339) {
		t.Errorf("labels %v, annotations %v", job.Labels, job.Annotations)
	}
	if ref := metav1.GetControllerOf(job); ref == nil || ref.Kind != "CronJob" || ref.UID != cj.UID || !ptr.Deref(ref.BlockOwnerDeletion, false) {
		t.Errorf("controller reference %+v", ref)
	}
	if a := got.Status.Active[0]; a.Kind != "Job" || a.APIVersion != "batch/v1" || a.UID != job.UID {
		t.Errorf("active reference %+v", a)
	}

	e.fireAt(t2)
	e.waitJobs(j1, j2)
	e.waitActive("allow", j1, j2)
	e.waitEvents("allow", created, "Normal SuccessfulCreate Created job "+j1, "Normal SuccessfulCreate Created job "+j2)
}

// Forbid skips a time while a Job runs; without startingDeadlineSeconds
// the skipped time is started as soon as the Job finishes (as upstream).
func TestForbidWaitsForTheRunningJob(t *testing.T) {
	e := setup(t)
	cj := e.createCronJob("forbid", "* * * * *", withPolicy(batchv1.ForbidConcurrent))
	t1 := firstMinute(cj)
	j1, j2 := jobName("forbid", t1), jobName("forbid", t1.Add(time.Minute))
	busy := "Normal JobAlreadyActive Not starting job because prior execution is running and concurrency policy is Forbid"

	e.fireAt(t1)
	e.waitActive("forbid", j1)
	e.fireAt(t1.Add(time.Minute))
	e.waitEvents("forbid", []string{"JobAlreadyActive"}, busy)
	e.waitJobs(j1)

	done := e.finish(j1, batchv1.JobComplete)
	got := e.waitActive("forbid", j2)
	e.waitEvents("forbid", []string{"SawCompletedJob"}, "Normal SawCompletedJob Saw completed job: "+j1+", condition: Complete")
	if got.Status.LastSuccessfulTime == nil || !got.Status.LastSuccessfulTime.Equal(done.Status.CompletionTime) {
		t.Errorf("lastSuccessfulTime = %v, want %v", got.Status.LastSuccessfulTime, done.Status.CompletionTime)
	}
	e.fireAt(t1.Add(2 * time.Minute))
	e.waitEvents("forbid", []string{"JobAlreadyActive"}, busy, busy)
	e.waitJobs(j1, j2)
}

func TestReplaceDeletesTheRunningJob(t *testing.T) {
	e := setup(t)
	cj := e.createCronJob("replace", "* * * * *", withPolicy(batchv1.ReplaceConcurrent))
	t1 := firstMinute(cj)
	j1, j2 := jobName("replace", t1), jobName("replace", t1.Add(time.Minute))

	e.fireAt(t1)
	e.waitActive("replace", j1)
	e.fireAt(t1.Add(time.Minute))
	e.waitJobs(j2)
	e.waitActive("replace", j2)
	e.waitEvents("replace", []string{"SuccessfulCreate", "SuccessfulDelete"},
		"Normal SuccessfulCreate Created job "+j1, "Normal SuccessfulDelete Deleted job "+j1, "Normal SuccessfulCreate Created job "+j2)
}

func TestHistoryLimits(t *testing.T) {
	e := setup(t)
	cj := e.createCronJob("history", "* * * * *", func(cj *batchv1.CronJob) {
		cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](1)
		cj.Spec.FailedJobsHistoryLimit = ptr.To[int32](1)
	})
	t1 := firstMinute(cj)
	var names []string
	for i, result := range []batchv1.JobConditionType{batchv1.JobComplete, batchv1.JobComplete, batchv1.JobFailed, batchv1.JobFailed} {
		at := t1.Add(time.Duration(i) * time.Minute)
		names = append(names, jobName("history", at))
		e.fireAt(at)
		e.waitActive("history", names[i])
		e.finish(names[i], result)
		e.waitActive("history")
	}
	// One of each kind is kept: the newest.
	e.waitJobs(names[1], names[3])
	e.waitEvents("history", []string{"SuccessfulDelete"},
		"Normal SuccessfulDelete Deleted job "+names[0], "Normal SuccessfulDelete Deleted job "+names[2])
}

// While the controller is down, scheduled times pass; back, it starts
// only the most recent one, and none past startingDeadlineSeconds.
func TestMissedWhileDown(t *testing.T) {
	e := setup(t)
	cj := e.createCronJob("missed", "* * * * *")
	t1 := firstMinute(cj)
	e.fireAt(t1)
	e.waitActive("missed", jobName("missed", t1))

	e.stop()
	e.createCronJob("late", "* * * * *", func(cj *batchv1.CronJob) { cj.Spec.StartingDeadlineSeconds = ptr.To[int64](10) })
	e.start(t1.Add(5*time.Minute + 30*time.Second))
	e.waitJobs(jobName("missed", t1), jobName("missed", t1.Add(5*time.Minute)))
	got := e.waitActive("missed", jobName("missed", t1), jobName("missed", t1.Add(5*time.Minute)))
	if !got.Status.LastScheduleTime.Time.Equal(t1.Add(5 * time.Minute)) {
		t.Errorf("lastScheduleTime = %v", got.Status.LastScheduleTime)
	}
	// The late one waits for its next time.
	e.fireAt(t1.Add(6 * time.Minute))
	e.waitActive("late", jobName("late", t1.Add(6*time.Minute)))
}

func TestTooManyMissed(t *testing.T) {
	e := setup(t)
	cj := e.createCronJob("many", "* * * * *")
	t1 := firstMinute(cj)
	// Wait for the first requeue, then jump 150 minutes.
	e.waitRequeue(t1)
	e.clock.SetTime(t1.Add(150*time.Minute + 30*time.Second))
	last := jobName("many", t1.Add(150*time.Minute))
	e.waitJobs(last)
	e.waitEvents("many", []string{"TooManyMissedTimes", "SuccessfulCreate"},
		"Warning TooManyMissedTimes too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew",
		"Normal SuccessfulCreate Created job "+last)
}

func TestSuspendAndResume(t *testing.T) {
	e := setup(t)
	cj := e.createCronJob("suspended", "* * * * *", func(cj *batchv1.CronJob) { cj.Spec.Suspend = ptr.To(true) })
	t1 := firstMinute(cj)
	e.clock.SetTime(t1.Add(2*time.Minute + 30*time.Second))
	framework.Consistently(t, 2*time.Second, "no Job while suspended", func() bool { return len(e.jobNames()) == 0 })
	if _, err := e.client.BatchV1().CronJobs(e.ns).Patch(e.ctx, "suspended", types.MergePatchType,
		[]byte(`{"spec":{"suspend":false}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitJobs(jobName("suspended", t1.Add(2*time.Minute)))
}

func TestTimeZone(t *testing.T) {
	e := setup(t)
	cj := e.createCronJob("zoned", "0 * * * *", func(cj *batchv1.CronJob) { cj.Spec.TimeZone = ptr.To("Asia/Kolkata") })
	loc, err := time.LoadLocation("Asia/Kolkata")
	if err != nil {
		t.Fatal(err)
	}
	// On the hour in Kolkata (UTC+05:30) is half past in UTC.
	at := cj.CreationTimestamp.Truncate(time.Minute).Add(time.Minute)
	for at.In(loc).Minute() != 0 {
		at = at.Add(time.Minute)
	}
	e.fireAt(at)
	name := jobName("zoned", at)
	e.waitJobs(name)
	job, err := e.client.BatchV1().Jobs(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := at.In(loc).Format(time.RFC3339)
	if got := job.Annotations[batchv1.CronJobScheduledTimestampAnnotation]; got != want || !strings.HasSuffix(got, "+05:30") {
		t.Errorf("scheduled timestamp %q, want %q", got, want)
	}
}

// A Job the API server rejects is retried with the queue's backoff, on the
// controller's clock: no retry until the clock moves, one per step.
func TestRejectedJobRetriedWithBackoff(t *testing.T) {
	e := setup(t)
	unblock := e.blockJobs()
	cj := e.createCronJob("rejected", "* * * * *")
	t1 := firstMinute(cj)
	e.fireAt(t1)
	failed := func(n int) func() (bool, any) {
		return func() (bool, any) {
			got := e.events("rejected", "FailedCreate")
			return len(got) == n && strings.HasPrefix(got[0], `Warning FailedCreate Error creating job: `), got
		}
	}
	e.eventually("one FailedCreate", failed(1))
	framework.Consistently(t, 2*time.Second, "no retry before the clock moves", func() bool { ok, _ := failed(1)(); return ok })
	e.clock.Step(time.Second)
	e.eventually("a second FailedCreate", failed(2))

	unblock()
	e.eventually("the Job, once admitted", func() (bool, any) {
		e.clock.Step(time.Second)
		names := e.jobNames()
		return len(names) == 1 && names[0] == jobName("rejected", t1), names
	})
	e.waitActive("rejected", jobName("rejected", t1))
}

// blockJobs makes the API server reject the creation of Jobs in the
// test's namespace (a ValidatingAdmissionPolicy), and returns the function
// that lifts it.
func (e *env) blockJobs() func() {
	e.t.Helper()
	name := "block-jobs-" + e.ns
	policies := e.client.AdmissionregistrationV1().ValidatingAdmissionPolicies()
	bindings := e.client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings()
	_, err := policies.Create(e.ctx, &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Create},
					Rule:       admissionv1.Rule{APIGroups: []string{"batch"}, APIVersions: []string{"v1"}, Resources: []string{"jobs"}},
				},
			}}},
			Validations: []admissionv1.Validation{{Expression: "false", Message: "jobs are blocked"}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	_, err = bindings.Create(e.ctx, &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": e.ns},
			}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	probe := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "probe"},
		Spec: batchv1.JobSpec{Template: v1.PodTemplateSpec{Spec: v1.PodSpec{
			RestartPolicy: v1.RestartPolicyNever,
			Containers:    []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
		}}},
	}
	e.eventually("the policy in force", func() (bool, any) {
		_, err := e.client.BatchV1().Jobs(e.ns).Create(e.ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil, err
	})
	return func() {
		e.t.Helper()
		if err := bindings.Delete(e.ctx, name, metav1.DeleteOptions{}); err != nil {
			e.t.Fatal(err)
		}
		if err := policies.Delete(e.ctx, name, metav1.DeleteOptions{}); err != nil {
			e.t.Fatal(err)
		}
	}
}
