package persistentvolume

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/klog/v2"
)

const accessModesIndex = "accessmodes"

// volumeIndex is the controller's own volume store, indexed by the set of
// access modes a volume offers, so that a claim is matched first against
// the volumes offering the fewest modes that include all it asks for.
type volumeIndex struct {
	store cache.Indexer
}

func newVolumeIndex() *volumeIndex {
	return &volumeIndex{store: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{accessModesIndex: func(obj any) ([]string, error) {
		pv, ok := obj.(*v1.PersistentVolume)
		if !ok {
			return []string{""}, fmt.Errorf("object is not a persistent volume: %v", obj)
		}
		return []string{accessModesString(pv.Spec.AccessModes)}, nil
	}})}
}

// modeAbbreviations is upstream's order and spelling of access modes in
// its index keys.
var modeAbbreviations = []struct {
	mode v1.PersistentVolumeAccessMode
	abbr string
}{
	{v1.ReadWriteOnce, "RWO"}, {v1.ReadOnlyMany, "ROX"}, {v1.ReadWriteMany, "RWX"}, {v1.ReadWriteOncePod, "RWOP"},
}

func accessModesString(modes []v1.PersistentVolumeAccessMode) string {
	var parts []string
	for _, m := range modeAbbreviations {
		if slices.Contains(modes, m.mode) {
			parts = append(parts, m.abbr)
		}
	}
	return strings.Join(parts, ",")
}

func accessModesFromString(s string) []v1.PersistentVolumeAccessMode {
	var modes []v1.PersistentVolumeAccessMode
	for _, part := range strings.Split(s, ",") {
		for _, m := range modeAbbreviations {
			if strings.TrimSpace(part) == m.abbr {
				modes = append(modes, m.mode)
			}
		}
	}
	return modes
}

func containsAll(have, want []v1.PersistentVolumeAccessMode) bool {
	for _, m := range want {
		if !slices.Contains(have, m) {
			return false
		}
	}
	return true
}

// matchingModeSets returns the access-mode sets present among the volumes
// that include every requested mode, fewest modes first (ties by name,
// where upstream's order is its map's).
func (x *volumeIndex) matchingModeSets(requested []v1.PersistentVolumeAccessMode) []string {
	var keys []string
	for _, key := range x.store.ListIndexFuncValues(accessModesIndex) {
		if containsAll(accessModesFromString(key), requested) {
			keys = append(keys, key)
		}
	}
	slices.SortFunc(keys, func(a, b string) int {
		if d := len(accessModesFromString(a)) - len(accessModesFromString(b)); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	return keys
}

// findBestMatch returns the volume pre-bound to the claim, or the smallest
// available one that satisfies it, from the narrowest access-mode set that
// has one (component-helpers' FindMatchingVolume, as upstream).
func (x *volumeIndex) findBestMatch(claim *v1.PersistentVolumeClaim, delayBinding, vac bool) (*v1.PersistentVolume, error) {
	for _, key := range x.matchingModeSets(claim.Spec.AccessModes) {
		objs, err := x.store.ByIndex(accessModesIndex, key)
		if err != nil {
			return nil, err
		}
		volumes := make([]*v1.PersistentVolume, 0, len(objs))
		for _, obj := range objs {
			volumes = append(volumes, obj.(*v1.PersistentVolume))
		}
		// Deterministic among equally small candidates: by name.
		slices.SortFunc(volumes, func(a, b *v1.PersistentVolume) int { return strings.Compare(a.Name, b.Name) })
		best, err := storagehelpers.FindMatchingVolume(claim, volumes, nil, nil, delayBinding, vac)
		if err != nil {
			return nil, err
		}
		if best != nil {
			return best, nil
		}
	}
	return nil, nil
}

func (x *volumeIndex) get(name string) (*v1.PersistentVolume, bool, error) {
	obj, found, err := x.store.GetByKey(name)
	if err != nil || !found {
		return nil, false, err
	}
	pv, ok := obj.(*v1.PersistentVolume)
	if !ok {
		return nil, false, fmt.Errorf("cannot convert object from volume cache to volume %q: %+v", name, obj)
	}
	return pv, true, nil
}

func (c *Controller) getClaim(key string) (*v1.PersistentVolumeClaim, bool, error) {
	obj, found, err := c.claims.GetByKey(key)
	if err != nil || !found {
		return nil, false, err
	}
	claim, ok := obj.(*v1.PersistentVolumeClaim)
	if !ok {
		return nil, false, fmt.Errorf("cannot convert object from claim cache to claim %q: %+v", key, obj)
	}
	return claim, true, nil
}

func (c *Controller) storeVolume(pv *v1.PersistentVolume) (bool, error) {
	return storeIfNewer(c.volumes.store, pv, "volume")
}

func (c *Controller) storeClaim(claim *v1.PersistentVolumeClaim) (bool, error) {
	return storeIfNewer(c.claims, claim, "claim")
}

// storeIfNewer puts obj into store unless the store holds a newer
// resourceVersion of it. It reports whether it stored obj.
func storeIfNewer(store cache.Store, obj any, kind string) (bool, error) {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return false, err
	}
	old, found, err := store.Get(obj)
	if err != nil {
		return false, fmt.Errorf("error finding %s %q in controller cache: %w", kind, acc.GetName(), err)
	}
	if !found {
		return true, store.Add(obj)
	}
	oldAcc, err := meta.Accessor(old)
	if err != nil {
		return false, err
	}
	rv, err := strconv.ParseInt(acc.GetResourceVersion(), 10, 64)
	if err != nil {
		return false, fmt.Errorf("error parsing ResourceVersion %q of %s %q: %w", acc.GetResourceVersion(), kind, acc.GetName(), err)
	}
	oldRV, err := strconv.ParseInt(oldAcc.GetResourceVersion(), 10, 64)
	if err != nil {
		return false, fmt.Errorf("error parsing old ResourceVersion %q of %s %q: %w", oldAcc.GetResourceVersion(), kind, acc.GetName(), err)
	}
	if oldRV > rv {
		return false, nil
	}
	return true, store.Update(obj)
}

// syncVolumeKey syncs the volume the informer has, unless the
// controller's own view of it is newer; a volume gone from the informer
// is forgotten and its claim queued.
func (c *Controller) syncVolumeKey(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	pv, err := c.volumeLister.Get(key)
	if err == nil {
		stored, err := c.storeVolume(pv)
		if err != nil || !stored {
			return err
		}
		return c.syncVolume(ctx, pv)
	}
	if !apierrors.IsNotFound(err) {
		return err
	}
	old, found, err := c.volumes.get(key)
	if err != nil || !found {
		return err
	}
	if err := c.volumes.store.Delete(old); err != nil {
		logger.Error(err, "Volume deletion encountered", "volumeName", old.Name)
	}
	logger.V(4).Info("volume deleted", "volumeName", old.Name)
	c.opTimes.done(old.Name)
	c.deleted.Delete(old.UID)
	if old.Spec.ClaimRef != nil {
		c.claimQueue.Add(claimRefKey(old.Spec.ClaimRef))
	}
	return nil
}

// syncClaimKey is syncVolumeKey for claims; a deleted claim queues its
// volume, which is then released.
func (c *Controller) syncClaimKey(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	claim, err := c.claimLister.PersistentVolumeClaims(namespace).Get(name)
	if err == nil {
		stored, err := c.storeClaim(claim)
		if err != nil || !stored {
			return err
		}
		return c.syncClaim(ctx, claim)
	}
	if !apierrors.IsNotFound(err) {
		return err
	}
	old, found, err := c.getClaim(key)
	if err != nil || !found {
		return err
	}
	if err := c.claims.Delete(old); err != nil {
		logger.Error(err, "Claim deletion encountered", "PVC", klog.KObj(old))
	}
	logger.V(4).Info("Claim deleted", "PVC", klog.KObj(old))
	c.opTimes.forget(key)
	if old.Spec.VolumeName != "" {
		c.volumeQueue.Add(old.Spec.VolumeName)
	}
	return nil
}

func claimKey(claim *v1.PersistentVolumeClaim) string {
	return claim.Namespace + "/" + claim.Name
}

func claimRefKey(ref *v1.ObjectReference) string {
	return ref.Namespace + "/" + ref.Name
}
