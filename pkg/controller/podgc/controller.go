package podgc

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

const (
	// ClientName is the client (and, with service-account credentials,
	// ServiceAccount) identity the controller uses.
	ClientName = "pod-garbage-collector"
	// DefaultPeriod is how often upstream runs a collection.
	DefaultPeriod = 20 * time.Second
	// DefaultQuarantine is how long a node must be missing from the
	// informer before it is checked with a GET and its pods collected.
	DefaultQuarantine = 40 * time.Second
	// deleteParallelism bounds the concurrent deletions of one pass; the
	// client's rate limiter is the real bound.
	deleteParallelism = 16
)

// Options tune a controller; zero fields take upstream's defaults, except
// TerminatedPodThreshold, where <= 0 disables the terminated-pod collection.
type Options struct {
	TerminatedPodThreshold int
	Period                 time.Duration
	Quarantine             time.Duration
}

// Controller force-deletes pods that no kubelet will ever clean up.
type Controller struct {
	name   string
	client kubernetes.Interface
	clock  clock.WithTicker
	opts   Options

	podLister  corelisters.PodLister
	nodeLister corelisters.NodeLister
	synced     []cache.InformerSynced

	// quarantine holds, for nodes that pods are bound to but that the
	// informer does not know, when they become due for a live check. Only
	// the single gc goroutine touches it.
	quarantine map[string]time.Time
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the
// pod-garbage-collector-controller, configured by --terminated-pod-gc-threshold.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	return NewWithOptions(ctx, cc, name, Options{
		TerminatedPodThreshold: int(cc.Config.PodGCController.TerminatedPodGCThreshold),
	})
}

// NewWithOptions is New with explicit options; tests use it to shorten the
// period and the quarantine.
func NewWithOptions(ctx context.Context, cc *controllermanager.ControllerContext, name string, opts Options) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	c, err := newController(ctx, name, client, cc.Clock,
		cc.InformerFactory.Core().V1().Pods(), cc.InformerFactory.Core().V1().Nodes(), opts)
	if err != nil {
		return nil, fmt.Errorf("error creating pod garbage collector: %w", err)
	}
	return c, nil
}

func newController(_ context.Context, name string, client kubernetes.Interface, clk clock.WithTicker,
	podInformer coreinformers.PodInformer, nodeInformer coreinformers.NodeInformer, opts Options) (*Controller, error) {
	if clk == nil {
		clk = clock.RealClock{}
	}
	if opts.Period <= 0 {
		opts.Period = DefaultPeriod
	}
	if opts.Quarantine <= 0 {
		opts.Quarantine = DefaultQuarantine
	}
	registerMetrics()
	// The controller polls the listers; it needs no event handlers, but
	// the informers must be registered with the factory to be started.
	return &Controller{
		name:       name,
		client:     client,
		clock:      clk,
		opts:       opts,
		podLister:  podInformer.Lister(),
		nodeLister: nodeInformer.Lister(),
		synced:     []cache.InformerSynced{podInformer.Informer().HasSynced, nodeInformer.Informer().HasSynced},
		quarantine: map[string]time.Time{},
	}, nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run waits for the caches, then collects every period until ctx is
// cancelled. It returns once the running pass has finished.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting GC controller")
	defer logger.Info("Shutting down GC controller")

	if !cache.WaitForNamedCacheSyncWithContext(ctx, c.synced...) {
		return
	}
	// BackoffUntil runs gc in this goroutine, so returning means done.
	// The backoff manager is the one form of BackoffUntil that runs on c.clock
	// (a fake one in the tests); its replacement, Backoff.Timer, does not plug in.
	//lint:ignore SA1019 no non-deprecated BackoffManager takes a clock
	wait.BackoffUntilWithContext(ctx, c.gc, wait.NewJitteredBackoffManager(c.opts.Period, 0, c.clock), true)
}
