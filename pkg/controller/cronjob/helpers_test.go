package cronjob

import (
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2/ktesting"
	testclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

type cronOpt func(*batchv1.CronJob)

// newCronJob returns CronJob ns/cj with the schedule, created at created,
// whose Job template carries a label and an annotation.
func newCronJob(schedule string, created time.Time, opts ...cronOpt) *batchv1.CronJob {
	cj := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cj", UID: "cj-uid", CreationTimestamp: metav1.NewTime(created)},
		Spec: batchv1.CronJobSpec{
			Schedule:          schedule,
			ConcurrencyPolicy: batchv1.AllowConcurrent,
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"x": "y"}},
				Spec: batchv1.JobSpec{Template: v1.PodTemplateSpec{Spec: v1.PodSpec{
					RestartPolicy: v1.RestartPolicyNever,
					Containers:    []v1.Container{{Name: "c", Image: "img"}},
				}}},
			},
		},
	}
	for _, o := range opts {
		o(cj)
	}
	return cj
}

func lastScheduled(t time.Time) cronOpt {
	return func(cj *batchv1.CronJob) { cj.Status.LastScheduleTime = mtime(t) }
}
func deadline(s int64) cronOpt {
	return func(cj *batchv1.CronJob) { cj.Spec.StartingDeadlineSeconds = &s }
}
func zone(z string) cronOpt { return func(cj *batchv1.CronJob) { cj.Spec.TimeZone = &z } }
func policy(p batchv1.ConcurrencyPolicy) cronOpt {
	return func(cj *batchv1.CronJob) { cj.Spec.ConcurrencyPolicy = p }
}
func suspended(cj *batchv1.CronJob) { cj.Spec.Suspend = ptr.To(true) }
func history(succeeded, failed int32) cronOpt {
	return func(cj *batchv1.CronJob) {
		cj.Spec.SuccessfulJobsHistoryLimit = &succeeded
		cj.Spec.FailedJobsHistoryLimit = &failed
	}
}

// active lists the Jobs in the CronJob's status.
func active(jobs ...*batchv1.Job) cronOpt {
	return func(cj *batchv1.CronJob) {
		for _, j := range jobs {
			cj.Status.Active = append(cj.Status.Active, v1.ObjectReference{
				Kind: "Job", APIVersion: "batch/v1", Namespace: j.Namespace, Name: j.Name, UID: j.UID,
			})
		}
	}
}

type jobOpt func(*batchv1.Job)

// newJobAt returns the Job cj would have created for the scheduled time.
func newJobAt(t *testing.T, cj *batchv1.CronJob, scheduled time.Time, opts ...jobOpt) *batchv1.Job {
	t.Helper()
	j, err := newJob(cj, scheduled)
	if err != nil {
		t.Fatal(err)
	}
	j.Namespace = cj.Namespace
	j.UID = types.UID("uid-" + j.Name)
	j.ResourceVersion = "1"
	for _, o := range opts {
		o(j)
	}
	return j
}

func started(at time.Time) jobOpt {
	return func(j *batchv1.Job) { j.Status.StartTime = mtime(at) }
}

func finished(typ batchv1.JobConditionType, at time.Time) jobOpt {
	return func(j *batchv1.Job) {
		j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: typ, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(at)})
		if typ == batchv1.JobComplete {
			j.Status.CompletionTime = mtime(at)
		}
	}
}

// fixture is a controller over a fake clientset whose informers hold the
// given objects, on a fake clock.
type fixture struct {
	c       *Controller
	client  *fake.Clientset
	factory informers.SharedInformerFactory
	clock   *testclock.FakeClock
	rec     *record.FakeRecorder
	queue   *recordingQueue
}

func newFixture(t *testing.T, now time.Time, objs ...runtime.Object) *fixture {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	clk := testclock.NewFakeClock(now)
	rec := record.NewFakeRecorder(100)
	c, err := newController(ctx, "cronjob-controller", client, clk, rec,
		factory.Batch().V1().Jobs(), factory.Batch().V1().CronJobs(), 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.queue.ShutDown)
	q := &recordingQueue{TypedRateLimitingInterface: c.queue}
	c.queue = q
	f := &fixture{c: c, client: client, factory: factory, clock: clk, rec: rec, queue: q}
	f.cache(t, objs...)
	return f
}

// cache adds objects to the informers' caches only.
func (f *fixture) cache(t *testing.T, objs ...runtime.Object) {
	t.Helper()
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *batchv1.CronJob:
			err = f.factory.Batch().V1().CronJobs().Informer().GetIndexer().Add(o)
		case *batchv1.Job:
			err = f.factory.Batch().V1().Jobs().Informer().GetIndexer().Add(o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// sync runs one sync of ns/cj and returns its Events and error.
func (f *fixture) sync(t *testing.T) ([]string, error) {
	t.Helper()
	err := f.c.sync(t.Context(), "ns/cj")
	return drain(f.rec), err
}

// verbs lists the fake client's requests as "verb resource[/subresource]".
func (f *fixture) verbs() []string {
	var out []string
	for _, a := range f.client.Actions() {
		s := a.GetVerb() + " " + a.GetResource().Resource
		if sub := a.GetSubresource(); sub != "" {
			s += "/" + sub
		}
		out = append(out, s)
	}
	return out
}

// created returns the Jobs the controller created.
func (f *fixture) created() []*batchv1.Job {
	var out []*batchv1.Job
	for _, a := range f.client.Actions() {
		if c, ok := a.(clienttesting.CreateAction); ok && a.GetResource().Resource == "jobs" {
			out = append(out, c.GetObject().(*batchv1.Job))
		}
	}
	return out
}

// deleted returns the names of the Jobs the controller deleted.
func (f *fixture) deleted() []string {
	var out []string
	for _, a := range f.client.Actions() {
		if d, ok := a.(clienttesting.DeleteAction); ok && a.GetResource().Resource == "jobs" {
			out = append(out, d.GetName())
		}
	}
	return out
}

// status returns the last status the controller wrote, nil if none.
func (f *fixture) status() *batchv1.CronJobStatus {
	var out *batchv1.CronJobStatus
	for _, a := range f.client.Actions() {
		if u, ok := a.(clienttesting.UpdateAction); ok && a.GetSubresource() == "status" {
			out = &u.GetObject().(*batchv1.CronJob).Status
		}
	}
	return out
}

// drain returns the Events recorded so far.
func drain(rec *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// recordingQueue records the delays keys are added with.
type recordingQueue struct {
	workqueue.TypedRateLimitingInterface[string]
	mu     sync.Mutex
	delays []time.Duration
}

func (q *recordingQueue) AddAfter(key string, d time.Duration) {
	q.mu.Lock()
	q.delays = append(q.delays, d)
	q.mu.Unlock()
	q.TypedRateLimitingInterface.AddAfter(key, d)
}

// requeued returns the delays recorded since the last call.
func (q *recordingQueue) requeued() []time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.delays
	q.delays = nil
	return out
}
