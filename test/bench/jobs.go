package bench

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
)

// ScenarioJobs is the jobs phase set: one large Indexed Job, then many small
// Jobs, each run to completion (kwok completes a Job's pods as soon as they
// run).
const ScenarioJobs = "jobs"

const (
	indexedJobName      = "indexed"
	smallJobNameFormat  = "small-%03d"
	smallJobLabel       = "bench.kcm.dev/small-job"
	defaultJobNodes     = 10
	defaultJobComplete  = 1000
	defaultJobParallel  = 100
	defaultSmallJobs    = 200
	defaultSmallJobSize = 5
)

func jobsScenario() Scenario {
	static := func(n ...string) func([]string) []string { return func([]string) []string { return n } }
	return Scenario{
		Name:          ScenarioJobs,
		SetupRequires: []string{names.ServiceAccount, names.NodeLifecycle},
		Setup:         setupJobs,
		Phases: []Phase{
			{Name: "indexed", Description: "create an Indexed Job (completions and parallelism from --job-completions, --job-parallelism), wait until it is Complete",
				Requires: static(names.Job), Run: runIndexedJob},
			{Name: "small", Description: "create small Jobs (--small-jobs of --small-job-completions, all at once), wait until every one is Complete",
				Requires: static(names.Job), Run: runSmallJobs},
		},
	}
}

// jobSizes returns the jobs scenario's sizes, defaults for zero fields.
func (p Params) jobSizes() (nodes, completions, parallelism, small, smallSize int) {
	return orDefault(p.JobNodes, defaultJobNodes), orDefault(p.JobCompletions, defaultJobComplete), orDefault(p.JobParallelism, defaultJobParallel),
		orDefault(p.SmallJobs, defaultSmallJobs), orDefault(p.SmallJobCompletions, defaultSmallJobSize)
}

func setupJobs(ctx context.Context, env *Env) error {
	nodes, _, _, _, _ := env.Params.jobSizes()
	return setupNamespaceAndNodes(ctx, env, nodes)
}

func newBenchJob(name, namespace string, completions, parallelism int, indexed bool, lbls map[string]string) *batchv1.Job {
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: lbls},
		Spec: batchv1.JobSpec{
			Completions: ptr.To(int32(completions)),
			Parallelism: ptr.To(int32(parallelism)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: lbls},
				Spec: corev1.PodSpec{
					RestartPolicy:                 corev1.RestartPolicyNever,
					TerminationGracePeriodSeconds: ptr.To[int64](0),
					Containers:                    []corev1.Container{{Name: containerName, Image: imageBefore}},
				},
			},
		},
	}
	if indexed {
		j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	}
	return j
}

func runIndexedJob(ctx context.Context, env *Env) error {
	_, completions, parallelism, _, _ := env.Params.jobSizes()
	jobs, stop, err := env.jobLister(ctx)
	if err != nil {
		return err
	}
	defer stop()
	job := newBenchJob(indexedJobName, env.Namespace, completions, parallelism, true, nil)
	err = env.forEach(ctx, 1, func(ctx context.Context, _ int) error {
		_, err := env.Client.BatchV1().Jobs(env.Namespace).Create(ctx, job, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create job %s: %w", indexedJobName, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	what := fmt.Sprintf("Job %s complete with %d succeeded", indexedJobName, completions)
	return env.waitFor(ctx, what, func() (bool, string) {
		j, err := jobs.Jobs(env.Namespace).Get(indexedJobName)
		if err != nil {
			return false, err.Error()
		}
		return jobComplete(j) && int(j.Status.Succeeded) == completions,
			fmt.Sprintf("%d succeeded, %d active", j.Status.Succeeded, j.Status.Active)
	})
}

func runSmallJobs(ctx context.Context, env *Env) error {
	_, _, _, n, size := env.Params.jobSizes()
	jobs, stop, err := env.jobLister(ctx)
	if err != nil {
		return err
	}
	defer stop()
	lbls := map[string]string{smallJobLabel: "true"}
	err = env.forEach(ctx, n, func(ctx context.Context, i int) error {
		name := fmt.Sprintf(smallJobNameFormat, i)
		_, err := env.Client.BatchV1().Jobs(env.Namespace).Create(ctx, newBenchJob(name, env.Namespace, size, size, false, lbls), metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create job %s: %w", name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	sel := labels.SelectorFromSet(lbls)
	what := fmt.Sprintf("%d Jobs complete with %d succeeded each", n, size)
	return env.waitFor(ctx, what, func() (bool, string) {
		list, _ := jobs.Jobs(env.Namespace).List(sel)
		done := 0
		for _, j := range list {
			if jobComplete(j) && int(j.Status.Succeeded) == size {
				done++
			}
		}
		return done == n, fmt.Sprintf("%d/%d complete", done, n)
	})
}

// jobComplete reports a True Complete condition.
func jobComplete(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// jobLister starts an informer of the bench namespace's Jobs (the load
// generator's own, not audited) and returns its lister once synced.
func (env *Env) jobLister(ctx context.Context) (batchlisters.JobLister, func(), error) {
	ictx, cancel := context.WithCancel(ctx)
	f := informers.NewSharedInformerFactoryWithOptions(env.Client, 0, informers.WithNamespace(env.Namespace))
	inf := f.Batch().V1().Jobs()
	lister := inf.Lister()
	f.Start(ictx.Done())
	stop := func() { cancel(); f.Shutdown() }
	if !cache.WaitForCacheSync(ictx.Done(), inf.Informer().HasSynced) {
		stop()
		return nil, nil, fmt.Errorf("job informer: %w", ctx.Err())
	}
	return lister, stop, nil
}
