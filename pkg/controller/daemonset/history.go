package daemonset

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"

	apps "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/json"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller/hashing"
	"github.com/kcm-dev/kcm/internal/controller/history"
)

// A DaemonSet's ControllerRevisions record its pod templates, as
// upstream's: named <ds>-<hash> with hash the pod-template hash of the
// template and status.collisionCount (the Deployment controller's), labelled
// with the template's labels plus controller-revision-hash, annotated with
// the DaemonSet's annotations, holding revisionData. The revision whose
// data equals the DaemonSet's current revisionData is the current one; its
// hash label is what pods of the current template carry. kubectl rollout
// undo copies an old revision's data back into the DaemonSet, which makes
// that revision current again (with the next revision number).

// revisionData is upstream's getPatch: a strategic merge patch that
// replaces spec.template, the template in the DaemonSet's JSON encoding.
// Its bytes are compared with revisions' to find the current one, so they
// must be upstream's to the byte: the JSON is decoded into maps (numbers
// as int64 where they fit, as k8s.io/apimachinery's json does) and
// encoded again, which sorts the keys.
func revisionData(ds *apps.DaemonSet) ([]byte, error) {
	b, err := json.Marshal(&ds.Spec.Template)
	if err != nil {
		return nil, err
	}
	var template map[string]any
	if err := json.Unmarshal(b, &template); err != nil {
		return nil, err
	}
	template["$patch"] = "replace"
	return json.Marshal(map[string]any{"spec": map[string]any{"template": template}})
}

// constructHistory claims ds's revisions, labels those missing the hash
// label, and returns the current revision, creating it (or raising its
// revision number above every old one's) as needed, and the old ones.
// Revisions holding the current data more than once are deduplicated.
func (c *Controller) constructHistory(ctx context.Context, s *syncState) (cur *apps.ControllerRevision, old []*apps.ControllerRevision, err error) {
	revs, err := c.claimRevisions(ctx, s.ds, s.selector)
	if err != nil {
		return nil, nil, err
	}
	var current []*apps.ControllerRevision
	for _, rev := range revs {
		// Revisions from before the hash label get their name as hash:
		// no hash collision to worry about.
		if _, ok := rev.Labels[hashLabel]; !ok {
			toUpdate := rev.DeepCopy()
			if toUpdate.Labels == nil {
				toUpdate.Labels = map[string]string{}
			}
			toUpdate.Labels[hashLabel] = toUpdate.Name
			if rev, err = c.client.AppsV1().ControllerRevisions(s.ds.Namespace).Update(ctx, toUpdate, metav1.UpdateOptions{}); err != nil {
				return nil, nil, err
			}
		}
		if bytes.Equal(rev.Data.Raw, s.revisionData) {
			current = append(current, rev)
		} else {
			old = append(old, rev)
		}
	}
	next := maxRevision(old) + 1
	if len(current) == 0 {
		cur, err = c.snapshot(ctx, s, next)
		return cur, old, err
	}
	if cur, err = c.dedupCurrent(ctx, s, current); err != nil {
		return nil, nil, err
	}
	if cur.Revision < next {
		// Rolled back to cur: it becomes the newest. The returned revision
		// is not used: cur's name and hash stay what they were.
		if _, err := c.revisions.SetRevision(ctx, cur, next); err != nil {
			return nil, nil, err
		}
	}
	return cur, old, nil
}

// claimRevisions returns the revisions ds owns, after adopting matching
// orphans and releasing its own that no longer match. They are the
// cache's: do not modify them.
func (c *Controller) claimRevisions(ctx context.Context, ds *apps.DaemonSet, selector labels.Selector) ([]*apps.ControllerRevision, error) {
	// Every own revision, matching or not (those not matching are
	// released), and the namespace's orphans.
	candidates, err := history.List(c.revIndexer, ds, labels.Everything())
	if err != nil {
		return nil, err
	}
	m := history.NewManager(c.revisions, ds, controllerKind, selector, c.canAdopt(ds))
	return m.Claim(ctx, candidates)
}

func maxRevision(revs []*apps.ControllerRevision) int64 {
	var top int64
	for _, r := range revs {
		top = max(top, r.Revision)
	}
	return top
}

// snapshot creates the revision of ds's current template with number
// revision. When a revision of the same name holds other data (a hash
// collision), it raises status.collisionCount, so that the next sync tries
// another name, and returns the AlreadyExists error to be retried.
func (c *Controller) snapshot(ctx context.Context, s *syncState, revision int64) (*apps.ControllerRevision, error) {
	ds := s.ds
	hash := hashing.PodTemplateHash(&ds.Spec.Template, ds.Status.CollisionCount)
	lbls := make(map[string]string, len(ds.Spec.Template.Labels)+1)
	maps.Copy(lbls, ds.Spec.Template.Labels)
	lbls[hashLabel] = hash
	rev := &apps.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Name:            ds.Name + "-" + hash,
			Namespace:       ds.Namespace,
			Labels:          lbls,
			Annotations:     ds.Annotations,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ds, controllerKind)},
		},
		Data:     runtime.RawExtension{Raw: s.revisionData},
		Revision: revision,
	}
	revs := c.client.AppsV1().ControllerRevisions(ds.Namespace)
	created, err := revs.Create(ctx, rev, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		return created, err
	}
	existing, getErr := revs.Get(ctx, rev.Name, metav1.GetOptions{})
	if getErr != nil {
		return nil, getErr
	}
	if bytes.Equal(existing.Data.Raw, s.revisionData) {
		return existing, nil // created by an earlier sync
	}
	if err := c.bumpCollisionCount(ctx, ds); err != nil {
		return nil, err
	}
	return nil, err
}

// bumpCollisionCount raises the DaemonSet's status.collisionCount on a
// fresh copy, unless the cached one was stale (then the retry will use the
// fresh count).
func (c *Controller) bumpCollisionCount(ctx context.Context, ds *apps.DaemonSet) error {
	client := c.client.AppsV1().DaemonSets(ds.Namespace)
	fresh, err := client.Get(ctx, ds.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(fresh.Status.CollisionCount, ds.Status.CollisionCount) {
		return fmt.Errorf("found a stale collision count (%s, expected %s) of DaemonSet %q while processing; will retry until it is updated",
			countString(ds.Status.CollisionCount), countString(fresh.Status.CollisionCount), ds.Name)
	}
	if fresh.Status.CollisionCount == nil {
		fresh.Status.CollisionCount = new(int32)
	}
	*fresh.Status.CollisionCount++
	if _, err := client.UpdateStatus(ctx, fresh, metav1.UpdateOptions{}); err != nil {
		return err
	}
	klog.FromContext(ctx).V(2).Info("Found a hash collision for DaemonSet - bumping collisionCount to resolve it",
		"daemonset", klog.KObj(ds), "collisionCount", *fresh.Status.CollisionCount)
	return nil
}

func countString(p *int32) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}

// dedupCurrent keeps, of several revisions holding the current data, the
// one with the highest revision number (the last such in list order),
// relabels ds's pods of the others with its hash, and deletes the others.
func (c *Controller) dedupCurrent(ctx context.Context, s *syncState, current []*apps.ControllerRevision) (*apps.ControllerRevision, error) {
	if len(current) == 1 {
		return current[0], nil
	}
	var keep *apps.ControllerRevision
	var top int64
	for _, r := range current {
		if r.Revision >= top {
			keep, top = r, r.Revision
		}
	}
	keepHash := keep.Labels[hashLabel]
	for _, pod := range s.pods {
		if pod.Labels[hashLabel] == keepHash {
			continue
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{hashLabel: keepHash}}})
		if err != nil {
			return nil, err
		}
		if _, err := c.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return nil, err
		}
	}
	for _, r := range current {
		if r.Name == keep.Name {
			continue
		}
		err := c.client.AppsV1().ControllerRevisions(r.Namespace).Delete(ctx, r.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, err
		}
	}
	return keep, nil
}

// cleanupHistory deletes the oldest of old beyond revisionHistoryLimit
// that no pod of the DaemonSet (terminal ones being deleted included)
// still carries the hash of.
func (c *Controller) cleanupHistory(ctx context.Context, s *syncState, old []*apps.ControllerRevision) error {
	ds := s.ds
	limit := 10 // the API server's default
	if ds.Spec.RevisionHistoryLimit != nil {
		limit = int(*ds.Spec.RevisionHistoryLimit)
	}
	toKill := len(old) - limit
	if toKill <= 0 {
		return nil
	}
	live := map[string]bool{}
	for _, pods := range groupByNode(klog.FromContext(ctx), ds, s.pods, true) {
		for _, pod := range pods {
			if h := pod.Labels[hashLabel]; h != "" {
				live[h] = true
			}
		}
	}
	old = slices.Clone(old)
	slices.SortStableFunc(old, func(a, b *apps.ControllerRevision) int {
		return int(min(max(a.Revision-b.Revision, -1), 1))
	})
	for _, rev := range old {
		if toKill <= 0 {
			break
		}
		if live[rev.Labels[hashLabel]] {
			continue
		}
		if err := c.client.AppsV1().ControllerRevisions(ds.Namespace).Delete(ctx, rev.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		toKill--
	}
	return nil
}
