package statefulset

import (
	apps "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kcm-dev/kcm/internal/controller/history"
)

// revisionEqualityEntries bounds the memory of set generations found to
// match their latest revision (upstream's 10,000, about 1 MB).
const revisionEqualityEntries = 10_000

// revisionEqualityKey remembers that a set's generation matched the
// revision at a resourceVersion.
type revisionEqualityKey struct {
	set        types.UID
	generation int64
	revision   string
}

// matchesLatestRevision reports whether latest, once its template is
// defaulted as the API server defaults it today, is the revision proposed
// (from set's template) would be: the set has not changed, only what the
// API server adds to it (a field defaulted since the revision was
// recorded, e.g. after an upgrade), and latest stays the update revision
// instead of a new one rolling every pod
// (StatefulSetSemanticRevisionComparison).
func (c *Controller) matchesLatestRevision(set *apps.StatefulSet, proposed, latest *apps.ControllerRevision) bool {
	if !c.features.semanticRevisions {
		return false
	}
	key := revisionEqualityKey{set: set.UID, generation: set.Generation, revision: latest.ResourceVersion}
	if _, ok := c.revisionEquality.Get(key); ok {
		return true
	}
	latestSet, err := applyRevision(set, latest)
	if err != nil {
		return false
	}
	defaultTemplate(&latestSet.Spec.Template)
	reconstructed, err := newRevision(latestSet, -1, nil)
	if err != nil || !history.Equal(proposed, reconstructed) {
		return false
	}
	c.revisionEquality.Add(key, struct{}{})
	return true
}
