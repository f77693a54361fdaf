package statefulset

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller/history"
)

// A revision's data is a strategic merge patch that restores the set's pod
// template: {"spec":{"template":{"$patch":"replace",...}}}, the template as
// the apps/v1 codec encodes it, decoded and encoded again with
// encoding/json (so with sorted keys). These bytes name the revision (their
// hash), so they must be upstream's to the byte: a set that upstream's
// controller manager ran keeps its revisions, and its pods, under ours.

// patchCodec encodes sets as upstream's revision data does.
var patchCodec = scheme.Codecs.LegacyCodec(apps.SchemeGroupVersion)

// revisionPatch returns the data of the revision of set's template.
func revisionPatch(set *apps.StatefulSet) ([]byte, error) {
	// Encoding sets the object's type meta for a moment: never the
	// cache's object.
	data, err := runtime.Encode(patchCodec, set.DeepCopy())
	if err != nil {
		return nil, err
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	spec, ok := raw["spec"].(map[string]any)
	if !ok {
		return nil, errors.New("encoded StatefulSet has no spec")
	}
	template, ok := spec["template"].(map[string]any)
	if !ok {
		return nil, errors.New("encoded StatefulSet has no spec.template")
	}
	template["$patch"] = "replace"
	return json.Marshal(map[string]any{"spec": map[string]any{"template": template}})
}

// newRevision returns revision number revision of set's current template,
// named with collisionCount (nil: without it), labelled with the
// template's labels and annotated with the set's annotations.
func newRevision(set *apps.StatefulSet, revision int64, collisionCount *int32) (*apps.ControllerRevision, error) {
	patch, err := revisionPatch(set)
	if err != nil {
		return nil, err
	}
	return revisionOf(set, patch, revision, collisionCount), nil
}

// revisionOf is newRevision with set's revision data already computed.
func revisionOf(set *apps.StatefulSet, patch []byte, revision int64, collisionCount *int32) *apps.ControllerRevision {
	rev := history.New(set, controllerKind, set.Spec.Template.Labels, runtime.RawExtension{Raw: patch}, revision, collisionCount)
	rev.Annotations = make(map[string]string, len(set.Annotations))
	maps.Copy(rev.Annotations, set.Annotations)
	return rev
}

// setPatches remembers, per StatefulSet, the revision data of its template
// at its latest generation (the template changes only with the
// generation), and its spec at the other revision it was last applied at
// (during a rolling update, the current revision): encoding the set and
// patching it is most of a sync's work.
type setPatches struct {
	mu      sync.Mutex
	m       map[types.UID]generationPatch
	applied map[types.UID]appliedRevision
}

// appliedRevision is a set's spec at a revision (by name and
// resourceVersion), from the set at a generation.
type appliedRevision struct {
	generation    int64
	name, version string
	spec          *apps.StatefulSetSpec
}

type generationPatch struct {
	generation int64
	patch      []byte
}

// get returns set's revision data, computing it on a miss.
func (p *setPatches) get(set *apps.StatefulSet) ([]byte, error) {
	p.mu.Lock()
	e, ok := p.m[set.UID]
	p.mu.Unlock()
	if ok && e.generation == set.Generation {
		return e.patch, nil
	}
	patch, err := revisionPatch(set)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[types.UID]generationPatch{}
	}
	p.m[set.UID] = generationPatch{generation: set.Generation, patch: patch}
	return patch, nil
}

// forget drops a deleted set's entries.
func (p *setPatches) forget(uid types.UID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.m, uid)
	delete(p.applied, uid)
}

// atRevision returns set at the revision: set itself when the revision
// holds set's own template (its data is patch, set's revision data), else
// a shallow copy of set with the spec applyRevision restores (remembered
// per set, for the set's generation). The result is read-only.
func (p *setPatches) atRevision(set *apps.StatefulSet, patch []byte, rev *apps.ControllerRevision) (*apps.StatefulSet, error) {
	if rev.Data.Object == nil && bytes.Equal(rev.Data.Raw, patch) {
		return set, nil
	}
	p.mu.Lock()
	a, ok := p.applied[set.UID]
	p.mu.Unlock()
	if !ok || a.generation != set.Generation || a.name != rev.Name || a.version != rev.ResourceVersion {
		restored, err := applyRevision(set, rev)
		if err != nil {
			return nil, err
		}
		a = appliedRevision{generation: set.Generation, name: rev.Name, version: rev.ResourceVersion, spec: &restored.Spec}
		p.mu.Lock()
		if p.applied == nil {
			p.applied = map[types.UID]appliedRevision{}
		}
		p.applied[set.UID] = a
		p.mu.Unlock()
	}
	clone := *set
	clone.Spec = *a.spec
	return &clone, nil
}

// applyRevision returns a copy of set whose spec is set's with the
// revision's patch applied (its template restored).
func applyRevision(set *apps.StatefulSet, rev *apps.ControllerRevision) (*apps.StatefulSet, error) {
	clone := set.DeepCopy()
	original, err := runtime.Encode(patchCodec, clone)
	if err != nil {
		return nil, err
	}
	patched, err := strategicpatch.StrategicMergePatch(original, rev.Data.Raw, clone)
	if err != nil {
		return nil, err
	}
	restored := &apps.StatefulSet{}
	if err := json.Unmarshal(patched, restored); err != nil {
		return nil, err
	}
	clone.Spec = restored.Spec
	return clone, nil
}

// nextRevision is one more than the highest revision number of the sorted
// revisions, or 1.
func nextRevision(sorted []*apps.ControllerRevision) int64 {
	if len(sorted) == 0 {
		return 1
	}
	return sorted[len(sorted)-1].Revision + 1
}

// listRevisions returns the cached revisions set owns and the orphans its
// selector matches, unsorted.
func (c *Controller) listRevisions(set *apps.StatefulSet) ([]*apps.ControllerRevision, error) {
	selector, err := metav1.LabelSelectorAsSelector(set.Spec.Selector)
	if err != nil {
		return nil, err
	}
	return history.List(c.revIndexer, set, selector)
}

// revisions returns set's current and update revisions and its collision
// count. The update revision is the one holding set's template: the newest
// revision if it does; an older one that does becomes the newest (a
// rollback, e.g. `kubectl rollout undo`, reuses it and raises its revision
// number); otherwise a new revision is created, which may raise the
// collision count. The current revision is the one status.currentRevision
// names, or the update revision. sorted are set's revisions, oldest first.
func (c *Controller) revisions(ctx context.Context, set *apps.StatefulSet, patch []byte, sorted []*apps.ControllerRevision) (current, update *apps.ControllerRevision, collisionCount int32, err error) {
	if set.Status.CollisionCount != nil {
		collisionCount = *set.Status.CollisionCount
	}
	proposed := revisionOf(set, patch, nextRevision(sorted), &collisionCount)
	equal := history.FindEqual(sorted, proposed)
	n := len(sorted)
	switch {
	case len(equal) > 0 && history.Equal(sorted[n-1], equal[len(equal)-1]):
		update = sorted[n-1]
	case len(equal) > 0:
		logger := klog.FromContext(ctx)
		logger.V(2).Info("Reusing an older revision of StatefulSet", "statefulSet", klog.KObj(set),
			"revision", klog.KObj(equal[len(equal)-1]), "newRevisionNumber", proposed.Revision)
		update, err = c.history.SetRevision(ctx, equal[len(equal)-1], proposed.Revision)
	case n > 0 && c.matchesLatestRevision(set, proposed, sorted[n-1]):
		update = sorted[n-1]
	default:
		update, err = c.history.Create(ctx, set, proposed, &collisionCount)
	}
	if err != nil {
		return nil, nil, collisionCount, err
	}
	for _, rev := range sorted {
		if rev.Name == set.Status.CurrentRevision {
			current = rev
			break
		}
	}
	if current == nil {
		current = update
	}
	return current, update, collisionCount, nil
}

// truncateHistory deletes the oldest of set's revisions that are not live
// (the current and update revision, and those some pod is at) until
// revisionHistoryLimit remain. sorted are set's revisions, oldest first.
func (c *Controller) truncateHistory(ctx context.Context, set *apps.StatefulSet, pods []*v1.Pod, sorted []*apps.ControllerRevision, current, update *apps.ControllerRevision) error {
	live := make(map[string]bool, len(pods)+2)
	if current != nil {
		live[current.Name] = true
	}
	if update != nil {
		live[update.Name] = true
	}
	for _, pod := range pods {
		live[podRevision(pod)] = true
	}
	var old []*apps.ControllerRevision
	for _, rev := range sorted {
		if !live[rev.Name] {
			old = append(old, rev)
		}
	}
	limit := int(*set.Spec.RevisionHistoryLimit)
	if limit < 0 || len(old) <= limit {
		return nil
	}
	for _, rev := range old[:len(old)-limit] {
		klog.FromContext(ctx).V(4).Info("Deleting old revision of StatefulSet", "statefulSet", klog.KObj(set), "revision", klog.KObj(rev))
		if err := c.history.Delete(ctx, rev); err != nil {
			return fmt.Errorf("deleting revision %s: %w", rev.Name, err)
		}
	}
	return nil
}
