package job

import (
	"fmt"
	"testing"
	"time"

	batch "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/internal/controller/podcontrol"
)

var (
	t0        = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	jobLabels = map[string]string{"batch.kubernetes.io/job-name": "pi", "batch.kubernetes.io/controller-uid": "job-uid"}
)

type jobOpt func(*batch.Job)

// newJob is a Job as the API server defaults it: NonIndexed, parallelism
// and completions as given, backoffLimit 6, the generated selector.
func newJob(parallelism, completions int32, opts ...jobOpt) *batch.Job {
	j := &batch.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pi", UID: "job-uid", Generation: 1, ResourceVersion: "10"},
		Spec: batch.JobSpec{
			Parallelism:    ptr.To(parallelism),
			Completions:    ptr.To(completions),
			BackoffLimit:   ptr.To[int32](6),
			CompletionMode: ptr.To(batch.NonIndexedCompletion),
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"batch.kubernetes.io/controller-uid": "job-uid"}},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: jobLabels},
				Spec: v1.PodSpec{
					RestartPolicy: v1.RestartPolicyNever,
					Containers:    []v1.Container{{Name: "c", Image: "i"}},
				},
			},
		},
	}
	for _, o := range opts {
		o(j)
	}
	return j
}

func indexed(j *batch.Job)   { j.Spec.CompletionMode = ptr.To(batch.IndexedCompletion) }
func suspended(j *batch.Job) { j.Spec.Suspend = ptr.To(true) }
func backoffLimit(n int32) jobOpt {
	return func(j *batch.Job) { j.Spec.BackoffLimit = ptr.To(n) }
}
func perIndex(limit int32, maxFailed *int32) jobOpt {
	return func(j *batch.Job) {
		indexed(j)
		j.Spec.BackoffLimitPerIndex = ptr.To(limit)
		j.Spec.MaxFailedIndexes = maxFailed
		j.Spec.BackoffLimit = ptr.To[int32](2147483647)
	}
}
func failurePolicy(rules ...batch.PodFailurePolicyRule) jobOpt {
	return func(j *batch.Job) { j.Spec.PodFailurePolicy = &batch.PodFailurePolicy{Rules: rules} }
}
func jobStatus(s batch.JobStatus) jobOpt { return func(j *batch.Job) { j.Status = s } }
func started(j *batch.Job)               { j.Status.StartTime = ptr.To(metav1.NewTime(t0.Add(-time.Minute))) }

type podOpt func(*v1.Pod)

// newPod is a pod of job, with the tracking finalizer, Pending.
func newPod(job *batch.Job, name string, opts ...podOpt) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: "ns", Name: name, UID: types.UID(name + "-uid"), ResourceVersion: "1",
		Labels:            map[string]string{"batch.kubernetes.io/job-name": "pi", "batch.kubernetes.io/controller-uid": "job-uid"},
		Finalizers:        []string{batch.JobTrackingFinalizer},
		CreationTimestamp: metav1.NewTime(t0.Add(-time.Hour)),
		OwnerReferences:   []metav1.OwnerReference{*metav1.NewControllerRef(job, jobKind)},
	}, Status: v1.PodStatus{Phase: v1.PodPending}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func podPhase(ph v1.PodPhase) podOpt { return func(p *v1.Pod) { p.Status.Phase = ph } }
func atIndex(ix int) podOpt {
	return func(p *v1.Pod) {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[batch.JobCompletionIndexAnnotation] = fmt.Sprint(ix)
	}
}
func withAnnotation(k, v string) podOpt {
	return func(p *v1.Pod) {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[k] = v
	}
}
func noFinalizer(p *v1.Pod) { p.Finalizers = nil }
func readyPod(p *v1.Pod) {
	p.Status.Phase = v1.PodRunning
	p.Spec.NodeName = "node"
	p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue})
}
func exitCode(code int32) podOpt {
	return func(p *v1.Pod) {
		p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
			ExitCode: code, FinishedAt: metav1.NewTime(t0.Add(-time.Second)),
		}}}}
	}
}
func podCondition(t v1.PodConditionType) podOpt {
	return func(p *v1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: t, Status: v1.ConditionTrue})
	}
}
func deleting(p *v1.Pod) { p.DeletionTimestamp = ptr.To(metav1.NewTime(t0)) }

// fixture is a controller whose caches and fake clientset hold the same
// objects, with a fake pod control, recorder and clock.
type fixture struct {
	t        *testing.T
	c        *Controller
	client   *fake.Clientset
	pods     *podcontrol.Fake
	recorder *record.FakeRecorder
	clock    *testingclock.FakeClock
	factory  informers.SharedInformerFactory
}

func newFixture(t *testing.T, objs ...runtime.Object) *fixture {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	clk := testingclock.NewFakeClock(t0)
	pc := &podcontrol.Fake{}
	rec := record.NewFakeRecorder(100)
	c, err := NewController(ctx, Config{
		Name: "job-controller", Client: client, Jobs: factory.Batch().V1().Jobs(), Pods: factory.Core().V1().Pods(),
		Clock: clk, Workers: 1, ResetStartTimeOnSuspend: true, PodControl: pc, Recorder: rec,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.queue.ShutDown)
	t.Cleanup(c.orphans.ShutDown)
	f := &fixture{t: t, c: c, client: client, pods: pc, recorder: rec, clock: clk, factory: factory}
	for _, o := range objs {
		f.cache(o)
	}
	client.ClearActions()
	return f
}

// cache puts an object into the informer caches.
func (f *fixture) cache(o runtime.Object) {
	f.t.Helper()
	var err error
	switch o := o.(type) {
	case *batch.Job:
		err = f.factory.Batch().V1().Jobs().Informer().GetIndexer().Update(o)
	case *v1.Pod:
		err = f.factory.Core().V1().Pods().Informer().GetIndexer().Update(o)
	}
	if err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) sync() error {
	f.t.Helper()
	_, ctx := ktesting.NewTestContext(f.t)
	return f.c.sync(ctx, "ns/pi")
}

func (f *fixture) mustSync() {
	f.t.Helper()
	if err := f.sync(); err != nil {
		f.t.Fatal(err)
	}
}

// statusUpdates returns the Jobs written by UpdateStatus, in order.
func (f *fixture) statusUpdates() []*batch.Job {
	var out []*batch.Job
	for _, a := range f.client.Actions() {
		if u, ok := a.(clienttesting.UpdateAction); ok && a.GetSubresource() == "status" {
			out = append(out, u.GetObject().(*batch.Job))
		}
	}
	return out
}

// lastStatus returns the last status written; it fails the test if none was.
func (f *fixture) lastStatus() batch.JobStatus {
	f.t.Helper()
	u := f.statusUpdates()
	if len(u) == 0 {
		f.t.Fatal("no status written")
	}
	return u[len(u)-1].Status
}

// events drains the recorded Events.
func (f *fixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// conditionTypes lists the types and statuses of conditions, in order.
func conditionTypes(s batch.JobStatus) []string {
	var out []string
	for _, c := range s.Conditions {
		out = append(out, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
	}
	return out
}

func klogFor(t *testing.T) klog.Logger {
	logger, _ := ktesting.NewTestContext(t)
	return logger
}
