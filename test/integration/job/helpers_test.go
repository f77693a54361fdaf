// Package job tests the job-controller against a real kube-apiserver.
// There is no scheduler, kubelet or garbage collector: tests set pods'
// phases and exit codes by writing their status, and stand in for the
// garbage collector.
package job

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	batch "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controller/job"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 60 * time.Second

// env is one test's view of the cluster.
type env struct {
	t      *testing.T
	ctx    context.Context
	cfg    *rest.Config
	client kubernetes.Interface
	ns     string
	// podCreates counts the controller's pod creation requests; requests
	// all its requests in the test's namespace but watches (the controller
	// also syncs Jobs earlier tests left in theirs).
	podCreates atomic.Int64
	requests   atomic.Int64
	stop       func()
}

// setup creates a namespace and starts the controller through its real
// constructor.
func setup(t *testing.T) *env {
	t.Helper()
	cfg, ns := framework.Setup(t, "job-")
	e := &env{t: t, ctx: ns.Ctx, cfg: cfg, client: ns.Client, ns: ns.Name}
	e.start()
	return e
}

// start runs a new controller (after stop, a restart).
func (e *env) start() {
	e.t.Helper()
	ctrlCfg := framework.Observed(e.cfg, func(r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/namespaces/"+e.ns+"/pods") {
			e.podCreates.Add(1)
		}
		if r.URL.Query().Get("watch") != "true" && strings.Contains(r.URL.Path, "/namespaces/"+e.ns+"/") {
			e.requests.Add(1)
		}
	})
	cc := framework.NewControllerContext(e.t, ctrlCfg)
	cc.Config.JobController.ConcurrentJobSyncs = 5
	e.stop = framework.StartController(e.t, cc, framework.NewController(e.t, cc, names.Job, job.New))
}

func (e *env) createJob(name string, parallelism, completions int32, mutate ...func(*batch.Job)) *batch.Job {
	e.t.Helper()
	j := &batch.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec: batch.JobSpec{
			Parallelism: ptr.To(parallelism),
			Completions: ptr.To(completions),
			Template: v1.PodTemplateSpec{
				Spec: v1.PodSpec{
					RestartPolicy: v1.RestartPolicyNever,
					Containers:    []v1.Container{{Name: "c", Image: "registry.example/work:1"}},
				},
			},
		},
	}
	for _, m := range mutate {
		m(j)
	}
	return framework.Create(e.t, e.client.BatchV1().Jobs(e.ns), j)
}

func (e *env) getJob(name string) *batch.Job {
	e.t.Helper()
	return framework.Get(e.t, e.client.BatchV1().Jobs(e.ns), name)
}

// waitJob waits until cond holds for the Job.
func (e *env) waitJob(name, what string, cond func(*batch.Job) bool) *batch.Job {
	e.t.Helper()
	return framework.WaitFor(e.t, timeout, e.client.BatchV1().Jobs(e.ns), name, what, cond)
}

func hasCondition(j *batch.Job, t batch.JobConditionType, reason string) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == t && c.Status == v1.ConditionTrue && c.Reason == reason {
			return true
		}
	}
	return false
}

func conditionTypes(j *batch.Job) []string {
	var out []string
	for _, c := range j.Status.Conditions {
		out = append(out, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
	}
	return out
}

// pods returns the Job's pods (by its job-name label), optionally only
// those in phase.
func (e *env) pods(jobName string, phase v1.PodPhase) []v1.Pod {
	e.t.Helper()
	opts := metav1.ListOptions{LabelSelector: batch.JobNameLabel + "=" + jobName}
	if phase != "" {
		opts.FieldSelector = fields.OneTermEqualSelector("status.phase", string(phase)).String()
	}
	list, err := e.client.CoreV1().Pods(e.ns).List(e.ctx, opts)
	if err != nil {
		e.t.Fatal(err)
	}
	return list.Items
}

// waitPods waits until exactly n of the Job's pods are Pending and not
// being deleted, and returns them.
func (e *env) waitPods(jobName string, n int) []v1.Pod {
	e.t.Helper()
	var live []v1.Pod
	framework.Eventually(e.t, timeout, func() (bool, error) {
		live = nil
		for _, p := range e.pods(jobName, v1.PodPending) {
			if p.DeletionTimestamp == nil {
				live = append(live, p)
			}
		}
		return len(live) == n, nil
	})
	return live
}

// finish sets the pod's phase as a kubelet would, its container
// terminated with code.
func (e *env) finish(p v1.Pod, phase v1.PodPhase, code int32, conditions ...v1.PodCondition) {
	e.t.Helper()
	now := metav1.Now()
	p.Status.Phase = phase
	p.Status.Conditions = append(conditions, v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse, LastTransitionTime: now})
	p.Status.ContainerStatuses = []v1.ContainerStatus{{
		Name: "c", Image: "registry.example/work:1",
		State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code, StartedAt: now, FinishedAt: now}},
	}}
	if _, err := e.client.CoreV1().Pods(e.ns).UpdateStatus(e.ctx, &p, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// waitQuiet waits until the controller has made no request (watches
// aside) for quietFor, then checks that it makes none for as long again: a
// controller that hot-loops or keeps retrying never gets there.
func (e *env) waitQuiet(quietFor time.Duration) {
	e.t.Helper()
	last := framework.WaitQuiet(e.t, timeout, quietFor, e.requests.Load)
	framework.Consistently(e.t, quietFor, "no controller request", func() bool { return e.requests.Load() == last })
}

// waitNoFinalizers waits until none of the Job's pods holds the tracking
// finalizer.
func (e *env) waitNoFinalizers(jobName string) {
	e.t.Helper()
	framework.Eventually(e.t, timeout, func() (bool, error) {
		for _, p := range e.pods(jobName, "") {
			if slices.Contains(p.Finalizers, batch.JobTrackingFinalizer) {
				return false, nil
			}
		}
		return true, nil
	})
}

// events returns "reason message" of the Events recorded on the Job.
func (e *env) events(jobName string) []string {
	e.t.Helper()
	var out []string
	for _, ev := range e.namespace().Events("Job", jobName) {
		for range ev.Count {
			out = append(out, ev.Reason+" "+ev.Message)
		}
	}
	return out
}

func (e *env) waitEvent(jobName, want string) {
	e.t.Helper()
	framework.Eventually(e.t, timeout, func() (bool, error) {
		return slices.ContainsFunc(e.events(jobName), func(s string) bool { return strings.HasPrefix(s, want) }), nil
	})
}

func (e *env) namespace() framework.Namespace {
	return framework.Namespace{T: e.t, Ctx: e.ctx, Client: e.client, Name: e.ns}
}
