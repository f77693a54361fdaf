// Package ttlafterfinished tests the ttl-after-finished-controller against a
// real kube-apiserver. No job controller runs there, so the tests set a
// Job's status themselves; no garbage collector runs either, so a Job
// deleted with foreground propagation keeps its foregroundDeletion
// finalizer until the test removes it.
package ttlafterfinished

import (
	"context"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controller/ttlafterfinished"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 30 * time.Second

func setup(t *testing.T) (kubernetes.Interface, string) {
	t.Helper()
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	cc := framework.NewControllerContext(t, cfg)
	cc.Config.TTLAfterFinishedController.ConcurrentTTLSyncs = 2
	c, err := ttlafterfinished.New(context.Background(), cc, names.TTLAfterFinished)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if c.Name() != names.TTLAfterFinished {
		t.Errorf("Name() = %q", c.Name())
	}
	framework.StartController(t, cc, c)
	ns, err := client.CoreV1().Namespaces().Create(context.Background(),
		&v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "ttlaf-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return client, ns.Name
}

func createJob(t *testing.T, client kubernetes.Interface, ns, name string, ttl *int32) *batchv1.Job {
	t.Helper()
	job, err := client.BatchV1().Jobs(ns).Create(context.Background(), &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{
			TTLSecondsAfterFinished: ttl,
			Template: v1.PodTemplateSpec{Spec: v1.PodSpec{
				RestartPolicy: v1.RestartPolicyNever,
				Containers:    []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
			}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return job
}

// complete sets the status the job controller would set on success.
func complete(t *testing.T, client kubernetes.Interface, job *batchv1.Job) {
	t.Helper()
	now := metav1.Now()
	job.Status = batchv1.JobStatus{
		StartTime:      &now,
		CompletionTime: &now,
		Succeeded:      1,
		Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: v1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now},
			{Type: batchv1.JobComplete, Status: v1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now},
		},
	}
	if _, err := client.BatchV1().Jobs(job.Namespace).UpdateStatus(context.Background(), job, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestFinishedJobDeletedAfterTTL(t *testing.T) {
	client, ns := setup(t)
	ctx := context.Background()
	job := createJob(t, client, ns, "short", ptr.To[int32](1))
	keep := createJob(t, client, ns, "no-ttl", nil)
	complete(t, client, keep)
	complete(t, client, job)

	var deleting *batchv1.Job
	framework.Eventually(t, timeout, func() (bool, error) {
		j, err := client.BatchV1().Jobs(ns).Get(ctx, job.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		deleting = j
		return j.DeletionTimestamp != nil, nil
	})
	if !slices.Contains(deleting.Finalizers, metav1.FinalizerDeleteDependents) {
		t.Errorf("finalizers = %v, want foreground deletion", deleting.Finalizers)
	}
	// Play the garbage collector: the Job has no dependents.
	if _, err := client.BatchV1().Jobs(ns).Patch(ctx, job.Name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, timeout, func() (bool, error) {
		_, err := client.BatchV1().Jobs(ns).Get(ctx, job.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	j, err := client.BatchV1().Jobs(ns).Get(ctx, keep.Name, metav1.GetOptions{})
	if err != nil || j.DeletionTimestamp != nil {
		t.Errorf("job without a TTL: %v, deletionTimestamp %v", err, j.DeletionTimestamp)
	}
}

func TestUnfinishedJobKept(t *testing.T) {
	client, ns := setup(t)
	ctx := context.Background()
	job := createJob(t, client, ns, "running", ptr.To[int32](0))
	// A finished Job with TTL 0 created afterwards is deleted at once; by
	// then the unfinished one has been seen too.
	done := createJob(t, client, ns, "done", ptr.To[int32](0))
	complete(t, client, done)
	framework.Eventually(t, timeout, func() (bool, error) {
		j, err := client.BatchV1().Jobs(ns).Get(ctx, done.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return err == nil && j.DeletionTimestamp != nil, err
	})
	j, err := client.BatchV1().Jobs(ns).Get(ctx, job.Name, metav1.GetOptions{})
	if err != nil || j.DeletionTimestamp != nil {
		t.Errorf("unfinished job: %v, deletionTimestamp %v", err, j.DeletionTimestamp)
	}
}
