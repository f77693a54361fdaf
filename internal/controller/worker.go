package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// SyncFunc reconciles one key. It returns nil when the key is done, an error
// to retry it with backoff, or an error wrapped by Permanent to drop it.
type SyncFunc func(ctx context.Context, key string) error

// permanentError marks an error that retrying cannot fix (a user's mistake).
type permanentError struct{ err error }

func (p permanentError) Error() string { return p.err.Error() }
func (p permanentError) Unwrap() error { return p.err }

// Permanent wraps err so that the worker loop logs it and forgets the key
// instead of retrying: the object has to change before a retry can help, and
// that change enqueues the key again.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err: err}
}

// IsPermanent reports whether err was wrapped by Permanent.
func IsPermanent(err error) bool {
	var p permanentError
	return errors.As(err, &p)
}

// ExpectedRetry is implemented by errors that are a normal step of a
// controller's work rather than a failure, such as an informer that has not
// yet seen the controller's own last write. The key is retried with backoff
// like after any error, but the retry is logged at V(4) until it has been
// retried quietRetries times; only a key that stays stuck longer is reported
// as an error. (Upstream logs every such requeue as an error, which reads as
// a failure to operators.)
type ExpectedRetry interface {
	error
	ExpectedRetry()
}

// quietRetries is how many backed-off retries an ExpectedRetry gets before
// it is logged as an error: 155 ms with the default 5 ms base delay, 31 s
// with the endpoint controllers' 1 s. An informer that lags longer than
// that is worth an operator's look.
const quietRetries = 5

// StaleCache is the ExpectedRetry of a sync that found its informer not
// yet showing the controller's own last write (the message says which).
// The Consistency check of package expectations has its own, with the
// versions compared.
type StaleCache string

func (e StaleCache) Error() string { return string(e) }

// ExpectedRetry: the informer is about to catch up.
func (StaleCache) ExpectedRetry() {}

func isExpectedRetry(err error) bool {
	var e ExpectedRetry
	return errors.As(err, &e)
}

// Queue is a rate-limited workqueue of string keys with upstream's
// controller defaults: per-item exponential backoff from 5ms to 1000s and an
// overall token bucket of 10 qps, burst 100. Name is the workqueue metrics
// name (upstream's, per controller).
func Queue(name string) workqueue.TypedRateLimitingInterface[string] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: name, Clock: QueueClock(nil)},
	)
}

// Workers runs n workers that process keys from queue with sync until ctx
// is cancelled, then shuts the queue down and returns once every worker has
// exited. maxRetries bounds how often one key is retried before it is
// dropped (0 means no bound, as upstream does for most controllers).
type Workers struct {
	Name       string
	Queue      workqueue.TypedRateLimitingInterface[string]
	Sync       SyncFunc
	MaxRetries int
	// WaitFor are the informer handlers whose caches must have synced
	// before the first key is processed.
	WaitFor []cache.InformerSynced
}

// Run waits for the caches, starts n workers and blocks until ctx is done
// and all workers exited. The queue is shut down on return.
func (w *Workers) Run(ctx context.Context, n int) {
	if !cache.WaitForNamedCacheSyncWithContext(ctx, w.WaitFor...) {
		w.Queue.ShutDown()
		return
	}
	if n < 1 {
		n = 1
	}
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wait.UntilWithContext(ctx, w.worker, time.Second)
		}()
	}
	<-ctx.Done()
	w.Queue.ShutDown()
	wg.Wait()
}

func (w *Workers) worker(ctx context.Context) {
	for w.processNext(ctx) {
	}
}

func (w *Workers) processNext(ctx context.Context) bool {
	key, quit := w.Queue.Get()
	if quit {
		return false
	}
	defer w.Queue.Done(key)
	err := w.safeSync(ctx, key)
	w.handle(ctx, key, err)
	return true
}

// safeSync turns a panic in sync into an error, so that one malformed object
// cannot take the process down; the key is retried with backoff.
func (w *Workers) safeSync(ctx context.Context, key string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic while syncing %q: %v", key, r)
			utilruntime.HandleErrorWithContext(ctx, err, "Recovered from panic in sync", "controller", w.Name)
		}
	}()
	return w.Sync(ctx, key)
}

func (w *Workers) handle(ctx context.Context, key string, err error) {
	logger := klog.FromContext(ctx)
	switch {
	case err == nil:
		w.Queue.Forget(key)
	case IsPermanent(err):
		logger.Info("Dropping key after a permanent error", "controller", w.Name, "key", key, "err", err)
		w.Queue.Forget(key)
	case w.MaxRetries > 0 && w.Queue.NumRequeues(key) >= w.MaxRetries:
		utilruntime.HandleErrorWithContext(ctx, err, "Dropping key out of the queue", "controller", w.Name, "key", key)
		w.Queue.Forget(key)
	case isExpectedRetry(err) && w.Queue.NumRequeues(key) < quietRetries:
		logger.V(4).Info("Requeuing", "controller", w.Name, "key", key, "reason", err.Error())
		w.Queue.AddRateLimited(key)
	default:
		utilruntime.HandleErrorWithContext(ctx, err, "Error syncing; requeuing", "controller", w.Name, "key", key)
		w.Queue.AddRateLimited(key)
	}
}
