package garbagecollector

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

var (
	// errVirtualDelete: the object is gone and a virtual delete event was
	// queued for the builder; nothing to retry.
	errVirtualDelete = errors.New("enqueued virtual delete event")
	// errNamespacedOwnerOfClusterScoped will not resolve on retry.
	errNamespacedOwnerOfClusterScoped = errors.New("cluster-scoped objects cannot refer to namespaced owners")
	// errNotObserved requeues a virtual node that exists until an informer
	// observes it (issue 56121).
	errNotObserved = errors.New("item hasn't been observed via informer yet")
)

// restMappingError: the kind is not (yet) known to the RESTMapper.
type restMappingError struct{ kind, version string }

func (r *restMappingError) Error() string {
	return fmt.Sprintf("unable to get REST mapping for %s/%s.", r.version, r.kind)
}

// attemptToDelete is the Sync of the attemptToDelete workers.
func (c *Controller) attemptToDelete(ctx context.Context, uid string) error {
	item, ok := c.builder.graph.snapshotOf(types.UID(uid))
	if !ok {
		klog.FromContext(ctx).V(5).Info("item no longer in the graph, skipping attemptToDeleteItem", "uid", uid)
		return nil
	}
	err := c.attemptToDeleteItem(ctx, item)
	switch {
	case errors.Is(err, errVirtualDelete), errors.Is(err, errNamespacedOwnerOfClusterScoped):
		return nil
	case err != nil:
		return err
	}
	if now, ok := c.builder.graph.snapshotOf(types.UID(uid)); ok && now.virtual {
		return errNotObserved
	}
	return nil
}

// action is what attemptToDeleteItem decided for an object whose owners
// were classified.
type action struct {
	// removeRefs are owner references to remove (the object stays).
	removeRefs []types.UID
	// unblock makes the object's references non-blocking before deleting
	// it, to break a possible foreground cycle.
	unblock bool
	// policy, when set, deletes the object with this propagation.
	policy *metav1.DeletionPropagation
}

// decide is upstream's choice for an object given its live finalizers and
// its owners classified as solid (exist), dangling (absent) or waiting (in
// foreground deletion).
func decide(item snapshot, finalizers []string, solid, dangling, waiting []metav1.OwnerReference) action {
	switch {
	case len(solid) != 0:
		if len(dangling) == 0 && len(waiting) == 0 {
			return action{}
		}
		return action{removeRefs: append(uids(dangling), uids(waiting)...)}
	case len(waiting) != 0 && len(item.dependents) != 0:
		return action{unblock: item.dependentsDeletingDependents, policy: ptr.To(metav1.DeletePropagationForeground)}
	}
	policy := metav1.DeletePropagationBackground
	obj := &metav1.ObjectMeta{Finalizers: finalizers}
	switch {
	case hasFinalizer(obj, metav1.FinalizerOrphanDependents):
		policy = metav1.DeletePropagationOrphan
	case hasFinalizer(obj, metav1.FinalizerDeleteDependents):
		policy = metav1.DeletePropagationForeground
	}
	return action{policy: &policy}
}

func uids(refs []metav1.OwnerReference) []types.UID {
	var out []types.UID
	for _, r := range refs {
		out = append(out, r.UID)
	}
	return out
}

// attemptToDeleteItem reads the live object and deletes it if all its
// owners are gone, or finishes the foreground deletion of an owner.
func (c *Controller) attemptToDeleteItem(ctx context.Context, item snapshot) error {
	logger := klog.FromContext(ctx)
	logger.V(2).Info("Processing item", "item", item.identity, "virtual", item.virtual)
	if item.beingDeleted && !item.deletingDependents {
		return nil
	}
	if done, err := c.deleteFromCache(ctx, item); done {
		return err
	}
	latest, err := c.getObject(ctx, item.identity)
	if apierrors.IsNotFound(err) || (err == nil && latest.UID != item.identity.UID) {
		logger.V(5).Info("item not found, generating a virtual delete event", "item", item.identity)
		c.builder.enqueueVirtualDelete(item.identity)
		return errVirtualDelete
	}
	if err != nil {
		return err
	}
	if item.deletingDependents {
		return c.processDeletingDependents(ctx, item)
	}
	if len(latest.OwnerReferences) == 0 {
		logger.V(2).Info("item doesn't have an owner, continue on next item", "item", item.identity)
		return nil
	}
	solid, dangling, waiting, err := c.classifyReferences(ctx, item, latest.OwnerReferences)
	if err != nil {
		return err
	}
	logger.V(5).Info("classify item's references", "item", item.identity, "solid", solid, "dangling", dangling, "waitingForDependentsDeletion", waiting)
	a := decide(item, latest.Finalizers, solid, dangling, waiting)
	return c.apply(ctx, item, latest, a)
}

func (c *Controller) apply(ctx context.Context, item snapshot, latest *metav1.PartialObjectMetadata, a action) error {
	logger := klog.FromContext(ctx)
	if len(a.removeRefs) > 0 {
		logger.V(2).Info("remove dangling references and waiting references for item", "item", item.identity, "owners", a.removeRefs)
		return c.removeOwnerRefs(ctx, item.identity, a.removeRefs)
	}
	if a.policy == nil {
		logger.V(2).Info("item has at least one existing owner, will not garbage collect", "item", item.identity)
		return nil
	}
	if a.unblock {
		logger.V(2).Info("processing item, some of its owners and its dependent have FinalizerDeletingDependents, to prevent potential cycle, its ownerReferences are going to be modified to be non-blocking, then the item is going to be deleted with Foreground", "item", item.identity)
		if err := c.unblockOwnerRefs(ctx, item.identity, item.owners); err != nil {
			return err
		}
	}
	logger.V(2).Info("Deleting item", "item", item.identity, "propagationPolicy", *a.policy)
	err := c.deleteObject(ctx, item.identity, latest.ResourceVersion, latest.OwnerReferences, a.policy)
	if apierrors.IsNotFound(err) {
		c.builder.enqueueVirtualDelete(item.identity)
		return errVirtualDelete
	}
	return err
}

// processDeletingDependents removes the foregroundDeletion finalizer once
// no dependent blocks the owner, and otherwise queues the blocking ones.
func (c *Controller) processDeletingDependents(ctx context.Context, item snapshot) error {
	logger := klog.FromContext(ctx)
	if item.blockingCount == 0 {
		logger.V(2).Info("remove DeleteDependents finalizer for item", "item", item.identity)
		return c.removeFinalizer(ctx, item.identity, metav1.FinalizerDeleteDependents)
	}
	for _, uid := range item.blocking {
		logger.V(2).Info("adding dependent to attemptToDelete, because its owner is deletingDependents", "item", item.identity, "dependent", uid)
		c.builder.attemptToDelete.Add(string(uid))
	}
	return nil
}

// classifyReferences sorts refs into solid, dangling and
// waitingForDependentsDeletion by reading each owner live.
func (c *Controller) classifyReferences(ctx context.Context, item snapshot, refs []metav1.OwnerReference) (solid, dangling, waiting []metav1.OwnerReference, err error) {
	for _, ref := range refs {
		absent, owner, err := c.isDangling(ctx, ref, item)
		if err != nil {
			return nil, nil, nil, err
		}
		switch {
		case absent:
			dangling = append(dangling, ref)
		case owner.DeletionTimestamp != nil && hasFinalizer(owner, metav1.FinalizerDeleteDependents):
			waiting = append(waiting, ref)
		default:
			solid = append(solid, ref)
		}
	}
	return solid, dangling, waiting, nil
}

// isDangling reports whether ref's owner is absent, by the absent-owner
// cache or a live GET of the owner compared by UID.
func (c *Controller) isDangling(ctx context.Context, ref metav1.OwnerReference, item snapshot) (bool, *metav1.PartialObjectMetadata, error) {
	logger := klog.FromContext(ctx)
	key := objectReference{OwnerReference: coordinates(ref)}
	if _, ok := c.builder.absentOwners.Get(key); ok {
		logger.V(5).Info("according to the absentOwnerCache, item's owner does not exist", "item", item.identity, "owner", ref)
		return true, nil, nil
	}
	key.Namespace = item.identity.Namespace
	if _, ok := c.builder.absentOwners.Get(key); ok {
		logger.V(5).Info("according to the absentOwnerCache, item's owner does not exist in namespace", "item", item.identity, "owner", ref)
		return true, nil, nil
	}
	resource, namespaced, err := c.apiResource(ref.APIVersion, ref.Kind)
	if err != nil {
		return false, nil, err
	}
	if !namespaced {
		key.Namespace = ""
	}
	if item.identity.Namespace == "" && namespaced {
		logger.V(2).Info("item is cluster-scoped, but refers to a namespaced owner", "item", item.identity, "owner", ref)
		return false, nil, errNamespacedOwnerOfClusterScoped
	}
	owner, err := c.metadata.Resource(resource).Namespace(namespaceFor(namespaced, item.identity.Namespace)).Get(ctx, ref.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		c.builder.absentOwners.Add(key, nil)
		logger.V(5).Info("item's owner is not found", "item", item.identity, "owner", ref)
		return true, nil, nil
	case err != nil:
		return false, nil, err
	case owner.UID != ref.UID:
		c.builder.absentOwners.Add(key, nil)
		logger.V(5).Info("item's owner is not found, UID mismatch", "item", item.identity, "owner", ref)
		return true, nil, nil
	}
	return false, owner, nil
}

func namespaceFor(namespaced bool, ns string) string {
	if namespaced {
		return ns
	}
	return ""
}

// apiResource maps apiVersion and kind to a resource and its scope.
func (c *Controller) apiResource(apiVersion, kind string) (schema.GroupVersionResource, bool, error) {
	gvk := schema.FromAPIVersionAndKind(apiVersion, kind)
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return schema.GroupVersionResource{}, false, &restMappingError{kind: kind, version: apiVersion}
	}
	return m.Resource, m.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

func (c *Controller) getObject(ctx context.Context, id objectReference) (*metav1.PartialObjectMetadata, error) {
	resource, namespaced, err := c.apiResource(id.APIVersion, id.Kind)
	if err != nil {
		return nil, err
	}
	if namespaced && id.Namespace == "" {
		return nil, errNamespacedOwnerOfClusterScoped
	}
	return c.metadata.Resource(resource).Namespace(namespaceFor(namespaced, id.Namespace)).Get(ctx, id.Name, metav1.GetOptions{})
}

func (c *Controller) patchObject(ctx context.Context, id objectReference, patch []byte, pt types.PatchType) (*metav1.PartialObjectMetadata, error) {
	resource, namespaced, err := c.apiResource(id.APIVersion, id.Kind)
	if err != nil {
		return nil, err
	}
	return c.metadata.Resource(resource).Namespace(namespaceFor(namespaced, id.Namespace)).Patch(ctx, id.Name, pt, patch, metav1.PatchOptions{})
}

// deleteObject deletes id with UID and resourceVersion preconditions; on a
// conflict caused by a change other than of the ownerReferences it retries
// without the resourceVersion.
func (c *Controller) deleteObject(ctx context.Context, id objectReference, rv string, owners []metav1.OwnerReference, policy *metav1.DeletionPropagation) error {
	resource, namespaced, err := c.apiResource(id.APIVersion, id.Kind)
	if err != nil {
		return err
	}
	client := c.metadata.Resource(resource).Namespace(namespaceFor(namespaced, id.Namespace))
	err = c.deleteWithPreconditions(ctx, id, rv, policy)
	if apierrors.IsConflict(err) && rv != "" {
		live, liveErr := client.Get(ctx, id.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(liveErr) {
			return liveErr
		}
		if liveErr == nil && live.UID == id.UID && live.ResourceVersion != rv && reflect.DeepEqual(live.OwnerReferences, owners) {
			return c.deleteObject(ctx, id, "", nil, policy)
		}
	}
	return err
}

// deleteWithPreconditions deletes id if it still has id's UID and, unless
// rv is empty, resourceVersion rv.
func (c *Controller) deleteWithPreconditions(ctx context.Context, id objectReference, rv string, policy *metav1.DeletionPropagation) error {
	resource, namespaced, err := c.apiResource(id.APIVersion, id.Kind)
	if err != nil {
		return err
	}
	uid := id.UID
	pre := metav1.Preconditions{UID: &uid}
	if rv != "" {
		pre.ResourceVersion = &rv
	}
	return c.metadata.Resource(resource).Namespace(namespaceFor(namespaced, id.Namespace)).
		Delete(ctx, id.Name, metav1.DeleteOptions{Preconditions: &pre, PropagationPolicy: policy})
}
