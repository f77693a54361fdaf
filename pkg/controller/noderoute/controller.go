package noderoute

import (
	"context"
	"fmt"
	"net"
	"reflect"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"
	netutils "k8s.io/utils/net"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/features"
)

const (
	// ClientName is upstream's client identity for this controller.
	ClientName = "route-controller"
	// EventSource is the component upstream's Events carry.
	EventSource = "route_controller"

	defaultPeriod = 10 * time.Second
	// minResyncInterval bounds how often node changes may trigger a pass
	// in the watch-based mode (upstream's, from KEP 5237).
	minResyncInterval = 10 * time.Second
	// Keys of the watch-based queue (upstream's, naming the trigger).
	nodeChangeKey = "node_change"
	periodicKey   = "periodic"
)

// Controller keeps a route for every node's pod CIDRs.
type Controller struct {
	name        string
	client      kubernetes.Interface
	routes      cloudprovider.Routes
	clusterName string
	clusterCIDR []*net.IPNet
	period      time.Duration

	nodes  corelisters.NodeLister
	synced cache.InformerSynced
	// queue is set in the watch-based mode only.
	queue workqueue.TypedRateLimitingInterface[string]

	// recorder is set by Run before the first pass, unless a test did.
	recorder record.EventRecorder
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor, with the start conditions of
// upstream's cloud-controller-manager.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	logger := klog.FromContext(ctx)
	if cc.Cloud == nil || cc.Config == nil {
		return nil, nil
	}
	shared := cc.Config.KubeCloudShared
	if !shared.ConfigureCloudRoutes {
		logger.Info("Will not configure cloud provider routes", "configureCloudRoutes", shared.ConfigureCloudRoutes)
		return nil, nil
	}
	routes, ok := cc.Cloud.Routes()
	if !ok || routes == nil {
		logger.Info("Warning: --configure-cloud-routes is set, but cloud provider does not support routes. Will not configure cloud provider routes.")
		return nil, nil
	}
	if strings.TrimSpace(shared.ClusterCIDR) == "" {
		logger.Info("Will not configure cloud provider routes: --cluster-cidr is empty")
		return nil, nil
	}
	cidrs, err := ParseClusterCIDRs(shared.ClusterCIDR)
	if err != nil {
		return nil, err
	}
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	period := shared.RouteReconciliationPeriod.Duration
	if period <= 0 {
		period = defaultPeriod
	}
	watchBased := features.Enabled(cc.FeatureGate, features.CloudControllerManagerWatchBasedRoutesReconciliation)
	return newController(name, client, routes, shared.ClusterName, cidrs, period, watchBased, cc.InformerFactory.Core().V1().Nodes())
}

// ParseClusterCIDRs parses --cluster-cidr as upstream's route controller
// start does: a comma-separated list of at most two CIDRs, two only if
// one of each IP family.
func ParseClusterCIDRs(list string) ([]*net.IPNet, error) {
	cidrs, err := netutils.ParseCIDRs(strings.Split(strings.TrimSpace(list), ","))
	if err != nil {
		return nil, err
	}
	dualStack, _ := netutils.IsDualStackCIDRs(cidrs)
	if len(cidrs) > 1 && !dualStack {
		return nil, fmt.Errorf("len of ClusterCIDRs==%v and they are not configured as dual stack (at least one from each IPFamily", len(cidrs))
	}
	if len(cidrs) > 2 {
		return nil, fmt.Errorf("length of clusterCIDRs is:%v more than max allowed of 2", len(cidrs))
	}
	return cidrs, nil
}

func newController(name string, client kubernetes.Interface, routes cloudprovider.Routes, clusterName string, clusterCIDR []*net.IPNet,
	period time.Duration, watchBased bool, nodes coreinformers.NodeInformer) (*Controller, error) {
	if len(clusterCIDR) == 0 {
		return nil, fmt.Errorf("the node-route-controller needs --cluster-cidr")
	}
	c := &Controller{
		name:        name,
		client:      client,
		routes:      routes,
		clusterName: clusterName,
		clusterCIDR: clusterCIDR,
		period:      period,
		nodes:       nodes.Lister(),
	}
	handler := cache.ResourceEventHandlerFuncs{}
	if watchBased {
		c.queue = workqueue.NewTypedRateLimitingQueueWithConfig[string](
			newIntervalLimiter(minResyncInterval),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "Routes", Clock: controller.QueueClock(nil)})
		handler = cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { c.queue.AddRateLimited(nodeChangeKey) },
			UpdateFunc: c.onNodeUpdate,
			DeleteFunc: func(any) { c.queue.AddRateLimited(nodeChangeKey) },
		}
	}
	reg, err := nodes.Informer().AddEventHandler(handler)
	if err != nil {
		return nil, fmt.Errorf("adding Node event handler: %w", err)
	}
	c.synced = reg.HasSynced
	return c, nil
}

// onNodeUpdate queues a pass when routes may change (podCIDRs, addresses)
// and at a resync, the periodic correction of the watch-based mode.
func (c *Controller) onNodeUpdate(oldObj, newObj any) {
	old, ok1 := oldObj.(*v1.Node)
	cur, ok2 := newObj.(*v1.Node)
	if !ok1 || !ok2 {
		return
	}
	switch {
	case !reflect.DeepEqual(old.Spec.PodCIDRs, cur.Spec.PodCIDRs) || !reflect.DeepEqual(old.Status.Addresses, cur.Status.Addresses):
		c.queue.AddRateLimited(nodeChangeKey)
	case old.ResourceVersion == cur.ResourceVersion:
		c.queue.AddRateLimited(periodicKey)
	}
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run reconciles every period (or on node changes in the watch-based
// mode) until ctx is cancelled, and returns once its goroutines exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting route controller")
	defer logger.Info("Shutting down route controller")
	if c.recorder == nil {
		recorder, stop := controller.NewRecorder(ctx, c.client, EventSource)
		defer stop()
		c.recorder = recorder
	}
	if c.queue != nil {
		w := controller.Workers{Name: c.name, Queue: c.queue, WaitFor: []cache.InformerSynced{c.synced},
			Sync: func(ctx context.Context, _ string) error { return c.reconcile(ctx) }}
		w.Run(ctx, 1) // every pass covers the whole cluster: one worker
		return
	}
	if !cache.WaitForNamedCacheSyncWithContext(ctx, c.synced) {
		return
	}
	wait.NonSlidingUntilWithContext(ctx, func(ctx context.Context) {
		if err := c.reconcile(ctx); err != nil {
			logger.Error(err, "Couldn't reconcile node routes")
		}
	}, c.period)
}

// intervalLimiter lets one item through per interval and never delays
// more than that: a token bucket of rate 1/interval and burst 1, capped at
// interval as upstream's WithMaxWait wrapper does.
type intervalLimiter struct {
	interval time.Duration
	mu       sync.Mutex
	next     time.Time
	now      func() time.Time
}

func newIntervalLimiter(interval time.Duration) *intervalLimiter {
	return &intervalLimiter{interval: interval, now: time.Now}
}

func (l *intervalLimiter) When(string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if l.next.Before(now) {
		l.next = now
	}
	delay := l.next.Sub(now)
	l.next = l.next.Add(l.interval)
	return min(delay, l.interval)
}

func (l *intervalLimiter) Forget(string)          {}
func (l *intervalLimiter) NumRequeues(string) int { return 0 }
