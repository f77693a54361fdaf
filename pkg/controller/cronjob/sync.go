package cronjob

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller/controllerref"
)

// sync reconciles the CronJob named by key: history, active list, the Job
// due now, then one status write. It starts from the controller's own last
// write while the cache lags behind it (written.go). It requeues the key for the CronJob's
// next scheduled time itself; an error is retried with backoff instead.
func (c *Controller) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	cached, err := c.cronJobLister.CronJobs(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		logger.V(4).Info("CronJob not found, may be it is deleted", "cronjob", klog.KRef(namespace, name))
		c.written.Forget(key)
		return nil
	}
	if err != nil {
		return err
	}
	cached = c.written.Newest(key, cached)
	jobs, err := controllerref.ByControllerUID[*batchv1.Job](c.jobIndexer, cached.UID)
	if err != nil {
		return err
	}

	cj := cached.DeepCopy()
	s := &syncState{cj: cj, status: cj}
	s.changed = c.cleanupHistory(ctx, cj, jobs)
	requeue, syncErr := c.syncCronJob(ctx, s, jobs)
	if syncErr != nil {
		logger.V(2).Info("Error reconciling cronjob", "cronjob", klog.KObj(cached), "err", syncErr)
	}
	if err := c.writeStatus(ctx, key, s, cached); err != nil {
		logger.V(2).Info("Unable to update status for cronjob", "cronjob", klog.KObj(cached), "resourceVersion", cached.ResourceVersion, "err", err)
		return err
	}
	if requeue == nil {
		// Suspended, unusable schedule or time zone, or an error to retry.
		return syncErr
	}
	logger.V(4).Info("Re-queuing cronjob", "cronjob", klog.KObj(cached), "requeueAfter", *requeue)
	c.queue.AddAfter(key, *requeue)
	return nil
}

// syncCronJob reconciles the active list and, unless the CronJob is being
// deleted, starts what is due.
func (c *Controller) syncCronJob(ctx context.Context, s *syncState, jobs []*batchv1.Job) (*time.Duration, error) {
	now := c.clock.Now()
	if err := c.reconcileActive(ctx, s, jobs); err != nil {
		return nil, err
	}
	if s.cj.DeletionTimestamp != nil {
		return nil, nil
	}
	return c.startDue(ctx, s, now)
}

// writeStatus writes the status the sync built, if it asked for a write
// that changes something. (Upstream also sends writes that change nothing;
// the API server ignores them.)
func (c *Controller) writeStatus(ctx context.Context, key string, s *syncState, cached *batchv1.CronJob) error {
	if !s.changed {
		return nil
	}
	if s.status == s.cj && apiequality.Semantic.DeepEqual(s.status.Status, cached.Status) {
		return nil
	}
	written, err := c.client.BatchV1().CronJobs(s.status.Namespace).UpdateStatus(ctx, s.status, metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	c.written.Record(key, written)
	return nil
}
