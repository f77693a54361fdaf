package garbagecollector

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// Upstream reads every object it may delete live (a GET) before it decides.
// The object is nearly always in its monitor's informer already, and the
// deletion carries the object's resourceVersion as a precondition, so the
// GET only tells whether the cache is behind; the precondition tells that
// too. deleteFromCache decides from the cached object, as upstream would
// from a live one, and deletes it with the cached resourceVersion: if the
// object changed since (references, finalizers, anything), the API server
// refuses with a conflict and attemptToDeleteItem takes upstream's path,
// GET included. Deleting a Deployment's 6,000 pods costs 6,000 requests
// instead of 12,000.

// deleteFromCache deletes item from its cached object when all its owners
// are gone or waiting for it. It reports done=false when upstream's live
// path must decide: the object is not cached (or is virtual, or already
// being deleted), keeps an owner, needs its references changed, or changed
// since it was cached.
func (c *Controller) deleteFromCache(ctx context.Context, item snapshot) (done bool, err error) {
	if item.virtual || item.deletingDependents {
		return false, nil
	}
	cached, ok := c.cachedObject(item.identity)
	if !ok || cached.GetDeletionTimestamp() != nil || len(cached.GetOwnerReferences()) == 0 {
		return false, nil
	}
	solid, dangling, waiting, err := c.classifyReferences(ctx, item, cached.GetOwnerReferences())
	if err != nil {
		return true, err
	}
	a := decide(item, cached.GetFinalizers(), solid, dangling, waiting)
	if a.policy == nil || a.unblock || len(a.removeRefs) > 0 {
		return false, nil
	}
	logger := klog.FromContext(ctx)
	logger.V(2).Info("Deleting item", "item", item.identity, "propagationPolicy", *a.policy)
	err = c.deleteWithPreconditions(ctx, item.identity, cached.GetResourceVersion(), a.policy)
	switch {
	case apierrors.IsConflict(err):
		logger.V(4).Info("item changed since it was cached, reading it live", "item", item.identity)
		return false, nil
	case apierrors.IsNotFound(err):
		c.builder.enqueueVirtualDelete(item.identity)
		return true, errVirtualDelete
	}
	return true, err
}

// cachedObject returns id's object from the informer of its monitor, if
// that has synced and holds an object of id's UID. The object is the
// cache's: read only.
func (c *Controller) cachedObject(id objectReference) (metav1.Object, bool) {
	resource, namespaced, err := c.apiResource(id.APIVersion, id.Kind)
	if err != nil || (namespaced && id.Namespace == "") {
		return nil, false
	}
	store, ok := c.store(resource.GroupResource())
	if !ok {
		return nil, false
	}
	key := id.Name
	if namespaced {
		key = id.Namespace + "/" + id.Name
	}
	obj, exists, err := store.GetByKey(key)
	if err != nil || !exists {
		return nil, false
	}
	m, err := meta.Accessor(obj)
	if err != nil || m.GetUID() != id.UID {
		return nil, false
	}
	return m, true
}

// monitorStore is Controller.store: the store of gr's monitor, once its
// informer has synced.
func (c *Controller) monitorStore(gr schema.GroupResource) (cache.Store, bool) {
	inf, synced, ok := c.monitors.Informer(gr)
	if !ok || !synced {
		return nil, false
	}
	return inf.GetStore(), true
}
