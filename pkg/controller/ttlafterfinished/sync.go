package ttlafterfinished

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
)

// sync deletes the Job named by key if its TTL has expired, both in the
// cache and in a fresh read, and requeues it for its expiry otherwise.
func (c *Controller) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	logger.V(4).Info("Checking if Job is ready for cleanup", "job", klog.KRef(namespace, name))
	job, err := c.jobLister.Jobs(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if expiredAt, err := c.checkTTL(logger, key, job); err != nil || expiredAt == nil {
		return err
	}

	// The cached Job may be stale: its TTL may have changed. Check again on
	// the latest copy (whose UID may differ; the checks hold for it too).
	fresh, err := c.client.BatchV1().Jobs(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	expiredAt, err := c.checkTTL(logger, key, fresh)
	if err != nil || expiredAt == nil {
		return err
	}

	policy := metav1.DeletePropagationForeground
	opts := metav1.DeleteOptions{PropagationPolicy: &policy, Preconditions: &metav1.Preconditions{UID: &fresh.UID}}
	logger.V(4).Info("Cleaning up Job", "job", klog.KObj(fresh))
	if err := c.client.BatchV1().Jobs(namespace).Delete(ctx, name, opts); err != nil {
		return err
	}
	jobDeletionDurationSeconds.Observe(c.clock.Since(*expiredAt).Seconds())
	return nil
}

// checkTTL returns when job's TTL expired, or nil if job needs no cleanup
// (not finished, no TTL, being deleted) or its TTL has not expired yet, in
// which case key is requeued for the expiry.
func (c *Controller) checkTTL(logger klog.Logger, key string, job *batchv1.Job) (*time.Time, error) {
	if job.DeletionTimestamp != nil || !needsCleanup(job) {
		return nil, nil
	}
	finishedAt, expiresAt, err := expiry(job)
	if err != nil {
		// Retrying cannot help; a change of the Job enqueues it again.
		return nil, controller.Permanent(err)
	}
	now := c.clock.Now()
	if finishedAt.After(now) {
		logger.Info("Warning: Found Job finished in the future. This is likely due to time skew in the cluster. Job cleanup will be deferred.", "job", klog.KObj(job))
	}
	remaining := expiresAt.Sub(now)
	logger.V(4).Info("Found Job finished", "job", klog.KObj(job), "finishTime", finishedAt.UTC(), "remainingTTL", remaining, "startTime", now.UTC(), "deadlineTTL", expiresAt.UTC())
	if remaining <= 0 {
		return &expiresAt, nil
	}
	c.queue.AddAfter(key, remaining)
	return nil, nil
}
