package garbagecollector

import (
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// objectReference identifies an object by its owner-reference coordinates
// (apiVersion, kind, name, uid) plus its namespace.
type objectReference struct {
	metav1.OwnerReference
	Namespace string
}

// String is upstream's rendering, used in Event messages.
func (s objectReference) String() string {
	return fmt.Sprintf("[%s/%s, namespace: %s, name: %s, uid: %s]", s.APIVersion, s.Kind, s.Namespace, s.Name, s.UID)
}

// coordinates keeps only the fields of ref that identify the owner.
func coordinates(ref metav1.OwnerReference) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, UID: ref.UID}
}

func matchesCoordinates(a, b metav1.OwnerReference) bool {
	return coordinates(a) == coordinates(b)
}

// node is one object in the graph. Its fields are written only by the
// builder goroutine, under graph.mu; workers read them under the read lock
// through the graph's accessors.
type node struct {
	identity   objectReference
	owners     []metav1.OwnerReference
	dependents map[*node]struct{}
	// virtual nodes stand for owners referenced but not (yet) observed by
	// an informer.
	virtual            bool
	beingDeleted       bool
	deletingDependents bool
}

func newNode(id objectReference, owners []metav1.OwnerReference) *node {
	return &node{identity: id, owners: owners, dependents: map[*node]struct{}{}}
}

// clone copies n with the same dependents (a new map) and owners.
func (n *node) clone() *node {
	c := *n
	c.dependents = make(map[*node]struct{}, len(n.dependents))
	for d := range n.dependents {
		c.dependents[d] = struct{}{}
	}
	return &c
}

func (n *node) dependentList() []*node {
	out := make([]*node, 0, len(n.dependents))
	for d := range n.dependents {
		out = append(out, d)
	}
	return out
}

// blockingDependents are the dependents whose reference to n has
// blockOwnerDeletion=true.
func (n *node) blockingDependents() []*node {
	var out []*node
	for d := range n.dependents {
		for _, o := range d.owners {
			if o.UID == n.identity.UID && o.BlockOwnerDeletion != nil && *o.BlockOwnerDeletion {
				out = append(out, d)
			}
		}
	}
	return out
}

// snapshot is an immutable copy of a node that workers decide on.
type snapshot struct {
	identity           objectReference
	owners             []metav1.OwnerReference
	virtual            bool
	beingDeleted       bool
	deletingDependents bool
	dependents         []objectReference
	// dependentsDeletingDependents reports whether any dependent is itself
	// waiting for its dependents (the cycle check of upstream).
	dependentsDeletingDependents bool
	// blocking are the dependents that block n's deletion and are not
	// deleting their own dependents.
	blocking      []types.UID
	blockingCount int
}

// graph maps UIDs to nodes. Only the builder goroutine writes it.
type graph struct {
	mu    sync.RWMutex
	nodes map[types.UID]*node
}

func newGraph() *graph { return &graph{nodes: map[types.UID]*node{}} }

// get returns the node of uid; callers in the builder hold no lock since
// they are the only writer, readers use snapshotOf.
func (g *graph) get(uid types.UID) (*node, bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	n, ok := g.nodes[uid]
	return n, ok
}

// has reports whether uid is in the graph (used by tests and health).
func (g *graph) has(uid types.UID) bool {
	_, ok := g.get(uid)
	return ok
}

// update runs f with the write lock held.
func (g *graph) update(f func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f()
}

// snapshotOf copies the state of the node of uid.
func (g *graph) snapshotOf(uid types.UID) (snapshot, bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	n, ok := g.nodes[uid]
	if !ok {
		return snapshot{}, false
	}
	s := snapshot{
		identity:           n.identity,
		owners:             append([]metav1.OwnerReference(nil), n.owners...),
		virtual:            n.virtual,
		beingDeleted:       n.beingDeleted,
		deletingDependents: n.deletingDependents,
	}
	for d := range n.dependents {
		s.dependents = append(s.dependents, d.identity)
		if d.deletingDependents {
			s.dependentsDeletingDependents = true
		}
	}
	for _, d := range n.blockingDependents() {
		s.blockingCount++
		if !d.deletingDependents {
			s.blocking = append(s.blocking, d.identity.UID)
		}
	}
	return s, true
}

// Methods below are called by the builder with the write lock held.

func (g *graph) write(n *node) { g.nodes[n.identity.UID] = n }

func (g *graph) remove(n *node) {
	delete(g.nodes, n.identity.UID)
	for _, o := range n.owners {
		if owner, ok := g.nodes[o.UID]; ok {
			delete(owner.dependents, n)
		}
	}
}
