package cronjob

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	testclock "k8s.io/utils/clock/testing"

	"github.com/kcm-dev/kcm/pkg/controller/cronjob"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 30 * time.Second

// timerClock is a fake clock that remembers when the timers it handed out
// fire: the controller's queue takes a timer for its next requeue, so a
// test can wait for the requeue to be registered before moving the clock
// to it.
type timerClock struct {
	*testclock.FakeClock
	mu    sync.Mutex
	fires []time.Time
}

func (c *timerClock) NewTimer(d time.Duration) clock.Timer {
	c.mu.Lock()
	c.fires = append(c.fires, c.Now().Add(d))
	c.mu.Unlock()
	return c.FakeClock.NewTimer(d)
}

// timerAt reports whether a timer firing at exactly t was handed out.
// The queue times only its earliest delayed key: t must be the earliest
// requeue pending.
func (c *timerClock) timerAt(t time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.ContainsFunc(c.fires, t.Equal)
}

// env is one test's namespace, with a cronjob-controller on a fake clock.
type env struct {
	t      *testing.T
	ctx    context.Context
	cfg    *rest.Config
	client kubernetes.Interface
	ns     string
	clock  *timerClock
	stop   func()
}

func setup(t *testing.T) *env {
	t.Helper()
	cfg, ns := framework.Setup(t, "cronjob-")
	e := &env{t: t, ctx: ns.Ctx, cfg: cfg, client: ns.Client, ns: ns.Name}
	// Later tests' controllers must not see this test's CronJobs (their
	// requeues would hide the ones a test waits for). Runs after the
	// controller stopped.
	t.Cleanup(func() {
		if err := e.client.BatchV1().CronJobs(e.ns).DeleteCollection(e.ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			t.Errorf("deleting the CronJobs: %v", err)
		}
	})
	e.start(time.Now())
	return e
}

// start runs a cronjob-controller whose clock reads now.
func (e *env) start(now time.Time) {
	e.t.Helper()
	e.clock = &timerClock{FakeClock: testclock.NewFakeClock(now)}
	cc := framework.NewControllerContext(e.t, e.cfg)
	cc.Clock = e.clock
	cc.Config.CronJobController.ConcurrentCronJobSyncs = 2
	e.stop = framework.StartController(e.t, cc, framework.NewController(e.t, cc, names.CronJob, cronjob.New))
}

// waitRequeue waits for the controller to have asked to be woken just
// after t (its requeue: t plus 100ms) and returns that moment.
func (e *env) waitRequeue(t time.Time) time.Time {
	e.t.Helper()
	wake := t.Add(100 * time.Millisecond)
	e.eventually("a requeue for "+wake.String(), func() (bool, any) { return e.clock.timerAt(wake), nil })
	return wake
}

// fireAt waits for the requeue for scheduled time t and moves the clock
// to it.
func (e *env) fireAt(t time.Time) {
	e.t.Helper()
	e.clock.SetTime(e.waitRequeue(t))
}

func (e *env) createCronJob(name, schedule string, opts ...func(*batchv1.CronJob)) *batchv1.CronJob {
	e.t.Helper()
	cj := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.CronJobSpec{
			Schedule: schedule,
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}, Annotations: map[string]string{"note": "kept"}},
				Spec: batchv1.JobSpec{Template: v1.PodTemplateSpec{Spec: v1.PodSpec{
					RestartPolicy: v1.RestartPolicyNever,
					Containers:    []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
				}}},
			},
		},
	}
	for _, o := range opts {
		o(cj)
	}
	return framework.Create(e.t, e.client.BatchV1().CronJobs(e.ns), cj)
}

func (e *env) getCronJob(name string) *batchv1.CronJob {
	e.t.Helper()
	return framework.Get(e.t, e.client.BatchV1().CronJobs(e.ns), name)
}

// jobName is the name of the Job of CronJob name for scheduled time t.
func jobName(name string, t time.Time) string {
	return fmt.Sprintf("%s-%d", name, t.Unix()/60)
}

// jobNames lists the Jobs of the namespace, sorted, those being deleted
// included.
func (e *env) jobNames() []string {
	e.t.Helper()
	list, err := e.client.BatchV1().Jobs(e.ns).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, j := range list.Items {
		out = append(out, j.Name)
	}
	slices.Sort(out)
	return out
}

// waitJobs waits until the namespace holds exactly the named Jobs.
func (e *env) waitJobs(want ...string) {
	e.t.Helper()
	slices.Sort(want)
	e.eventually(fmt.Sprintf("Jobs %v", want), func() (bool, any) {
		got := e.jobNames()
		return slices.Equal(got, want), got
	})
}

// waitActive waits until the CronJob's active list names exactly these
// Jobs, and returns the CronJob.
func (e *env) waitActive(name string, want ...string) *batchv1.CronJob {
	e.t.Helper()
	slices.Sort(want)
	var cj *batchv1.CronJob
	e.eventually(fmt.Sprintf("active %v", want), func() (bool, any) {
		cj = e.getCronJob(name)
		var got []string
		for _, r := range cj.Status.Active {
			got = append(got, r.Name)
		}
		slices.Sort(got)
		return slices.Equal(got, want), got
	})
	return cj
}

// finish sets the status the job controller would set when the Job
// succeeds (Complete) or fails (Failed).
func (e *env) finish(name string, typ batchv1.JobConditionType) *batchv1.Job {
	e.t.Helper()
	job, err := e.client.BatchV1().Jobs(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	now := metav1.Now()
	cond := func(t batchv1.JobConditionType, reason string) batchv1.JobCondition {
		return batchv1.JobCondition{Type: t, Status: v1.ConditionTrue, Reason: reason, LastTransitionTime: now, LastProbeTime: now}
	}
	job.Status = batchv1.JobStatus{StartTime: &now}
	if typ == batchv1.JobComplete {
		job.Status.CompletionTime = &now
		job.Status.Succeeded = 1
		job.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet, "CompletionsReached"), cond(batchv1.JobComplete, "CompletionsReached")}
	} else {
		job.Status.Failed = 1
		job.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailureTarget, "BackoffLimitExceeded"), cond(batchv1.JobFailed, "BackoffLimitExceeded")}
	}
	job, err = e.client.BatchV1().Jobs(e.ns).UpdateStatus(e.ctx, job, metav1.UpdateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return job
}

// events returns "Type Reason Message" of the CronJob's Events with any
// of the reasons, oldest first, each as often as it was counted.
func (e *env) events(name string, reasons ...string) []string {
	e.t.Helper()
	events := e.namespace().Events("CronJob", name)
	slices.SortStableFunc(events, func(a, b v1.Event) int { return a.FirstTimestamp.Compare(b.FirstTimestamp.Time) })
	var out []string
	for _, ev := range events {
		if !slices.Contains(reasons, ev.Reason) {
			continue
		}
		if ev.Source.Component != cronjob.ClientName {
			e.t.Errorf("event source %q", ev.Source.Component)
		}
		for range max(ev.Count, 1) {
			out = append(out, strings.Join([]string{ev.Type, ev.Reason, ev.Message}, " "))
		}
	}
	return out
}

// waitEvents waits until the CronJob's Events with these reasons are
// exactly want, in any order.
func (e *env) waitEvents(name string, reasons []string, want ...string) {
	e.t.Helper()
	want = slices.Sorted(slices.Values(want))
	e.eventually(fmt.Sprintf("Events %q", want), func() (bool, any) {
		got := e.events(name, reasons...)
		slices.Sort(got)
		return slices.Equal(got, want), got
	})
}

// eventually polls cond until it holds, failing the test with what it
// last saw once timeout passed.
func (e *env) eventually(what string, cond func() (bool, any)) {
	e.t.Helper()
	framework.Until(e.t, timeout, what, cond)
}

func (e *env) namespace() framework.Namespace {
	return framework.Namespace{T: e.t, Ctx: e.ctx, Client: e.client, Name: e.ns}
}
