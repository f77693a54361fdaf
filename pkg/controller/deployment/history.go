package deployment

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// Annotations the controller maintains on Deployments and ReplicaSets.
const (
	// RevisionAnnotation is the revision of a ReplicaSet, and on a
	// Deployment the revision of its new ReplicaSet.
	RevisionAnnotation = "deployment.kubernetes.io/revision"
	// RevisionHistoryAnnotation lists, comma-separated, the revisions a
	// ReplicaSet had before (after rollbacks to its template).
	RevisionHistoryAnnotation = "deployment.kubernetes.io/revision-history"
	// DesiredReplicasAnnotation is the Deployment's spec.replicas when the
	// ReplicaSet was last sized.
	DesiredReplicasAnnotation = "deployment.kubernetes.io/desired-replicas"
	// MaxReplicasAnnotation is spec.replicas plus maxSurge when the
	// ReplicaSet was last sized: the base of proportional scaling.
	MaxReplicasAnnotation = "deployment.kubernetes.io/max-replicas"

	// maxRevisionHistoryChars bounds the revision-history annotation.
	maxRevisionHistoryChars = 2000
)

// notCopied are the Deployment annotations that stay off its ReplicaSets
// (and, on rollback, the ReplicaSet annotations that stay off the
// Deployment).
var notCopied = map[string]bool{
	v1.LastAppliedConfigAnnotation: true,
	RevisionAnnotation:             true,
	RevisionHistoryAnnotation:      true,
	DesiredReplicasAnnotation:      true,
	MaxReplicasAnnotation:          true,
	apps.DeprecatedRollbackTo:      true,
}

// revision parses obj's revision annotation; none is revision 0.
func revision(obj metav1.Object) (int64, error) {
	v, ok := obj.GetAnnotations()[RevisionAnnotation]
	if !ok {
		return 0, nil
	}
	return strconv.ParseInt(v, 10, 64)
}

// maxRevision is the highest parseable revision among rss.
func maxRevision(logger klog.Logger, rss []*apps.ReplicaSet) int64 {
	var top int64
	for _, rs := range rss {
		v, err := revision(rs)
		if err != nil {
			logger.V(4).Info("Couldn't parse revision for replica set, deployment controller will skip it when reconciling revisions", "replicaSet", klog.KObj(rs), "err", err)
			continue
		}
		top = max(top, v)
	}
	return top
}

// lastRevision is the second highest revision among rss: the one before
// the current one, which a rollback without a revision goes back to.
func lastRevision(logger klog.Logger, rss []*apps.ReplicaSet) int64 {
	var top, second int64
	for _, rs := range rss {
		v, err := revision(rs)
		switch {
		case err != nil:
			logger.V(4).Info("Couldn't parse revision for replica set, deployment controller will skip it when reconciling revisions", "replicaSet", klog.KObj(rs), "err", err)
		case v >= top:
			top, second = v, top
		case v > second:
			second = v
		}
	}
	return second
}

// byRevision orders lowest revision first; unparseable or equal revisions
// fall back to creation order.
func byRevision(a, b *apps.ReplicaSet) int {
	ra, errA := revision(a)
	rb, errB := revision(b)
	if errA != nil || errB != nil || ra == rb {
		return byCreation(a, b)
	}
	if ra < rb {
		return -1
	}
	return 1
}

// setDeploymentRevision records rev on d and reports whether it changed.
func setDeploymentRevision(d *apps.Deployment, rev string) bool {
	if d.Annotations == nil {
		d.Annotations = map[string]string{}
	}
	if d.Annotations[RevisionAnnotation] == rev {
		return false
	}
	d.Annotations[RevisionAnnotation] = rev
	return true
}

// copyAnnotations copies d's annotations, except the controller's own and
// last-applied-configuration, onto rs. It never removes any.
func copyAnnotations(d *apps.Deployment, rs *apps.ReplicaSet) bool {
	changed := false
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	for k, v := range d.Annotations {
		if notCopied[k] {
			continue
		}
		if cur, ok := rs.Annotations[k]; ok && cur == v {
			continue
		}
		rs.Annotations[k] = v
		changed = true
	}
	return changed
}

// setNewReplicaSetAnnotations brings the new ReplicaSet's annotations up
// to date: the Deployment's (such as kubernetes.io/change-cause), revision
// newRevision unless it has a higher one already - pushing its former
// revision onto revision-history - and, for a ReplicaSet not created yet,
// the replicas annotations. It reports whether anything changed.
func setNewReplicaSetAnnotations(logger klog.Logger, d *apps.Deployment, rs *apps.ReplicaSet, newRevision string, exists bool) bool {
	changed := copyAnnotations(d, rs)
	oldRevision, had := rs.Annotations[RevisionAnnotation]
	oldRev, err := strconv.ParseInt(oldRevision, 10, 64)
	if err != nil {
		if oldRevision != "" {
			logger.Info("Updating replica set revision OldRevision not int", "err", err)
			return false
		}
		oldRev = 0
	}
	newRev, err := strconv.ParseInt(newRevision, 10, 64)
	if err != nil {
		logger.Info("Updating replica set revision NewRevision not int", "err", err)
		return false
	}
	if oldRev < newRev {
		rs.Annotations[RevisionAnnotation] = newRevision
		changed = true
		logger.V(4).Info("Updating replica set revision", "replicaSet", klog.KObj(rs), "newRevision", newRevision)
		if had {
			appendRevisionHistory(logger, rs, oldRevision)
		}
	}
	if !exists && setReplicasAnnotations(rs, desired(d), maxReplicas(d)) {
		changed = true
	}
	return changed
}

// appendRevisionHistory appends rev to the revision-history annotation,
// dropping its oldest entries to stay within maxRevisionHistoryChars.
func appendRevisionHistory(logger klog.Logger, rs *apps.ReplicaSet, rev string) {
	history := rs.Annotations[RevisionHistoryAnnotation]
	revs := strings.Split(history, ",")
	if revs[0] == "" {
		// No history yet (or a malformed one, which upstream replaces too).
		rs.Annotations[RevisionHistoryAnnotation] = rev
		return
	}
	total := len(history) + len(rev) + 1
	start := 0
	for total > maxRevisionHistoryChars && start < len(revs) {
		total -= len(revs[start]) + 1
		start++
	}
	if total > maxRevisionHistoryChars {
		logger.Info("Not appending revision due to revision history length limit reached", "revisionHistoryLimit", maxRevisionHistoryChars)
		return
	}
	rs.Annotations[RevisionHistoryAnnotation] = strings.Join(append(revs[start:], rev), ",")
}

// setReplicasAnnotations records the desired and max replicas rs was sized
// for and reports whether they changed.
func setReplicasAnnotations(rs *apps.ReplicaSet, desiredReplicas, maxReplicas int32) bool {
	if !replicasAnnotationsNeedUpdate(rs, desiredReplicas, maxReplicas) {
		return false
	}
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	rs.Annotations[DesiredReplicasAnnotation] = strconv.Itoa(int(desiredReplicas))
	rs.Annotations[MaxReplicasAnnotation] = strconv.Itoa(int(maxReplicas))
	return true
}

func replicasAnnotationsNeedUpdate(rs *apps.ReplicaSet, desiredReplicas, maxReplicas int32) bool {
	return rs.Annotations[DesiredReplicasAnnotation] != strconv.Itoa(int(desiredReplicas)) ||
		rs.Annotations[MaxReplicasAnnotation] != strconv.Itoa(int(maxReplicas))
}

// nonNegativeAnnotation parses a replicas annotation: a decimal that fits
// an int32. ok is false when it is absent or malformed.
func nonNegativeAnnotation(logger klog.Logger, rs *apps.ReplicaSet, key string) (int32, bool) {
	s, ok := rs.Annotations[key]
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 10, 32)
	if err == nil && v > math.MaxInt32 {
		err = fmt.Errorf("value %d is out of range (higher than %d)", v, math.MaxInt32)
	}
	if err != nil {
		logger.V(2).Info("Could not convert the value with annotation key for the replica set", "annotationValue", s, "annotationKey", key, "replicaSet", klog.KObj(rs))
		return 0, false
	}
	return int32(v), true
}

// cleanupOldReplicaSets deletes the oldest of oldRSs beyond
// revisionHistoryLimit, as long as they are scaled to zero, have no pods
// left and their controller observed that.
func (c *Controller) cleanupOldReplicaSets(ctx context.Context, d *apps.Deployment, oldRSs []*apps.ReplicaSet) error {
	if !hasRevisionHistoryLimit(d) {
		return nil
	}
	logger := klog.FromContext(ctx)
	var cleanable []*apps.ReplicaSet
	for _, rs := range oldRSs {
		if rs != nil && rs.DeletionTimestamp == nil {
			cleanable = append(cleanable, rs)
		}
	}
	excess := len(cleanable) - int(*d.Spec.RevisionHistoryLimit)
	if excess <= 0 {
		return nil
	}
	slices.SortFunc(cleanable, byRevision)
	logger.V(4).Info("Looking to cleanup old replica sets for deployment", "deployment", klog.KObj(d))
	for _, rs := range cleanable[:excess] {
		if rs.Status.Replicas != 0 || replicas(rs) != 0 || rs.Generation > rs.Status.ObservedGeneration {
			continue
		}
		logger.V(4).Info("Trying to cleanup replica set for deployment", "replicaSet", klog.KObj(rs), "deployment", klog.KObj(d))
		err := c.client.AppsV1().ReplicaSets(rs.Namespace).Delete(ctx, rs.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			// Stop at the first failure rather than pile on a struggling
			// API server.
			return err
		}
	}
	return nil
}
