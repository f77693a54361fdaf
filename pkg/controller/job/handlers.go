package job

import (
	"fmt"
	"reflect"
	"time"

	batch "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller/controllerref"
)

// Handlers only resolve Jobs and enqueue keys (Job keys, or orphan keys
// for pods that may keep a tracking finalizer nobody else removes); they
// also feed the expectations, which exist to count what the informers
// observe. None lists pods.

func jobKey(job metav1.Object) string { return job.GetNamespace() + "/" + job.GetName() }

func podKey(pod *v1.Pod) string { return pod.Namespace + "/" + pod.Name }

// enqueueNow syncs the Job at once: its creation, deletion or a change of
// its spec.
func (c *Controller) enqueueNow(logger klog.Logger, job metav1.Object) {
	c.enqueueAfter(logger, jobKey(job), 0)
}

// enqueueBatched syncs the Job after the batch period: pod events and
// status changes come in bursts.
func (c *Controller) enqueueBatched(logger klog.Logger, job metav1.Object) {
	c.enqueueAfter(logger, jobKey(job), c.batchPeriod)
}

func (c *Controller) enqueueAfter(logger klog.Logger, key string, d time.Duration) {
	logger.V(2).Info("enqueueing job", "key", key, "delay", d)
	c.queue.AddAfter(key, d)
}

// managedByOther returns the controller named in spec.managedBy when it is
// not this one, else "".
func managedByOther(job *batch.Job) string {
	if m := job.Spec.ManagedBy; m != nil && *m != batch.JobControllerName {
		return *m
	}
	return ""
}

func (c *Controller) addJob(logger klog.Logger, obj any) {
	job, ok := obj.(*batch.Job)
	if !ok {
		return
	}
	c.enqueueNow(logger, job)
	if m := managedByOther(job); m != "" {
		jobsByExternalController.WithLabelValues(m).Inc()
	}
}

func (c *Controller) updateJob(logger klog.Logger, oldObj, newObj any) {
	oldJob, ok1 := oldObj.(*batch.Job)
	cur, ok2 := newObj.(*batch.Job)
	if !ok1 || !ok2 {
		return
	}
	if oldJob.UID != cur.UID {
		// Deleted and recreated under the same name, seen as an update.
		c.deleteJob(logger, cache.DeletedFinalStateUnknown{Key: jobKey(oldJob), Obj: oldJob})
	}
	if isFinished(cur) {
		// Finishing removed every tracking finalizer; a pod matching the
		// Job that still holds one (created or adopted meanwhile) loses it
		// now. Later updates of the finished Job change nothing.
		if !isFinished(oldJob) || oldJob.UID != cur.UID {
			c.enqueueSelector(logger, cur)
		}
		return
	}
	if cur.Generation == oldJob.Generation {
		c.enqueueBatched(logger, cur)
	} else {
		c.enqueueNow(logger, cur)
	}
	// A new activeDeadlineSeconds: sync when it passes.
	ads := cur.Spec.ActiveDeadlineSeconds
	if cur.Status.StartTime == nil || ads == nil {
		return
	}
	if old := oldJob.Spec.ActiveDeadlineSeconds; old == nil || *old != *ads {
		left := time.Duration(*ads)*time.Second - c.clock.Since(cur.Status.StartTime.Time)
		logger.V(4).Info("job's ActiveDeadlineSeconds updated, will rsync", "key", jobKey(cur), "interval", left)
		c.queue.AddAfter(jobKey(cur), left)
	}
}

// deleteJob syncs the deleted Job (which forgets it) and frees the pods
// still holding its tracking finalizer.
func (c *Controller) deleteJob(logger klog.Logger, obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	job, ok := obj.(*batch.Job)
	if !ok {
		utilruntime.HandleErrorWithLogger(logger, nil, "Unexpected object in Job delete event", "type", fmt.Sprintf("%T", obj))
		return
	}
	key := jobKey(job)
	c.consistency.Clear(types.NamespacedName{Namespace: job.Namespace, Name: job.Name}, job.UID)
	c.finishing.Delete(job.UID)
	// A new Job of the same name must start clean.
	c.expectations.DeleteExpectations(logger, key)
	c.finalizers.forget(key)
	c.backoff.remove(key)
	c.enqueueSelector(logger, job)
	c.enqueueNow(logger, job)
}

// resolveControllerRef returns the cached Job ref points to, if it is a
// Job and still the same object.
func (c *Controller) resolveControllerRef(namespace string, ref *metav1.OwnerReference) *batch.Job {
	return controllerref.Resolve(ref, jobKind.Kind, c.jobs.Jobs(namespace).Get)
}

// jobsForPod returns the Jobs whose selector matches an orphan pod.
func (c *Controller) jobsForPod(pod *v1.Pod) []*batch.Job {
	jobs, err := c.jobs.GetPodJobs(pod)
	if err != nil {
		return nil
	}
	if len(jobs) > 1 {
		utilruntime.HandleError(fmt.Errorf("user error! more than one job is selecting pods with labels: %+v", pod.Labels))
	}
	out := make([]*batch.Job, len(jobs))
	for i := range jobs {
		out[i] = &jobs[i]
	}
	return out
}

// ownerOf resolves the Job controlling pod. A pod with the tracking
// finalizer whose Job is unknown or finished is queued for the orphan
// worker, which decides once the caches are synced. It returns nil for
// those, and for pods another kind controls.
func (c *Controller) ownerOf(pod *v1.Pod, ref *metav1.OwnerReference) *batch.Job {
	job := c.resolveControllerRef(pod.Namespace, ref)
	if job == nil || isFinished(job) {
		if ref.Kind == jobKind.Kind && hasTrackingFinalizer(pod) {
			c.enqueueOrphanPod(pod, false)
		}
		return nil
	}
	return job
}

// addPod counts an expected creation and wakes the pod's Job or, for an
// orphan, every Job that might adopt it.
func (c *Controller) addPod(logger klog.Logger, obj any) {
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	observeTrackingFinalizer(nil, pod)
	if pod.DeletionTimestamp != nil {
		// Seen for the first time already being deleted (e.g. after a
		// restart): not a creation anybody waits for.
		c.deletePod(logger, pod, false)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		job := c.ownerOf(pod, ref)
		if job == nil {
			return
		}
		c.expectations.CreationObserved(logger, jobKey(job))
		c.enqueueBatched(logger, job)
		return
	}
	if hasTrackingFinalizer(pod) {
		c.enqueueOrphanPod(pod, false)
	}
	// Not a creation: no Job waits for an orphan.
	for _, job := range c.jobsForPod(pod) {
		c.enqueueBatched(logger, job)
	}
}

// updatePod wakes the Jobs a pod change concerns and records observed
// finalizer removals.
func (c *Controller) updatePod(logger klog.Logger, oldObj, newObj any) {
	oldPod, ok1 := oldObj.(*v1.Pod)
	cur, ok2 := newObj.(*v1.Pod)
	if !ok1 || !ok2 {
		return
	}
	observeTrackingFinalizer(oldPod, cur)
	if cur.ResourceVersion == oldPod.ResourceVersion {
		return // a resync
	}
	if cur.DeletionTimestamp != nil {
		// Being deleted: the Job need not wait for it to be gone to
		// replace it.
		c.deletePod(logger, cur, false)
		return
	}
	// Only the current state counts: during an ownership transfer the
	// finalizer may be added and removed again between two events.
	removed := !hasTrackingFinalizer(cur)
	curRef := metav1.GetControllerOfNoCopy(cur)
	oldRef := metav1.GetControllerOfNoCopy(oldPod)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		if job := c.resolveControllerRef(oldPod.Namespace, oldRef); job != nil {
			if removed {
				c.finalizers.observed(logger, jobKey(job), cur.UID)
			}
			c.enqueueBatched(logger, job)
		}
	}
	if curRef != nil {
		job := c.ownerOf(cur, curRef)
		if job == nil {
			return
		}
		if removed {
			c.finalizers.observed(logger, jobKey(job), cur.UID)
		}
		c.enqueueBatched(logger, job)
		return
	}
	if hasTrackingFinalizer(cur) {
		c.enqueueOrphanPod(cur, false)
	}
	if refChanged || !reflect.DeepEqual(cur.Labels, oldPod.Labels) {
		for _, job := range c.jobsForPod(cur) {
			c.enqueueBatched(logger, job)
		}
	}
}

// deletePod counts an expected deletion and wakes the pod's Job. final is
// false when the pod only started terminating. obj may be a tombstone.
func (c *Controller) deletePod(logger klog.Logger, obj any, final bool) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	pod, ok := obj.(*v1.Pod)
	if !ok {
		utilruntime.HandleErrorWithLogger(logger, nil, "Unexpected object in Pod delete event", "type", fmt.Sprintf("%T", obj))
		return
	}
	if final {
		observeTrackingFinalizer(pod, nil)
	}
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		// The garbage collector may have orphaned it.
		if hasTrackingFinalizer(pod) {
			c.enqueueOrphanPod(pod, false)
		}
		return
	}
	job := c.ownerOf(pod, ref)
	if job == nil {
		return
	}
	key := jobKey(job)
	c.expectations.DeletionObserved(logger, key, podKey(pod))
	if final || !hasTrackingFinalizer(pod) {
		c.finalizers.observed(logger, key, pod.UID)
	}
	c.enqueueBatched(logger, job)
}
