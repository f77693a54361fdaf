package expectations

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// SyncedVersioner is the part of an informer store Consistency reads: the
// newest resourceVersion the store has caught up with
// (cache.Store.LastStoreSyncResourceVersion).
type SyncedVersioner interface {
	LastStoreSyncResourceVersion() string
}

// StaleCacheError says an informer has not yet seen a write the controller
// made for an owner.
type StaleCacheError struct {
	Resource schema.GroupResource
	// Read is the store's resourceVersion, Wrote the one written.
	Read, Wrote string
}

// ExpectedRetry marks the error as a normal requeue for the worker loop
// (controller.ExpectedRetry): the informer is about to catch up.
func (*StaleCacheError) ExpectedRetry() {}

func (e *StaleCacheError) Error() string {
	return fmt.Sprintf("read version: %s is not as new as written version: %s for group resource %s", e.Read, e.Wrote, e.Resource.String())
}

// Consistency remembers, per owner, the newest resourceVersion the
// controller wrote for each resource, until the informers have seen them.
// A nil *Consistency records nothing and is always ready, which is how a
// controller runs with the check disabled.
type Consistency struct {
	stores map[schema.GroupResource]SyncedVersioner

	mu     sync.Mutex
	writes map[types.NamespacedName]*ownerWrites
}

type ownerWrites struct {
	uid      types.UID
	versions map[schema.GroupResource]string
}

// NewConsistency returns a Consistency that checks writes against stores.
// Writes to resources without a store are never waited for.
func NewConsistency(stores map[schema.GroupResource]SyncedVersioner) *Consistency {
	return &Consistency{stores: stores, writes: map[types.NamespacedName]*ownerWrites{}}
}

// WroteAt records that the controller wrote resource at rv on behalf of the
// owner with uid. Only the newest version per resource is kept; a record of
// an owner with another uid (an earlier object of the same name) is
// replaced.
func (c *Consistency) WroteAt(owner types.NamespacedName, uid types.UID, resource schema.GroupResource, rv string) {
	if c == nil || rv == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.writes[owner]
	if w == nil || w.uid != uid {
		w = &ownerWrites{uid: uid, versions: map[schema.GroupResource]string{}}
		c.writes[owner] = w
	}
	if old, ok := w.versions[resource]; ok {
		if cmp, err := resourceversion.CompareResourceVersion(old, rv); err == nil && cmp >= 0 {
			return
		}
	}
	w.versions[resource] = rv
}

// Clear forgets the writes recorded for owner; with a uid, only if they
// were recorded for that uid.
func (c *Consistency) Clear(owner types.NamespacedName, uid types.UID) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if w := c.writes[owner]; w != nil && (uid == "" || w.uid == uid) {
		delete(c.writes, owner)
	}
}

// EnsureReady returns a *StaleCacheError while some store has not seen a
// write recorded for owner. Once all have, it forgets owner's writes and
// returns nil. Stores that know no version, and versions that cannot be
// compared, do not hold a sync back.
func (c *Consistency) EnsureReady(owner types.NamespacedName) error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.writes[owner]
	if w == nil {
		return nil
	}
	for gr, wrote := range w.versions {
		store := c.stores[gr]
		if store == nil {
			continue
		}
		read := store.LastStoreSyncResourceVersion()
		if read == "" {
			continue
		}
		if cmp, err := resourceversion.CompareResourceVersion(wrote, read); err == nil && cmp > 0 {
			return &StaleCacheError{Resource: gr, Read: read, Wrote: wrote}
		}
	}
	delete(c.writes, owner)
	return nil
}
