package resourcemonitor

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// monitor is a controller's event handler on the shared informer of one
// resource.
type monitor struct {
	informer cache.SharedIndexInformer
	reg      cache.ResourceEventHandlerRegistration
}

// Monitors keeps one monitor per resource of the set last passed to Sync,
// less the ignored ones. Set the fields before the first call; they are not
// changed afterwards.
type Monitors struct {
	// Factory provides the metadata-only informers.
	Factory metadatainformer.SharedInformerFactory
	// Typed, if set, returns the full-object informer of a resource when
	// another controller already runs one (it is asked only after the
	// factories started); sharing it saves a second watch and cache.
	Typed func(schema.GroupVersionResource) (cache.SharedIndexInformer, bool)
	// Handler returns the event handler for a resource; an error skips the
	// resource (Sync reports it) until the next Sync.
	Handler func(schema.GroupVersionResource) (cache.ResourceEventHandler, error)
	// Ignored resources get no monitor.
	Ignored map[schema.GroupResource]struct{}
	// InformersStarted is closed once the process started the factories.
	InformersStarted <-chan struct{}

	mu       sync.Mutex
	byGVR    map[schema.GroupVersionResource]*monitor
	started  bool
	stopping bool
}

// Sync adds monitors for new resources and removes those of resources gone,
// then starts the informers of new ones (once Start ran). It tries every
// resource and returns the errors joined.
func (m *Monitors) Sync(ctx context.Context, resources Set) error {
	logger := klog.FromContext(ctx)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopping {
		return nil
	}
	if m.byGVR == nil {
		m.byGVR = map[schema.GroupVersionResource]*monitor{}
	}
	var errs []error
	added, kept := 0, 0
	for r := range resources {
		if _, ok := m.Ignored[r.GroupResource()]; ok {
			continue
		}
		if _, ok := m.byGVR[r]; ok {
			kept++
			continue
		}
		h, err := m.Handler(r)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		inf := m.informerFor(r)
		reg, err := inf.AddEventHandler(h)
		if err != nil {
			errs = append(errs, fmt.Errorf("couldn't start monitor for resource %q: %w", r, err))
			continue
		}
		m.byGVR[r] = &monitor{informer: inf, reg: reg}
		added++
	}
	removed := 0
	for r, mon := range m.byGVR {
		if _, ok := resources[r]; !ok {
			_ = mon.informer.RemoveEventHandler(mon.reg)
			delete(m.byGVR, r)
			removed++
		}
	}
	logger.V(4).Info("synced monitors", "added", added, "kept", kept, "removed", removed)
	m.startLocked(ctx)
	return errors.Join(errs...)
}

// informerFor returns the typed informer of r that other controllers
// already run, or else the metadata informer.
func (m *Monitors) informerFor(r schema.GroupVersionResource) cache.SharedIndexInformer {
	if m.Typed != nil && m.started {
		if inf, ok := m.Typed(r); ok {
			return inf
		}
	}
	return m.Factory.ForResource(r).Informer()
}

// Start waits until the process started the shared factories, then marks
// the monitors as running and starts the informers of those Sync added.
func (m *Monitors) Start(ctx context.Context) {
	select {
	case <-m.InformersStarted:
	case <-ctx.Done():
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.started = true
	m.startLocked(ctx)
}

func (m *Monitors) startLocked(ctx context.Context) {
	if m.started && !m.stopping {
		m.Factory.Start(ctx.Done())
	}
}

// Stop removes every monitor's event handler; the shared informers stay
// with their factory.
func (m *Monitors) Stop() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stopping = true
	for r, mon := range m.byGVR {
		_ = mon.informer.RemoveEventHandler(mon.reg)
		delete(m.byGVR, r)
	}
}

// Synced reports whether r has a monitor that has synced.
func (m *Monitors) Synced(r schema.GroupVersionResource) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	mon, ok := m.byGVR[r]
	return ok && mon.reg.HasSynced()
}

// Unsynced lists the resources whose monitor has not synced yet, or
// reports that there are no monitors at all.
func (m *Monitors) Unsynced() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.byGVR) == 0 {
		return []string{"no monitors"}
	}
	var out []string
	for r, mon := range m.byGVR {
		if !mon.reg.HasSynced() {
			out = append(out, r.String())
		}
	}
	sort.Strings(out)
	return out
}

// WaitForSync polls until every monitor synced or ctx is done.
func (m *Monitors) WaitForSync(ctx context.Context) bool {
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		return len(m.Unsynced()) == 0, nil
	})
	return err == nil
}

// Informer returns the informer that monitors a version of gr, and whether
// its handler has synced.
func (m *Monitors) Informer(gr schema.GroupResource) (inf cache.SharedIndexInformer, synced, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for r, mon := range m.byGVR {
		if r.GroupResource() == gr {
			return mon.informer, mon.reg.HasSynced(), true
		}
	}
	return nil, false, false
}
