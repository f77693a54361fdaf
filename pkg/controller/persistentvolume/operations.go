package persistentvolume

import (
	"fmt"
	"sync"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

const (
	// Back-off of a failed operation before it may run again: doubling
	// from opInitialBackoff up to opMaxBackoff, upstream's.
	opInitialBackoff = 500 * time.Millisecond
	opMaxBackoff     = 2*time.Minute + 2*time.Second
)

// operations runs provisioning, deletion and recycling in goroutines, at
// most one per name at a time. After an operation fails, the next run of
// its name is refused until its back-off passed; a success forgets it.
type operations struct {
	mu      sync.Mutex
	running map[string]*opState
	wg      sync.WaitGroup
	now     func() time.Time
}

type opState struct {
	running   bool
	lastError time.Time
	backoff   time.Duration
}

func newOperations() *operations {
	return &operations{running: map[string]*opState{}, now: time.Now}
}

// run starts fn unless an operation of that name runs or backs off; it
// reports whether it started it.
func (o *operations) run(logger klog.Logger, name string, fn func() error) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	st, ok := o.running[name]
	if ok && st.running {
		logger.V(4).Info("Operation is already running, skipping", "operationName", name)
		return false
	}
	if ok && o.now().Before(st.lastError.Add(st.backoff)) {
		logger.V(4).Info("Operation postponed due to exponential backoff", "operationName", name)
		return false
	}
	if !ok {
		st = &opState{}
		o.running[name] = st
	}
	st.running = true
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		err := o.call(name, fn)
		o.finish(name, err)
	}()
	return true
}

func (o *operations) call(name string, fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic in operation %q: %v", name, r)
			utilruntime.HandleError(err)
		}
	}()
	return fn()
}

func (o *operations) finish(name string, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	st := o.running[name]
	if err == nil {
		delete(o.running, name)
		return
	}
	st.running = false
	st.lastError = o.now()
	switch {
	case st.backoff == 0:
		st.backoff = opInitialBackoff
	default:
		st.backoff = min(2*st.backoff, opMaxBackoff)
	}
}

// wait returns once every started operation returned.
func (o *operations) wait() { o.wg.Wait() }
