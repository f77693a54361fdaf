package deployment

import (
	"context"
	"strconv"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// Rollback through the deprecated.deployment.rollback.to annotation, which
// the extensions/v1beta1 and apps/v1beta1 rollback subresource used to
// set. Today's kubectl rolls back by copying a ReplicaSet's template into
// the Deployment itself, which is an ordinary rollout here.

// Reasons of the rollback Events.
const (
	ReasonRollbackRevisionNotFound  = "DeploymentRollbackRevisionNotFound"
	ReasonRollbackTemplateUnchanged = "DeploymentRollbackTemplateUnchanged"
	ReasonRollbackDone              = "DeploymentRollback"
)

// rollbackTo returns the revision the annotation asks for (0: the previous
// one), or nil when there is none or it does not parse.
func rollbackTo(d *apps.Deployment) *int64 {
	v := d.Annotations[apps.DeprecatedRollbackTo]
	if v == "" {
		return nil
	}
	rev, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil
	}
	return &rev
}

// rollback copies the template of the requested revision's ReplicaSet into
// the Deployment and clears the request; the rollout follows on the next
// sync.
func (c *Controller) rollback(ctx context.Context, s *syncState) error {
	logger := klog.FromContext(ctx)
	d := s.d
	newRS, oldRSs, err := c.replicaSets(ctx, s, true)
	if err != nil {
		return err
	}
	allRSs := append(oldRSs, newRS)
	target := *rollbackTo(d)
	if target == 0 {
		if target = lastRevision(logger, allRSs); target == 0 {
			c.recorder.Eventf(d, v1.EventTypeWarning, ReasonRollbackRevisionNotFound, "%s", "Unable to find last revision.")
			return c.clearRollbackTo(ctx, s)
		}
	}
	for _, rs := range allRSs {
		v, err := revision(rs)
		if err != nil {
			logger.V(4).Info("Unable to extract revision from deployment's replica set", "replicaSet", klog.KObj(rs), "err", err)
			continue
		}
		if v != target {
			continue
		}
		logger.V(4).Info("Found replica set with desired revision", "replicaSet", klog.KObj(rs), "revision", v)
		if equalIgnoreHash(&d.Spec.Template, &rs.Spec.Template) {
			logger.V(4).Info("Rolling back to a revision that contains the same template as current deployment, skipping rollback...", "deployment", klog.KObj(d))
			c.recorder.Eventf(d, v1.EventTypeWarning, ReasonRollbackTemplateUnchanged, "The rollback revision contains the same template as current deployment %q", d.Name)
			return c.clearRollbackTo(ctx, s)
		}
		logger.V(4).Info("Rolling back deployment to old template spec", "deployment", klog.KObj(d), "templateSpec", rs.Spec.Template.Spec)
		setTemplateFrom(d, rs)
		if err := c.clearRollbackTo(ctx, s); err != nil {
			return err
		}
		c.recorder.Eventf(d, v1.EventTypeNormal, ReasonRollbackDone, "Rolled back deployment %q to revision %d", d.Name, target)
		return nil
	}
	c.recorder.Eventf(d, v1.EventTypeWarning, ReasonRollbackRevisionNotFound, "%s", "Unable to find the revision to rollback to.")
	return c.clearRollbackTo(ctx, s)
}

// setTemplateFrom makes rs's template (without its pod-template-hash) and
// annotations (but the controller's own) the Deployment's.
func setTemplateFrom(d *apps.Deployment, rs *apps.ReplicaSet) {
	template := rs.Spec.Template.DeepCopy()
	delete(template.Labels, apps.DefaultDeploymentUniqueLabelKey)
	d.Spec.Template.ObjectMeta = template.ObjectMeta
	d.Spec.Template.Spec = template.Spec

	kept := map[string]string{}
	for k, v := range d.Annotations {
		if notCopied[k] {
			kept[k] = v
		}
	}
	for k, v := range rs.Annotations {
		if !notCopied[k] {
			kept[k] = v
		}
	}
	d.Annotations = kept
}

// clearRollbackTo removes the rollback annotation with an update of the
// whole Deployment (spec included, for a rollback). The answer becomes
// the stored state the status write at the end of the sync builds on.
func (c *Controller) clearRollbackTo(ctx context.Context, s *syncState) error {
	klog.FromContext(ctx).V(4).Info("Cleans up rollbackTo of deployment", "deployment", klog.KObj(s.d))
	delete(s.d.Annotations, apps.DeprecatedRollbackTo)
	updated, err := c.client.AppsV1().Deployments(s.d.Namespace).Update(ctx, s.d, metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	s.stored = updated
	s.d.ResourceVersion = updated.ResourceVersion
	return nil
}
