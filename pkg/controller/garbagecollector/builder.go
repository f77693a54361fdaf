package garbagecollector

import (
	"context"
	"reflect"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/lru"

	"github.com/kcm-dev/kcm/internal/controller"
)

type eventType int

const (
	addEvent eventType = iota
	updateEvent
	deleteEvent
)

// event is one informer (or virtual) change of an object.
type event struct {
	eventType eventType
	virtual   bool
	obj       metav1.Object
	oldObj    metav1.Object
	gvk       schema.GroupVersionKind
}

// builder owns the graph: one goroutine processes graphChanges in order and
// feeds attemptToDelete and attemptToOrphan with node UIDs.
type builder struct {
	graph           *graph
	changes         workqueue.TypedInterface[*event]
	attemptToDelete workqueue.TypedRateLimitingInterface[string]
	attemptToOrphan workqueue.TypedRateLimitingInterface[string]
	// absentOwners remembers owners verified absent.
	absentOwners *lru.Cache
	recorder     record.EventRecorder
}

// absentOwnerCacheSize bounds absentOwners. Upstream keeps 500. An
// entry's key includes the owner's UID, so it stays true forever; the bound
// is only memory (about 300 bytes an entry). With 500, deleting 300
// Deployments evicted their 600 ReplicaSets before the GC reached most of
// their 3,000 pods, and each pod's owner was fetched again: about 900 GETs
// that only answered 404.
const absentOwnerCacheSize = 4096

func newBuilder(recorder record.EventRecorder) *builder {
	return &builder{
		graph:           newGraph(),
		changes:         workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[*event]{Name: "garbage_collector_graph_changes", Clock: controller.QueueClock(nil)}),
		attemptToDelete: controller.Queue("garbage_collector_attempt_to_delete"),
		attemptToOrphan: controller.Queue("garbage_collector_attempt_to_orphan"),
		absentOwners:    lru.New(absentOwnerCacheSize),
		recorder:        recorder,
	}
}

// handlers returns the informer event handlers of a monitor for kind.
func (b *builder) handlers(kind schema.GroupVersionKind) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { b.enqueue(addEvent, obj, nil, kind) },
		UpdateFunc: func(oldObj, newObj any) {
			b.enqueue(updateEvent, newObj, oldObj, kind)
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			b.enqueue(deleteEvent, obj, nil, kind)
		},
	}
}

func (b *builder) enqueue(t eventType, obj, oldObj any, kind schema.GroupVersionKind) {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	e := &event{eventType: t, obj: acc, gvk: kind}
	if oldObj != nil {
		if old, err := meta.Accessor(oldObj); err == nil {
			e.oldObj = old
		}
	}
	b.changes.Add(e)
}

// enqueueVirtualDelete asks the builder to remove a node whose object the
// API server reports absent.
func (b *builder) enqueueVirtualDelete(ref objectReference) {
	gv, _ := schema.ParseGroupVersion(ref.APIVersion)
	b.changes.Add(&event{
		virtual:   true,
		eventType: deleteEvent,
		gvk:       gv.WithKind(ref.Kind),
		obj:       &metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name, UID: ref.UID},
	})
}

// run processes graph changes until the queue is shut down.
func (b *builder) run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	for {
		e, quit := b.changes.Get()
		if quit {
			return
		}
		b.graph.update(func() { b.process(logger, e) })
		b.changes.Done(e)
	}
}

func identityOf(e *event) objectReference {
	return objectReference{
		OwnerReference: metav1.OwnerReference{
			APIVersion: e.gvk.GroupVersion().String(),
			Kind:       e.gvk.Kind,
			UID:        e.obj.GetUID(),
			Name:       e.obj.GetName(),
		},
		Namespace: e.obj.GetNamespace(),
	}
}

// process applies one event to the graph; the write lock is held.
func (b *builder) process(logger klog.Logger, e *event) {
	obj := e.obj
	logger.V(5).Info("GraphBuilder process object", "apiVersion", e.gvk.GroupVersion().String(), "kind", e.gvk.Kind,
		"object", klog.KObj(obj), "uid", string(obj.GetUID()), "eventType", e.eventType, "virtual", e.virtual)
	existing, found := b.graph.nodes[obj.GetUID()]
	if found && !e.virtual && existing.virtual {
		existing = b.observe(logger, existing, identityOf(e))
	}
	switch {
	case e.eventType != deleteEvent && !found:
		n := newNode(identityOf(e), obj.GetOwnerReferences())
		n.beingDeleted = beingDeleted(obj)
		n.deletingDependents = n.beingDeleted && hasFinalizer(obj, metav1.FinalizerDeleteDependents)
		b.graph.write(n)
		b.addDependentToOwners(logger, n, n.owners)
		b.processTransitions(logger, e.oldObj, obj, n)
	case e.eventType != deleteEvent:
		b.updateOwners(logger, existing, obj.GetOwnerReferences())
		if beingDeleted(obj) {
			existing.beingDeleted = true
		}
		b.processTransitions(logger, e.oldObj, obj, existing)
	case !found:
		logger.V(5).Info("item doesn't exist in the graph, this shouldn't happen", "item", obj.GetUID())
	case e.virtual:
		b.virtualDelete(logger, existing, identityOf(e))
	default:
		b.removeNode(existing, identityOf(e))
	}
}

// observe marks a virtual node as observed by an informer. When the observed
// coordinates differ from those a dependent used, the dependents that
// disagree are rechecked, and flagged when their namespace cannot match.
func (b *builder) observe(logger klog.Logger, existing *node, observed objectReference) *node {
	if observed != existing.identity {
		_, mismatched := partitionDependents(existing.dependentList(), observed)
		for _, dep := range mismatched {
			if observed.Namespace != "" && dep.identity.Namespace != observed.Namespace {
				logger.V(2).Info("item references an owner but does not match namespaces", "item", dep.identity, "owner", observed)
				b.reportInvalidNamespaceOwnerRef(dep, observed.UID)
			}
			b.attemptToDelete.Add(string(dep.identity.UID))
		}
		logger.V(2).Info("replacing virtual item with observed item", "virtual", existing.identity, "observed", observed)
		existing = existing.clone()
		existing.identity = observed
		b.graph.write(existing)
	}
	existing.virtual = false
	return existing
}

// updateOwners applies a change of n's ownerReferences to the edges.
func (b *builder) updateOwners(logger klog.Logger, n *node, owners []metav1.OwnerReference) {
	added, removed, changed := referencesDiffs(n.owners, owners)
	if len(added) == 0 && len(removed) == 0 && len(changed) == 0 {
		return
	}
	b.addUnblockedOwnersToDeleteQueue(logger, removed, changed)
	n.owners = owners
	b.addDependentToOwners(logger, n, added)
	for _, o := range removed {
		if owner, ok := b.graph.nodes[o.UID]; ok {
			delete(owner.dependents, n)
		}
	}
}

// addDependentToOwners adds n to its owners' dependents, creating virtual
// nodes (to be verified by attemptToDelete) for owners not in the graph, and
// queues n itself when a reference may be invalid.
func (b *builder) addDependentToOwners(logger klog.Logger, n *node, owners []metav1.OwnerReference) {
	suspicious := false
	for _, ref := range owners {
		owner, ok := b.graph.nodes[ref.UID]
		if !ok {
			owner = newNode(objectReference{OwnerReference: coordinates(ref), Namespace: n.identity.Namespace}, nil)
			owner.virtual = true
			logger.V(5).Info("add virtual item", "identity", owner.identity)
			b.graph.write(owner)
		}
		owner.dependents[n] = struct{}{}
		if !ok {
			b.attemptToDelete.Add(string(owner.identity.UID))
			continue
		}
		if !suspicious && b.invalidReference(logger, n, owner, ref) {
			suspicious = true
		}
	}
	if suspicious {
		b.attemptToDelete.Add(string(n.identity.UID))
	}
}

// invalidReference reports whether n's reference ref to the known owner
// may be wrong, and records OwnerRefInvalidNamespace when the observed
// owner is in another namespace.
func (b *builder) invalidReference(logger klog.Logger, n, owner *node, ref metav1.OwnerReference) bool {
	ownerNamespaced := owner.identity.Namespace != ""
	switch {
	case ownerNamespaced && owner.identity.Namespace != n.identity.Namespace:
		if !owner.virtual {
			logger.V(2).Info("item references an owner but does not match namespaces", "item", n.identity, "owner", owner.identity)
			b.reportInvalidNamespaceOwnerRef(n, ref.UID)
		}
		return true
	case !matchesCoordinates(ref, owner.identity.OwnerReference):
		if !owner.virtual {
			logger.V(2).Info("item references an owner with coordinates that do not match the observed identity", "item", n.identity, "owner", owner.identity)
		}
		return true
	case !ownerNamespaced && owner.identity.Namespace != n.identity.Namespace && owner.virtual:
		return true
	}
	return false
}

// reportInvalidNamespaceOwnerRef records upstream's Warning Event on the
// dependent n.
func (b *builder) reportInvalidNamespaceOwnerRef(n *node, ownerUID types.UID) {
	i := slices.IndexFunc(n.owners, func(o metav1.OwnerReference) bool { return o.UID == ownerUID })
	if i < 0 || b.recorder == nil {
		return
	}
	ref := &v1.ObjectReference{Kind: n.identity.Kind, APIVersion: n.identity.APIVersion,
		Namespace: n.identity.Namespace, Name: n.identity.Name, UID: n.identity.UID}
	invalid := objectReference{OwnerReference: coordinates(n.owners[i]), Namespace: n.identity.Namespace}
	b.recorder.Eventf(ref, v1.EventTypeWarning, "OwnerRefInvalidNamespace",
		"ownerRef %s does not exist in namespace %q", invalid, n.identity.Namespace)
}

// virtualDelete handles the verified absence of deleted: a virtual node is
// removed unless some dependents refer to its UID with other coordinates,
// in which case only the dependents that matched are rechecked.
func (b *builder) virtualDelete(logger klog.Logger, existing *node, deleted objectReference) {
	matching, nonmatching := partitionDependents(existing.dependentList(), deleted)
	if !existing.virtual {
		if existing.identity == deleted {
			b.removeNode(existing, deleted)
			return
		}
		b.markAbsent(matching, deleted)
		return
	}
	if len(nonmatching) == 0 {
		b.removeNode(existing, deleted)
		return
	}
	b.markAbsent(matching, deleted)
	if existing.identity != deleted {
		return
	}
	if alt := alternateOwnerIdentity(nonmatching, deleted); alt != nil {
		replacement := existing.clone()
		replacement.identity = *alt
		b.graph.write(replacement)
		logger.V(5).Info("replacing virtual item with an alternate identity", "old", deleted, "new", *alt)
		b.attemptToDelete.AddRateLimited(string(replacement.identity.UID))
	}
}

func (b *builder) markAbsent(matching []*node, deleted objectReference) {
	if len(matching) == 0 {
		return
	}
	b.absentOwners.Add(deleted, nil)
	for _, dep := range matching {
		b.attemptToDelete.Add(string(dep.identity.UID))
	}
}

// removeNode drops n, queues its dependents for collection and its owners
// that wait for their dependents.
func (b *builder) removeNode(n *node, id objectReference) {
	b.graph.remove(n)
	if len(n.dependents) > 0 {
		b.absentOwners.Add(id, nil)
	}
	for dep := range n.dependents {
		b.attemptToDelete.Add(string(dep.identity.UID))
	}
	for _, o := range n.owners {
		if owner, ok := b.graph.nodes[o.UID]; ok && owner.deletingDependents {
			b.attemptToDelete.Add(string(owner.identity.UID))
		}
	}
}

// addUnblockedOwnersToDeleteQueue queues owners a blocking reference to
// which was removed or made non-blocking.
func (b *builder) addUnblockedOwnersToDeleteQueue(logger klog.Logger, removed []metav1.OwnerReference, changed [][2]metav1.OwnerReference) {
	var unblocked []types.UID
	for _, ref := range removed {
		if isBlocking(ref) {
			unblocked = append(unblocked, ref.UID)
		}
	}
	for _, c := range changed {
		if isBlocking(c[0]) && !isBlocking(c[1]) {
			unblocked = append(unblocked, c[1].UID)
		}
	}
	for _, uid := range unblocked {
		if _, ok := b.graph.nodes[uid]; !ok {
			logger.V(5).Info("cannot find uid in uidToNode", "uid", uid)
			continue
		}
		b.attemptToDelete.Add(string(uid))
	}
}

// processTransitions queues an owner whose deletion just started with the
// orphan or the foregroundDeletion finalizer.
func (b *builder) processTransitions(logger klog.Logger, oldObj, obj metav1.Object, n *node) {
	if deletionStartsWithFinalizer(oldObj, obj, metav1.FinalizerOrphanDependents) {
		logger.V(5).Info("add item to attemptToOrphan", "item", n.identity)
		b.attemptToOrphan.Add(string(n.identity.UID))
		return
	}
	if deletionStartsWithFinalizer(oldObj, obj, metav1.FinalizerDeleteDependents) {
		logger.V(2).Info("add item to attemptToDelete, because it's waiting for its dependents to be deleted", "item", n.identity)
		n.deletingDependents = true
		for dep := range n.dependents {
			b.attemptToDelete.Add(string(dep.identity.UID))
		}
		b.attemptToDelete.Add(string(n.identity.UID))
	}
}

func isBlocking(ref metav1.OwnerReference) bool {
	return ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion
}

func beingDeleted(obj metav1.Object) bool { return obj.GetDeletionTimestamp() != nil }

func hasFinalizer(obj metav1.Object, f string) bool { return slices.Contains(obj.GetFinalizers(), f) }

// deletionStartsWithFinalizer reports whether obj is being deleted with
// finalizer f and oldObj was not.
func deletionStartsWithFinalizer(oldObj, obj metav1.Object, f string) bool {
	if !beingDeleted(obj) || !hasFinalizer(obj, f) {
		return false
	}
	return oldObj == nil || !beingDeleted(oldObj) || !hasFinalizer(oldObj, f)
}

// referencesDiffs compares two ownerReference lists by UID.
func referencesDiffs(old, cur []metav1.OwnerReference) (added, removed []metav1.OwnerReference, changed [][2]metav1.OwnerReference) {
	oldByUID := make(map[types.UID]metav1.OwnerReference, len(old))
	for _, r := range old {
		oldByUID[r.UID] = r
	}
	for _, r := range cur {
		o, ok := oldByUID[r.UID]
		if !ok {
			added = append(added, r)
			continue
		}
		if !reflect.DeepEqual(o, r) {
			changed = append(changed, [2]metav1.OwnerReference{o, r})
		}
		delete(oldByUID, r.UID)
	}
	for _, r := range old {
		if _, ok := oldByUID[r.UID]; ok {
			removed = append(removed, r)
		}
	}
	return added, removed, changed
}

// partitionDependents splits dependents into those whose reference to
// owner.UID matches owner's coordinates and those that do not (a dependent
// may be in both).
func partitionDependents(deps []*node, owner objectReference) (matching, nonmatching []*node) {
	for _, dep := range deps {
		match, mismatch := false, false
		if owner.Namespace != "" && owner.Namespace != dep.identity.Namespace {
			mismatch = true
		} else {
			for _, ref := range dep.owners {
				if ref.UID != owner.UID {
					continue
				}
				if matchesCoordinates(ref, owner.OwnerReference) {
					match = true
				} else {
					mismatch = true
				}
			}
		}
		if match {
			matching = append(matching, dep)
		}
		if mismatch {
			nonmatching = append(nonmatching, dep)
		}
	}
	return matching, nonmatching
}

func referenceLess(a, b objectReference) bool {
	switch {
	case a.Kind != b.Kind:
		return a.Kind < b.Kind
	case a.APIVersion != b.APIVersion:
		return a.APIVersion < b.APIVersion
	case a.Namespace != b.Namespace:
		return a.Namespace < b.Namespace
	case a.Name != b.Name:
		return a.Name < b.Name
	}
	return a.UID < b.UID
}

// alternateOwnerIdentity returns the next other identity (after absent, in
// referenceLess order, wrapping around) under which deps refer to
// absent.UID, or nil.
func alternateOwnerIdentity(deps []*node, absent objectReference) *objectReference {
	clusterScoped := absent.Namespace == ""
	seen := map[objectReference]bool{absent: true}
	var first, following *objectReference
	for _, dep := range deps {
		for _, ref := range dep.owners {
			if ref.UID != absent.UID {
				continue
			}
			if matchesCoordinates(ref, absent.OwnerReference) && (clusterScoped || absent.Namespace == dep.identity.Namespace) {
				continue
			}
			r := objectReference{OwnerReference: coordinates(ref), Namespace: dep.identity.Namespace}
			if clusterScoped && r.APIVersion == absent.APIVersion && r.Kind == absent.Kind {
				r.Namespace = ""
			}
			if seen[r] {
				continue
			}
			seen[r] = true
			if first == nil || referenceLess(r, *first) {
				first = &r
			}
			if referenceLess(absent, r) && (following == nil || referenceLess(r, *following)) {
				following = &r
			}
		}
	}
	if following != nil {
		return following
	}
	return first
}
