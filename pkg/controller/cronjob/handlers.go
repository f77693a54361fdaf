package cronjob

import (
	"reflect"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// Handlers resolve the CronJob a Job belongs to and enqueue it; a change
// of a CronJob's schedule or time zone enqueues it for its next time.

func (c *Controller) enqueue(logger klog.Logger, obj any) {
	c.enqueueAfter(logger, obj, 0)
}

func (c *Controller) enqueueAfter(logger klog.Logger, obj any, d time.Duration) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleErrorWithLogger(logger, err, "Couldn't get key for object", "object", obj)
		return
	}
	if d <= 0 {
		c.queue.Add(key)
		return
	}
	c.queue.AddAfter(key, d)
}

// owner returns the cached CronJob a controller reference points to, nil
// if it is not a CronJob's or that CronJob is gone (or another by now).
func (c *Controller) owner(namespace string, ref *metav1.OwnerReference) *batchv1.CronJob {
	if ref == nil || ref.Kind != cronJobKind.Kind {
		return nil
	}
	cj, err := c.cronJobLister.CronJobs(namespace).Get(ref.Name)
	if err != nil || cj.UID != ref.UID {
		return nil
	}
	return cj
}

func (c *Controller) enqueueOwner(logger klog.Logger, job *batchv1.Job) {
	if cj := c.owner(job.Namespace, metav1.GetControllerOfNoCopy(job)); cj != nil {
		c.enqueue(logger, cj)
	}
}

func (c *Controller) addJob(logger klog.Logger, obj any) {
	if job, ok := obj.(*batchv1.Job); ok {
		c.enqueueOwner(logger, job)
	}
}

// updateJob wakes the Job's controller, and its former controller when
// the reference changed. Resyncs (same resourceVersion) are ignored.
func (c *Controller) updateJob(logger klog.Logger, oldObj, newObj any) {
	cur, ok1 := newObj.(*batchv1.Job)
	old, ok2 := oldObj.(*batchv1.Job)
	if !ok1 || !ok2 || cur.ResourceVersion == old.ResourceVersion {
		return
	}
	curRef, oldRef := metav1.GetControllerOfNoCopy(cur), metav1.GetControllerOfNoCopy(old)
	if oldRef != nil && !reflect.DeepEqual(curRef, oldRef) {
		if cj := c.owner(old.Namespace, oldRef); cj != nil {
			c.enqueue(logger, cj)
		}
	}
	c.enqueueOwner(logger, cur)
}

func (c *Controller) deleteJob(logger klog.Logger, obj any) {
	job, ok := obj.(*batchv1.Job)
	if !ok {
		tombstone, ok := obj.(cache.DeletedFinalStateUnknown)
		if !ok {
			utilruntime.HandleErrorWithLogger(logger, nil, "Couldn't get object from tombstone", "object", obj)
			return
		}
		if job, ok = tombstone.Obj.(*batchv1.Job); !ok {
			utilruntime.HandleErrorWithLogger(logger, nil, "Tombstone contained object that is not a Job", "object", obj)
			return
		}
	}
	c.enqueueOwner(logger, job)
}

// updateCronJob enqueues a CronJob whose schedule or time zone changed
// for its next scheduled time under the new schedule (an earlier requeue
// under the old one finds nothing to do), and any other change at once.
// A new schedule that does not parse gets an Event and no sync.
func (c *Controller) updateCronJob(logger klog.Logger, oldObj, newObj any) {
	old, ok1 := oldObj.(*batchv1.CronJob)
	cur, ok2 := newObj.(*batchv1.CronJob)
	if !ok1 || !ok2 {
		return
	}
	if old.Spec.Schedule == cur.Spec.Schedule && ptr.Equal(old.Spec.TimeZone, cur.Spec.TimeZone) {
		c.enqueue(logger, cur)
		return
	}
	sched, err := parseSchedule(scheduleSpec(cur, nil))
	if err != nil {
		logger.V(2).Info("Unparseable schedule for cronjob", "cronjob", klog.KObj(cur), "schedule", cur.Spec.Schedule, "err", err)
		c.recorder.Eventf(cur, v1.EventTypeWarning, "UnParseableCronJobSchedule", "unparseable schedule for cronjob: %s", cur.Spec.Schedule)
		return
	}
	c.enqueueAfter(logger, cur, requeueAfter(cur, c.clock.Now(), sched))
}
