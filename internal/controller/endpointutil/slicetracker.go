package endpointutil

import (
	"sync"

	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
)

// deletionExpected marks a slice the controller deleted.
const deletionExpected = -1

// SliceTracker remembers, per Service, the generation of every
// EndpointSlice the controller created or updated, and the slices it
// deleted, so that a sync never acts on an informer cache older than the
// controller's own writes (upstream's EndpointSliceTracker). Slices are
// grouped by their kubernetes.io/service-name label.
type SliceTracker struct {
	mu        sync.Mutex
	byService map[types.NamespacedName]map[types.UID]int64
}

// NewSliceTracker returns an empty tracker.
func NewSliceTracker() *SliceTracker {
	return &SliceTracker{byService: map[types.NamespacedName]map[types.UID]int64{}}
}

func serviceOf(slice *discovery.EndpointSlice) types.NamespacedName {
	return types.NamespacedName{Namespace: slice.Namespace, Name: slice.Labels[discovery.LabelServiceName]}
}

// Has reports whether the slice is tracked.
func (t *SliceTracker) Has(slice *discovery.EndpointSlice) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.byService[serviceOf(slice)][slice.UID]
	return ok
}

// ShouldSync reports whether an informer event for the slice is news to
// the controller: the slice is untracked or newer than what it wrote.
func (t *SliceTracker) ShouldSync(slice *discovery.EndpointSlice) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	g, ok := t.byService[serviceOf(slice)][slice.UID]
	return !ok || slice.Generation > g
}

// Stale reports whether the cached slices of a Service lag behind the
// controller's writes: one is older than written, one it deleted is still
// there, or one it wrote is missing.
func (t *SliceTracker) Stale(namespace, name string, slices []*discovery.EndpointSlice) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	gens, ok := t.byService[types.NamespacedName{Namespace: namespace, Name: name}]
	if !ok {
		return false
	}
	seen := make(map[types.UID]bool, len(slices))
	for _, s := range slices {
		seen[s.UID] = true
		if g, ok := gens[s.UID]; ok && (g == deletionExpected || g > s.Generation) {
			return true
		}
	}
	for uid, g := range gens {
		if g != deletionExpected && !seen[uid] {
			return true
		}
	}
	return false
}

// Update records a slice as written at its generation.
func (t *SliceTracker) Update(slice *discovery.EndpointSlice) {
	t.set(slice, slice.Generation)
}

// ExpectDeletion records a slice as deleted by the controller.
func (t *SliceTracker) ExpectDeletion(slice *discovery.EndpointSlice) {
	t.set(slice, deletionExpected)
}

func (t *SliceTracker) set(slice *discovery.EndpointSlice, g int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	nn := serviceOf(slice)
	gens := t.byService[nn]
	if gens == nil {
		gens = map[types.UID]int64{}
		t.byService[nn] = gens
	}
	gens[slice.UID] = g
}

// HandleDeletion forgets a deleted slice and reports whether the
// controller expected the deletion (an untracked slice counts as
// expected).
func (t *SliceTracker) HandleDeletion(slice *discovery.EndpointSlice) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	gens, ok := t.byService[serviceOf(slice)]
	if !ok {
		return true
	}
	g, tracked := gens[slice.UID]
	delete(gens, slice.UID)
	return !tracked || g == deletionExpected
}

// DeleteService forgets a Service's slices.
func (t *SliceTracker) DeleteService(namespace, name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.byService, types.NamespacedName{Namespace: namespace, Name: name})
}
