package informerfanout

import (
	"context"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/informers/apps"
	"k8s.io/client-go/informers/batch"
	"k8s.io/client-go/informers/core"
	"k8s.io/client-go/informers/internalinterfaces"
	"k8s.io/client-go/tools/cache"
)

// Factory wraps a shared informer factory built without a namespace or
// list options of its own (the controller manager's): the informers of
// the core, apps and batch groups it hands out fan their events out as the
// package describes; every other group is the wrapped factory's.
type Factory struct {
	informers.SharedInformerFactory

	mu        sync.Mutex
	started   bool
	informers map[reflect.Type]*Informer
}

// NewFactory wraps f. f must not filter by namespace or list options.
func NewFactory(f informers.SharedInformerFactory) *Factory {
	return &Factory{SharedInformerFactory: f, informers: map[reflect.Type]*Informer{}}
}

// InformerFor returns the wrapped factory's informer for obj's type,
// wrapped so that handlers registered before Start share one listener.
func (f *Factory) InformerFor(obj runtime.Object, newFunc internalinterfaces.NewInformerFunc) cache.SharedIndexInformer {
	inner := f.SharedInformerFactory.InformerFor(obj, newFunc)
	t := reflect.TypeOf(obj)
	f.mu.Lock()
	defer f.mu.Unlock()
	if i, ok := f.informers[t]; ok {
		return i
	}
	i := &Informer{SharedIndexInformer: inner, sealed: f.started}
	f.informers[t] = i
	return i
}

// Start seals the informers handed out so far (handlers added later get
// listeners of their own) and starts the wrapped factory's informers.
func (f *Factory) Start(stopCh <-chan struct{}) {
	f.seal()
	f.SharedInformerFactory.Start(stopCh)
}

// StartWithContext is Start with a context.
func (f *Factory) StartWithContext(ctx context.Context) {
	f.seal()
	f.SharedInformerFactory.StartWithContext(ctx)
}

func (f *Factory) seal() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started = true
	for _, i := range f.informers {
		i.seal()
	}
}

// Core returns the core group's informers, built on f.
func (f *Factory) Core() core.Interface { return core.New(f, metav1.NamespaceAll, nil) }

// Apps returns the apps group's informers, built on f.
func (f *Factory) Apps() apps.Interface { return apps.New(f, metav1.NamespaceAll, nil) }

// Batch returns the batch group's informers, built on f.
func (f *Factory) Batch() batch.Interface { return batch.New(f, metav1.NamespaceAll, nil) }

// Informer is a shared informer whose handlers registered before its
// factory started are called, in the order they were added, from one
// client-go listener per resync period they asked for.
type Informer struct {
	cache.SharedIndexInformer

	mu     sync.Mutex
	sealed bool
	groups map[time.Duration]*group // by resync period; defaultResync for the informer's own
}

// defaultResync keys the handlers that take the informer's default resync
// period (AddEventHandler, or options without a period).
const defaultResync time.Duration = -1

// group is the handlers sharing one listener, and that listener.
type group struct {
	reg      cache.ResourceEventHandlerRegistration
	handlers atomic.Pointer[[]*registration]
}

// registration is a handler on a shared listener.
type registration struct {
	cache.ResourceEventHandler
	owner *Informer
	group *group
}

// HasSynced reports whether the shared listener delivered the informer's
// initial list, and so whether this handler has handled it.
func (r *registration) HasSynced() bool { return r.group.reg.HasSynced() }

// HasSyncedChecker is HasSynced as a DoneChecker.
func (r *registration) HasSyncedChecker() cache.DoneChecker { return r.group.reg.HasSyncedChecker() }

// AddEventHandler adds handler, with the informer's default resync period.
func (i *Informer) AddEventHandler(handler cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return i.AddEventHandlerWithOptions(handler, cache.HandlerOptions{})
}

// AddEventHandlerWithResyncPeriod adds handler with its own resync period
// (0: none).
func (i *Informer) AddEventHandlerWithResyncPeriod(handler cache.ResourceEventHandler, resyncPeriod time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	return i.AddEventHandlerWithOptions(handler, cache.HandlerOptions{ResyncPeriod: &resyncPeriod})
}

// AddEventHandlerWithOptions adds handler to the listener shared by the
// handlers of its resync period until the factory has started, and gives
// it a listener of its own after that. options.Logger, which only logs
// the listener's resync warnings, is not kept for a shared listener.
func (i *Informer) AddEventHandlerWithOptions(handler cache.ResourceEventHandler, options cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.sealed {
		return i.SharedIndexInformer.AddEventHandlerWithOptions(handler, options)
	}
	key := defaultResync
	if options.ResyncPeriod != nil {
		key = max(*options.ResyncPeriod, 0)
	}
	g := i.groups[key]
	if g == nil {
		g = &group{}
		reg, err := i.SharedIndexInformer.AddEventHandlerWithOptions(dispatcher{g}, cache.HandlerOptions{ResyncPeriod: options.ResyncPeriod})
		if err != nil {
			return nil, err
		}
		g.reg = reg
		if i.groups == nil {
			i.groups = map[time.Duration]*group{}
		}
		i.groups[key] = g
	}
	r := &registration{ResourceEventHandler: handler, owner: i, group: g}
	var next []*registration
	if cur := g.handlers.Load(); cur != nil {
		next = slices.Clone(*cur)
	}
	next = append(next, r)
	g.handlers.Store(&next)
	return r, nil
}

// RemoveEventHandler removes a handler, from its shared listener or from
// the informer.
func (i *Informer) RemoveEventHandler(handle cache.ResourceEventHandlerRegistration) error {
	r, ok := handle.(*registration)
	if !ok || r.owner != i {
		return i.SharedIndexInformer.RemoveEventHandler(handle)
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if cur := r.group.handlers.Load(); cur != nil {
		next := slices.DeleteFunc(slices.Clone(*cur), func(x *registration) bool { return x == r })
		r.group.handlers.Store(&next)
	}
	return nil
}

func (i *Informer) seal() {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.sealed = true
}

// dispatcher is a shared listener's handler: it calls every handler of its
// group in turn.
type dispatcher struct{ g *group }

func (d dispatcher) OnAdd(obj any, isInInitialList bool) {
	if hs := d.g.handlers.Load(); hs != nil {
		for _, r := range *hs {
			r.OnAdd(obj, isInInitialList)
		}
	}
}

func (d dispatcher) OnUpdate(oldObj, newObj any) {
	if hs := d.g.handlers.Load(); hs != nil {
		for _, r := range *hs {
			r.OnUpdate(oldObj, newObj)
		}
	}
}

func (d dispatcher) OnDelete(obj any) {
	if hs := d.g.handlers.Load(); hs != nil {
		for _, r := range *hs {
			r.OnDelete(obj)
		}
	}
}
