package deployment

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/internal/controller/hashing"
)

// replicaSets returns the new ReplicaSet and the old ones, oldest first,
// with revisions synced: the new ReplicaSet's revision is raised to one
// above the old ones', and the Deployment carries it. With create, a
// missing new ReplicaSet is created; without, newRS may be nil. The work
// is done once per sync; each call returns a fresh slice of old ones.
func (c *Controller) replicaSets(ctx context.Context, s *syncState, create bool) (*apps.ReplicaSet, []*apps.ReplicaSet, error) {
	if !s.resolved {
		existing, old := splitReplicaSets(s.d, s.rsList)
		if existing != nil {
			rs, err := c.syncExistingNewReplicaSet(ctx, s.d, existing, old)
			if err != nil {
				return nil, nil, err
			}
			s.newRS = rs
		}
		s.oldRSs = old
		s.resolved = true
	}
	if s.newRS == nil && create {
		rs, err := c.createNewReplicaSet(ctx, s.d, s.oldRSs, !s.cacheBehind)
		if err != nil {
			return nil, nil, err
		}
		s.newRS = rs
	}
	return s.newRS, slices.Clone(s.oldRSs), nil
}

// nextRevision is one above the highest revision of oldRSs.
func nextRevision(logger klog.Logger, oldRSs []*apps.ReplicaSet) string {
	return strconv.FormatInt(maxRevision(logger, oldRSs)+1, 10)
}

// syncExistingNewReplicaSet brings the new ReplicaSet's annotations and
// minReadySeconds up to date, then records its revision on d.
func (c *Controller) syncExistingNewReplicaSet(ctx context.Context, d *apps.Deployment, rs *apps.ReplicaSet, oldRSs []*apps.ReplicaSet) (*apps.ReplicaSet, error) {
	logger := klog.FromContext(ctx)
	// Work out the annotations on a shallow copy with its own map; deep-copy
	// only when there is something to write.
	probe := *rs
	probe.Annotations = maps.Clone(rs.Annotations)
	changed := setNewReplicaSetAnnotations(logger, d, &probe, nextRevision(logger, oldRSs), true)
	if changed || rs.Spec.MinReadySeconds != d.Spec.MinReadySeconds {
		cp := rs.DeepCopy()
		cp.Annotations = probe.Annotations
		cp.Spec.MinReadySeconds = d.Spec.MinReadySeconds
		updated, err := c.client.AppsV1().ReplicaSets(cp.Namespace).Update(ctx, cp, metav1.UpdateOptions{})
		if err != nil {
			return nil, err
		}
		rs = updated
	}
	setDeploymentRevision(d, rs.Annotations[RevisionAnnotation])
	// A Deployment that got a progress deadline only now starts counting
	// from the moment its new ReplicaSet was noticed.
	if hasProgressDeadline(d) && getCondition(d.Status, apps.DeploymentProgressing) == nil {
		msg := fmt.Sprintf("Found new replica set %q", rs.Name)
		setCondition(&d.Status, newCondition(apps.DeploymentProgressing, v1.ConditionTrue, ReasonFoundNewReplicaSet, msg, c.clock.Now()))
	}
	return rs, nil
}

// replicaSetName is "<deployment>-<hash>", the Deployment's name cut so
// that the whole fits a DNS subdomain.
func replicaSetName(deployment, hash string) string {
	if maxLen := validation.DNS1123SubdomainMaxLength - 1 - len(hash); len(deployment) > maxLen && maxLen > 0 {
		deployment = deployment[:maxLen]
	}
	return deployment + "-" + hash
}

// newReplicaSet builds, without writing it, the ReplicaSet for d's current
// template: named and labelled by the template's hash, which its selector
// also requires, controlled by d.
func newReplicaSet(d *apps.Deployment, hash string) *apps.ReplicaSet {
	template := d.Spec.Template.DeepCopy()
	if template.Labels == nil {
		template.Labels = map[string]string{}
	}
	template.Labels[apps.DefaultDeploymentUniqueLabelKey] = hash
	selector := d.Spec.Selector.DeepCopy()
	if selector.MatchLabels == nil {
		selector.MatchLabels = map[string]string{}
	}
	selector.MatchLabels[apps.DefaultDeploymentUniqueLabelKey] = hash
	return &apps.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name:            replicaSetName(d.Name, hash),
			Namespace:       d.Namespace,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, controllerKind)},
			Labels:          template.Labels,
		},
		Spec: apps.ReplicaSetSpec{
			Replicas:        ptr.To[int32](0),
			MinReadySeconds: d.Spec.MinReadySeconds,
			Selector:        selector,
			Template:        *template,
		},
	}
}

// createNewReplicaSet creates the ReplicaSet for d's current template at
// the size the strategy allows now, and records its revision and, with
// markCreated, the NewReplicaSetCreated condition on d. A ReplicaSet of the
// same name that is not d's with the same template is a hash collision:
// d's collisionCount is bumped (so the next attempt hashes differently) and
// the error returned.
func (c *Controller) createNewReplicaSet(ctx context.Context, d *apps.Deployment, oldRSs []*apps.ReplicaSet, markCreated bool) (*apps.ReplicaSet, error) {
	logger := klog.FromContext(ctx)
	hash := hashing.PodTemplateHash(&d.Spec.Template, d.Status.CollisionCount)
	rs := newReplicaSet(d, hash)
	size, err := newRSNewReplicas(d, append(slices.Clip(oldRSs), rs), rs)
	if err != nil {
		return nil, err
	}
	rs.Spec.Replicas = ptr.To(size)
	newRevision := nextRevision(logger, oldRSs)
	setNewReplicaSetAnnotations(logger, d, rs, newRevision, false)

	created, err := c.client.AppsV1().ReplicaSets(d.Namespace).Create(ctx, rs, metav1.CreateOptions{})
	alreadyExists := apierrors.IsAlreadyExists(err)
	switch {
	case alreadyExists:
		// Most likely ours, created by an earlier sync the cache has not
		// caught up with.
		existing, getErr := c.rsLister.ReplicaSets(rs.Namespace).Get(rs.Name)
		if getErr != nil {
			return nil, getErr
		}
		if ref := metav1.GetControllerOfNoCopy(existing); ref != nil && ref.UID == d.UID && equalIgnoreHash(&d.Spec.Template, &existing.Spec.Template) {
			created = existing
			break
		}
		before := ptr.Deref(d.Status.CollisionCount, 0)
		d.Status.CollisionCount = ptr.To(before + 1)
		logger.V(2).Info("Found a hash collision for deployment - bumping collisionCount to resolve it", "deployment", klog.KObj(d), "oldCollisionCount", before, "newCollisionCount", before+1)
		return nil, err
	case apierrors.HasStatusCause(err, v1.NamespaceTerminatingCause):
		return nil, err
	case err != nil:
		msg := fmt.Sprintf("Failed to create new replica set %q: %v", rs.Name, err)
		if hasProgressDeadline(d) {
			setCondition(&d.Status, newCondition(apps.DeploymentProgressing, v1.ConditionFalse, ReasonReplicaSetCreateError, msg, c.clock.Now()))
		}
		c.recorder.Eventf(d, v1.EventTypeWarning, ReasonReplicaSetCreateError, "%s", msg)
		return nil, err
	}
	if !alreadyExists && size > 0 {
		c.recorder.Eventf(d, v1.EventTypeNormal, "ScalingReplicaSet", "Scaled up replica set %s from 0 to %d", created.Name, size)
	}
	setDeploymentRevision(d, newRevision)
	if !alreadyExists && hasProgressDeadline(d) && markCreated {
		msg := fmt.Sprintf("Created new replica set %q", created.Name)
		setCondition(&d.Status, newCondition(apps.DeploymentProgressing, v1.ConditionTrue, ReasonNewReplicaSetCreated, msg, c.clock.Now()))
	}
	return created, nil
}
