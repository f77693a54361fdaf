package csrutil

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/time/rate"
	certv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	certinformers "k8s.io/client-go/informers/certificates/v1"
	certlisters "k8s.io/client-go/listers/certificates/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
)

// queueName is the workqueue metrics name upstream gives every CSR
// controller's queue.
const queueName = "certificate"

// Handler acts on one request. It receives a deep copy it may modify, of a
// request that has no certificate yet.
type Handler func(ctx context.Context, csr *certv1.CertificateSigningRequest) error

// Loop feeds the requests a controller wants, by name, to its Handler:
// upstream's certificate controller, in which only requests without a
// certificate are handled.
type Loop struct {
	name   string
	lister certlisters.CertificateSigningRequestLister
	synced cache.InformerSynced
	queue  workqueue.TypedRateLimitingInterface[string]
	wants  func(*certv1.CertificateSigningRequest) bool
	handle Handler
}

// NewLoop registers the loop's event handler on the informer. wants filters
// requests before they are queued and again when they are synced (nil: all
// requests without a certificate); requests with a certificate are never
// handled.
func NewLoop(name string, informer certinformers.CertificateSigningRequestInformer,
	wants func(*certv1.CertificateSigningRequest) bool, handle Handler) (*Loop, error) {
	l := &Loop{
		name:   name,
		lister: informer.Lister(),
		queue:  newQueue(),
		wants:  wants,
		handle: handle,
	}
	reg, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    l.enqueue,
		UpdateFunc: func(_, obj any) { l.enqueue(obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("adding CertificateSigningRequest event handler: %w", err)
	}
	l.synced = reg.HasSynced
	return l, nil
}

// newQueue is upstream's certificate queue: per-request backoff from 200ms
// to 1000s, and 10 retries a second overall with a burst of 100.
func newQueue() workqueue.TypedRateLimitingInterface[string] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedMaxOfRateLimiter[string](
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](200*time.Millisecond, 1000*time.Second),
			&workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
		),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: queueName, Clock: controller.QueueClock(nil)},
	)
}

// Run waits for the informer and runs workers until ctx is cancelled; it
// returns once they have exited.
func (l *Loop) Run(ctx context.Context, workers int) {
	w := controller.Workers{Name: l.name, Queue: l.queue, Sync: l.sync, WaitFor: []cache.InformerSynced{l.synced}}
	w.Run(ctx, workers)
}

func (l *Loop) want(csr *certv1.CertificateSigningRequest) bool {
	return !IsIssued(csr) && (l.wants == nil || l.wants(csr))
}

func (l *Loop) enqueue(obj any) {
	if csr, ok := obj.(*certv1.CertificateSigningRequest); ok && l.want(csr) {
		l.queue.Add(csr.Name)
	}
}

func (l *Loop) sync(ctx context.Context, name string) error {
	start := time.Now()
	logger := klog.FromContext(ctx)
	defer func() {
		logger.V(4).Info("Finished syncing certificate request", "csr", name, "elapsedTime", time.Since(start))
	}()
	csr, err := l.lister.Get(name)
	if apierrors.IsNotFound(err) {
		logger.V(3).Info("Certificate request has been deleted", "csr", name)
		return nil
	}
	if err != nil {
		return err
	}
	if !l.want(csr) {
		return nil
	}
	// The handler may change its copy; the cache's object is never touched.
	return l.handle(ctx, csr.DeepCopy())
}
