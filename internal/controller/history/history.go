package history

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kcm-dev/kcm/internal/controller/controllerref"
	"github.com/kcm-dev/kcm/internal/controller/hashing"
)

// HashLabel is the label every revision carries with its hash.
const HashLabel = "controller.kubernetes.io/hash"

// maxPrefix keeps <prefix>-<hash> within a DNS subdomain's 253 characters.
const maxPrefix = 223

// Name is the name of the revision of an owner named prefix with hash.
func Name(prefix, hash string) string {
	if len(prefix) > maxPrefix {
		prefix = prefix[:maxPrefix]
	}
	return prefix + "-" + hash
}

// Hash is the hash of a revision's data, with probe (the owner's collision
// count) mixed in when not nil.
func Hash(rev *appsv1.ControllerRevision, probe *int32) string {
	h := fnv.New32()
	if len(rev.Data.Raw) > 0 {
		h.Write(rev.Data.Raw)
	}
	if rev.Data.Object != nil {
		hashing.DeepHashObject(h, rev.Data.Object)
	}
	if probe != nil {
		h.Write([]byte(strconv.FormatInt(int64(*probe), 10)))
	}
	return rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// New returns the revision number revision of parent (of kind parentKind)
// holding data, labelled with templateLabels and its hash, named from the
// hash with collisionCount.
func New(parent metav1.Object, parentKind schema.GroupVersionKind, templateLabels map[string]string,
	data runtime.RawExtension, revision int64, collisionCount *int32) *appsv1.ControllerRevision {
	lbls := make(map[string]string, len(templateLabels)+1)
	for k, v := range templateLabels {
		lbls[k] = v
	}
	rev := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       parent.GetNamespace(),
			Labels:          lbls,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(parent, parentKind)},
		},
		Data:     data,
		Revision: revision,
	}
	hash := Hash(rev, collisionCount)
	rev.Name = Name(parent.GetName(), hash)
	rev.Labels[HashLabel] = hash
	return rev
}

// Equal reports whether two revisions hold the same data.
func Equal(a, b *appsv1.ControllerRevision) bool {
	if a == nil || b == nil {
		return a == b
	}
	return bytes.Equal(a.Data.Raw, b.Data.Raw) && apiequality.Semantic.DeepEqual(a.Data.Object, b.Data.Object)
}

// FindEqual returns the revisions holding the same data as needle.
func FindEqual(revs []*appsv1.ControllerRevision, needle *appsv1.ControllerRevision) []*appsv1.ControllerRevision {
	var eq []*appsv1.ControllerRevision
	for _, r := range revs {
		if Equal(r, needle) {
			eq = append(eq, r)
		}
	}
	return eq
}

// Sort orders revisions by revision number, then creation time, then name
// (oldest first), stably.
func Sort(revs []*appsv1.ControllerRevision) {
	slices.SortStableFunc(revs, func(a, b *appsv1.ControllerRevision) int {
		switch {
		case a.Revision != b.Revision:
			if a.Revision < b.Revision {
				return -1
			}
			return 1
		case !a.CreationTimestamp.Equal(&b.CreationTimestamp):
			if a.CreationTimestamp.Before(&b.CreationTimestamp) {
				return -1
			}
			return 1
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
}

// index is the informer index of revisions: by controller UID, and orphans
// under orphanKey(namespace).
const index = "kcm-history-owner"

func orphanKey(namespace string) string { return "orphan/" + namespace }

// AddIndex adds the index List reads to a ControllerRevision informer,
// unless another controller did.
func AddIndex(informer cache.SharedIndexInformer) error {
	if _, ok := informer.GetIndexer().GetIndexers()[index]; ok {
		return nil
	}
	return informer.AddIndexers(cache.Indexers{index: func(obj any) ([]string, error) {
		rev, ok := obj.(*appsv1.ControllerRevision)
		if !ok {
			return nil, nil
		}
		if ref := metav1.GetControllerOfNoCopy(rev); ref != nil {
			return []string{string(ref.UID)}, nil
		}
		return []string{orphanKey(rev.Namespace)}, nil
	}})
}

// List returns the cached revisions parent controls and the orphans in its
// namespace, of those that match selector. They are the cache's: do not
// modify them.
func List(indexer cache.Indexer, parent metav1.Object, selector labels.Selector) ([]*appsv1.ControllerRevision, error) {
	var out []*appsv1.ControllerRevision
	for _, key := range []string{string(parent.GetUID()), orphanKey(parent.GetNamespace())} {
		objs, err := indexer.ByIndex(index, key)
		if err != nil {
			return nil, err
		}
		for _, obj := range objs {
			if rev, ok := obj.(*appsv1.ControllerRevision); ok && rev.Namespace == parent.GetNamespace() &&
				selector.Matches(labels.Set(rev.Labels)) {
				out = append(out, rev)
			}
		}
	}
	return out, nil
}

// Client writes revisions.
type Client struct {
	Client kubernetes.Interface
}

// Create creates rev for parent under the name its hash with
// *collisionCount gives. If a revision of that name holds the same data it
// is returned; if it holds other data, *collisionCount is raised and the
// next name tried. collisionCount must not be nil.
func (c Client) Create(ctx context.Context, parent metav1.Object, rev *appsv1.ControllerRevision, collisionCount *int32) (*appsv1.ControllerRevision, error) {
	if collisionCount == nil {
		return nil, errors.New("history: nil collisionCount")
	}
	revs := c.Client.AppsV1().ControllerRevisions(parent.GetNamespace())
	clone := rev.DeepCopy()
	clone.Namespace = parent.GetNamespace()
	for {
		clone.Name = Name(parent.GetName(), Hash(rev, collisionCount))
		created, err := revs.Create(ctx, clone, metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			return created, err
		}
		existing, err := revs.Get(ctx, clone.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		if bytes.Equal(existing.Data.Raw, clone.Data.Raw) {
			return existing, nil
		}
		*collisionCount++
	}
}

// SetRevision sets rev's revision number (a rollback to it makes it the
// newest), retrying conflicts from a fresh read.
func (c Client) SetRevision(ctx context.Context, rev *appsv1.ControllerRevision, revision int64) (*appsv1.ControllerRevision, error) {
	revs := c.Client.AppsV1().ControllerRevisions(rev.Namespace)
	cur := rev.DeepCopy()
	for attempt := 0; ; attempt++ {
		if cur.Revision == revision {
			return cur, nil
		}
		cur.Revision = revision
		updated, err := revs.Update(ctx, cur, metav1.UpdateOptions{})
		if err == nil {
			return updated, nil
		}
		if !apierrors.IsConflict(err) || attempt >= 4 {
			return nil, err
		}
		if cur, err = revs.Get(ctx, rev.Name, metav1.GetOptions{}); err != nil {
			return nil, err
		}
	}
}

// Delete deletes rev; one already gone is not an error.
func (c Client) Delete(ctx context.Context, rev *appsv1.ControllerRevision) error {
	err := c.Client.AppsV1().ControllerRevisions(rev.Namespace).Delete(ctx, rev.Name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &rev.UID},
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// Patcher writes revisions for a controllerref.Manager (adoption, release).
func (c Client) Patcher() controllerref.PatchFunc {
	return func(ctx context.Context, namespace, name string, patch []byte) error {
		_, err := c.Client.AppsV1().ControllerRevisions(namespace).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
		return err
	}
}

// NewManager returns a controllerref.Manager claiming revisions for parent.
func NewManager(c Client, parent metav1.Object, parentKind schema.GroupVersionKind, selector labels.Selector,
	canAdopt func(ctx context.Context) error) *controllerref.Manager[*appsv1.ControllerRevision] {
	return controllerref.New[*appsv1.ControllerRevision]("ControllerRevision", c.Patcher(), parent, parentKind, selector, canAdopt)
}
