package cronjob

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// syncState is one sync's view of a CronJob. cj is what the sync decides
// on and edits; status is the copy whose status is written at the end,
// when changed is set. They are one object unless reconcileActive found
// the cache's CronJob older than one of its Jobs and read it afresh: as
// upstream, decisions then follow the fresh copy, and the write, of the
// cached copy with its old resourceVersion, fails with a conflict, so the
// sync is retried on a cache that has caught up.
type syncState struct {
	cj, status *batchv1.CronJob
	changed    bool
}

// reconcileActive brings the active list in line with the Jobs the
// CronJob controls: a finished Job leaves it (SawCompletedJob), a
// succeeded Job's completion may advance lastSuccessfulTime, a running Job
// missing from it is reported (UnexpectedJob), and a listed Job that is in
// neither the cache nor the API server is dropped (MissingJob).
func (c *Controller) reconcileActive(ctx context.Context, s *syncState, jobs []*batchv1.Job) error {
	children := make(map[types.UID]bool, len(jobs))
	for _, j := range jobs {
		children[j.UID] = true
		listed := isActive(s.cj, j.UID)
		finished := finishedType(j)
		if finished == "" {
			if listed {
				continue
			}
			fresh, err := c.client.BatchV1().CronJobs(s.cj.Namespace).Get(ctx, s.cj.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if isActive(fresh, j.UID) {
				s.cj = fresh
				continue
			}
			c.recorder.Eventf(s.cj, v1.EventTypeWarning, "UnexpectedJob", "Saw a job that the controller did not create or forgot: %s", j.Name)
			continue
		}
		if listed {
			removeActive(s.cj, j.UID)
			c.recorder.Eventf(s.cj, v1.EventTypeNormal, "SawCompletedJob", "Saw completed job: %s, condition: %v", j.Name, finished)
			s.changed = true
		}
		if succeeded(j) {
			c.noteSuccess(s, j)
		}
	}
	return c.dropMissing(ctx, s, children)
}

// noteSuccess moves lastSuccessfulTime to the Job's completion time if
// that is later, or sets it (possibly to nil) if it was unset.
func (c *Controller) noteSuccess(s *syncState, j *batchv1.Job) {
	last := s.cj.Status.LastSuccessfulTime
	if last == nil {
		s.cj.Status.LastSuccessfulTime = j.Status.CompletionTime
		s.changed = true
		last = j.Status.CompletionTime
	}
	if done := j.Status.CompletionTime; done != nil && last != nil && done.After(last.Time) {
		s.cj.Status.LastSuccessfulTime = done
		s.changed = true
	}
}

// dropMissing removes from the active list the Jobs the cache does not
// hold, once a read from the API server confirms they are gone (the cache
// may just lag).
func (c *Controller) dropMissing(ctx context.Context, s *syncState, children map[types.UID]bool) error {
	for _, r := range s.cj.Status.Active {
		if children[r.UID] {
			continue
		}
		_, err := c.client.BatchV1().Jobs(r.Namespace).Get(ctx, r.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			c.recorder.Eventf(s.cj, v1.EventTypeNormal, "MissingJob", "Active job went missing: %v", r.Name)
			removeActive(s.cj, r.UID)
			s.changed = true
		case err != nil:
			return err
		}
	}
	return nil
}
