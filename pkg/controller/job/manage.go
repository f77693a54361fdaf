package job

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	batch "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/internal/controller/podcontrol"
	"github.com/kcm-dev/kcm/internal/controller/podranking"
)

// manage creates or deletes pods so that the Job runs what it should: none
// while suspended; otherwise parallelism pods, but never more than the
// completions left, one pod per index for Indexed Jobs. A sync either
// deletes or creates, at most MaxPodCreateDeletePerSync pods; creations
// wait for the pod failure back-off. It returns the sync's action.
func (c *Controller) manage(ctx context.Context, st *syncState) (string, error) {
	logger := klog.FromContext(ctx)
	job := st.job
	if isSuspended(job) {
		logger.V(4).Info("Deleting all active pods in suspended job", "job", klog.KObj(job), "active", st.active)
		return actionPodsDeleted, c.deletePods(ctx, st, podsForRemoval(job, st.activePods, len(st.activePods)))
	}
	want := wantActive(st)
	rm := podsForRemoval(job, st.activePods, int(max(st.active-want, 0)))
	if len(rm) > MaxPodCreateDeletePerSync {
		rm = rm[:MaxPodCreateDeletePerSync]
	}
	if len(rm) > 0 {
		// An Indexed Job may need both (a repeated index and a missing
		// one): deletions go first, creations wait for the next sync.
		logger.V(4).Info("Too many pods running for job", "job", klog.KObj(job), "deleted", len(rm), "target", want)
		return actionPodsDeleted, c.deletePods(ctx, st, rm)
	}
	var terminating int32
	if onlyReplaceFailedPods(job) {
		terminating = st.terminating
	}
	diff := want - terminating - st.active
	if diff <= 0 {
		return actionTracking, nil
	}
	if !hasBackoffLimitPerIndex(job) {
		if d := st.newBackoff.remaining(c.clock); d > 0 {
			c.enqueueAfter(logger, st.key, max(d, c.batchPeriod))
			return actionPodsCreated, nil
		}
	}
	diff = min(diff, MaxPodCreateDeletePerSync)
	var indexes []int
	if isIndexed(job) {
		indexes = firstPendingIndexes(st, int(diff), int(*job.Spec.Completions))
		if hasBackoffLimitPerIndex(job) {
			var d time.Duration
			if indexes, d = c.indexesPastBackoff(logger, indexes, st.delayedDeletion); d > 0 {
				c.enqueueAfter(logger, st.key, max(d, c.batchPeriod))
				return actionPodsCreated, nil
			}
		}
		diff = int32(len(indexes))
	}
	logger.V(4).Info("Too few pods running", "key", st.key, "need", want, "creating", diff)
	return actionPodsCreated, c.createPods(ctx, st, int(diff), indexes)
}

// wantActive is how many pods should be active.
func wantActive(st *syncState) int32 {
	parallelism := ptr.Deref(st.job.Spec.Parallelism, 1)
	completions := st.job.Spec.Completions
	if completions == nil {
		// Once a pod succeeded, the pods running finish; none is added.
		if st.succeeded > 0 {
			return st.active
		}
		return parallelism
	}
	return max(min(*completions-st.succeeded, parallelism), 0)
}

// podsForRemoval returns at least n of the active pods to delete: for
// Indexed Jobs first those with no, an out-of-range or a repeated index;
// then those in the earliest stage (sortForRemoval). It may reorder
// active.
func podsForRemoval(job *batch.Job, active []*v1.Pod, n int) []*v1.Pod {
	var rm, left []*v1.Pod
	if isIndexed(job) {
		rm, left = duplicatesForRemoval(active, int(*job.Spec.Completions))
	} else {
		left = active
	}
	if len(rm) < n {
		sortForRemoval(left)
		rm = append(rm, left[:n-len(rm)]...)
	}
	return rm
}

// indexesPastBackoff keeps the indexes whose back-off is over; if there is
// none, it returns the shortest back-off left.
func (c *Controller) indexesPastBackoff(logger klog.Logger, indexes []int, lastFailed map[int]*v1.Pod) ([]int, time.Duration) {
	var ready []int
	var least time.Duration
	for _, ix := range indexes {
		d := indexBackoffRemaining(logger, c.clock, lastFailed[ix])
		switch {
		case d == 0:
			ready = append(ready, ix)
		case least == 0 || d < least:
			least = d
		}
	}
	if len(ready) > 0 {
		return ready, 0
	}
	return nil, least
}

// deletePods removes the tracking finalizer from each pod (it is not
// counted: it did not finish) and deletes it, concurrently, and updates
// the counters with what was deleted. It returns the first error.
func (c *Controller) deletePods(ctx context.Context, st *syncState, pods []*v1.Pod) error {
	logger := klog.FromContext(ctx)
	job := st.job
	keys := make([]string, len(pods))
	for i, p := range pods {
		keys[i] = podKey(p)
	}
	c.expectations.ExpectDeletions(logger, st.key, keys)
	var deleted, deletedReady atomic.Int32
	errs := make([]error, len(pods))
	var wg sync.WaitGroup
	for i, pod := range pods {
		wg.Go(func() {
			err := c.removeAndDelete(ctx, job, pod)
			if err != nil {
				// The informer will not see this deletion.
				c.expectations.DeletionObserved(logger, st.key, podKey(pod))
				if !apierrors.IsNotFound(err) {
					logger.V(2).Info("Failed to delete Pod", "job", klog.KObj(job), "pod", klog.KObj(pod), "err", err)
					utilruntime.HandleErrorWithContext(ctx, err, "Deleting a pod of a Job")
					errs[i] = err
					return
				}
			}
			deleted.Add(1)
			if err == nil && podranking.IsReady(pod) {
				deletedReady.Add(1)
			}
		})
	}
	wg.Wait()
	st.active -= deleted.Load()
	st.terminating += deleted.Load()
	st.ready -= deletedReady.Load()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (c *Controller) removeAndDelete(ctx context.Context, job *batch.Job, pod *v1.Pod) error {
	if patch := removeFinalizerPatch(pod); patch != nil {
		if err := c.podControl.PatchPod(ctx, pod.Namespace, pod.Name, patch); err != nil {
			return fmt.Errorf("removing completion finalizer: %w", err)
		}
	}
	return c.podControl.DeletePod(ctx, job.Namespace, pod.Name, job)
}

// createPods creates n pods (for Indexed Jobs, one per index of indexes)
// in slow-start batches, each with the tracking finalizer, and counts them
// active. Creations that fail or are skipped after a failed batch are not
// expected nor counted.
func (c *Controller) createPods(ctx context.Context, st *syncState, n int, indexes []int) error {
	logger := klog.FromContext(ctx)
	job := st.job
	c.expectations.ExpectCreations(logger, st.key, n)
	st.active += int32(n)

	template := job.Spec.Template.DeepCopy()
	if isIndexed(job) {
		addCompletionIndexEnv(template)
	}
	if !slices.Contains(template.Finalizers, batch.JobTrackingFinalizer) {
		template.Finalizers = append(template.Finalizers, batch.JobTrackingFinalizer)
	}
	ref := metav1.NewControllerRef(job, jobKind)
	var next, failed atomic.Int32
	created, err := podcontrol.SlowStartBatch(n, podcontrol.SlowStartInitialBatchSize, func() error {
		t, generateName := template, ""
		if indexes != nil {
			ix := indexes[next.Add(1)-1]
			t, generateName = indexedTemplate(logger, job, template, ix, st.delayedDeletion[ix])
		}
		err := c.podControl.CreatePodsWithGenerateName(ctx, job.Namespace, t, job, ref, generateName)
		if apierrors.HasStatusCause(err, v1.NamespaceTerminatingCause) {
			// Every creation fails until the namespace is gone.
			return nil
		}
		if err != nil {
			failed.Add(1)
			utilruntime.HandleErrorWithContext(ctx, err, "Creating a pod of a Job", "job", klog.KObj(job))
		}
		return err
	})
	if lost := n - created; lost > 0 {
		logger.V(2).Info("Failed or skipped creations, decrementing expectations", "job", klog.KObj(job), "count", lost)
		c.expectations.LowerExpectations(logger, st.key, lost, 0)
		st.active -= int32(lost)
	}
	observeCreations(job, st, int32(created), failed.Load())
	return err
}
