package garbagecollector

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// monitor is the graph builder's event handler on the shared informer of
// one resource: the typed one another controller already runs, else a
// metadata-only one.
type monitor struct {
	informer cache.SharedIndexInformer
	reg      cache.ResourceEventHandlerRegistration
}

// monitors keeps one monitor per deletable, non-ignored resource.
type monitors struct {
	factory metadatainformer.SharedInformerFactory
	// typed, if set, returns the full-object informer of a resource when
	// another controller already runs one (it is asked only after the
	// factories started); sharing it saves a second watch and cache.
	typed            func(schema.GroupVersionResource) (cache.SharedIndexInformer, bool)
	mapper           meta.RESTMapper
	ignored          map[schema.GroupResource]struct{}
	builder          *builder
	informersStarted <-chan struct{}

	mu       sync.Mutex
	byGVR    map[schema.GroupVersionResource]*monitor
	started  bool
	stopping bool
}

// sync adds monitors for new resources and removes those of resources gone,
// then starts the informers of new ones (once kcm started the factories).
// It tries every resource and returns the errors joined.
func (m *monitors) sync(ctx context.Context, resources resourceSet) error {
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
		if _, ok := m.ignored[r.GroupResource()]; ok {
			continue
		}
		if _, ok := m.byGVR[r]; ok {
			kept++
			continue
		}
		kind, err := m.mapper.KindFor(r)
		if err != nil {
			errs = append(errs, fmt.Errorf("couldn't look up resource %q: %w", r, err))
			continue
		}
		inf := m.informerFor(r)
		reg, err := inf.AddEventHandler(m.builder.handlers(kind))
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
func (m *monitors) informerFor(r schema.GroupVersionResource) cache.SharedIndexInformer {
	if m.typed != nil && m.started {
		if inf, ok := m.typed(r); ok {
			return inf
		}
	}
	return m.factory.ForResource(r).Informer()
}

// start marks the monitors as running and starts the informers once kcm
// has started the shared factories.
func (m *monitors) start(ctx context.Context) {
	select {
	case <-m.informersStarted:
	case <-ctx.Done():
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.started = true
	m.startLocked(ctx)
}

func (m *monitors) startLocked(ctx context.Context) {
	if m.started && !m.stopping {
		m.factory.Start(ctx.Done())
	}
}

// stop removes every monitor's event handler; the shared informers stay
// with the factory.
func (m *monitors) stop() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stopping = true
	for r, mon := range m.byGVR {
		_ = mon.informer.RemoveEventHandler(mon.reg)
		delete(m.byGVR, r)
	}
}

// synced reports whether r has a monitor that has synced.
func (m *monitors) synced(r schema.GroupVersionResource) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	mon, ok := m.byGVR[r]
	return ok && mon.reg.HasSynced()
}

// unsynced lists the resources whose monitor has not synced yet, or
// reports that there are no monitors at all.
func (m *monitors) unsynced() []string {
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

// waitForSync polls until every monitor synced or ctx is done.
func (m *monitors) waitForSync(ctx context.Context) bool {
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		return len(m.unsynced()) == 0, nil
	})
	return err == nil
}
