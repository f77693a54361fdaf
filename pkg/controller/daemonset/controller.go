package daemonset

import (
	"context"
	"fmt"
	"sync"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/controller/controllerref"
	"github.com/kcm-dev/kcm/internal/controller/expectations"
	"github.com/kcm-dev/kcm/internal/controller/history"
	"github.com/kcm-dev/kcm/internal/controller/nodeutil"
	"github.com/kcm-dev/kcm/internal/controller/podcontrol"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/features"
)

const (
	// ClientName is the client (and ServiceAccount) identity of the
	// daemonset-controller; EventComponent the source of its Events (they
	// differ upstream too).
	ClientName     = "daemon-set-controller"
	EventComponent = "daemonset-controller"

	// BurstReplicas bounds the pods one sync creates, and those it
	// deletes.
	BurstReplicas = 250

	// Failed daemon pods are deleted (and so recreated) with a per-node
	// backoff from 1s doubling to 15 minutes, as upstream; entries idle for
	// twice the maximum are dropped every backoffGCInterval.
	failedPodBackoffInitial = time.Second
	failedPodBackoffMax     = 15 * time.Minute
	backoffGCInterval       = time.Minute

	queueName     = "daemonset"
	nodeQueueName = "daemonset-node-updates"

	// StatusSpacing is the Spacer period of status writes that only
	// report progress, and of the syncs that pod changes which can only
	// move counters cause (upstream syncs and writes each). While a
	// DaemonSet's pods are created or become ready by the hundred, one
	// status write a second instead of one per pod.
	StatusSpacing = time.Second

	// statusUpdateRetries is how often a failed status update is retried,
	// after a fresh GET, before the key is requeued.
	statusUpdateRetries = 1
)

var (
	controllerKind    = apps.SchemeGroupVersion.WithKind("DaemonSet")
	podResource       = schema.GroupResource{Resource: "pods"}
	daemonSetResource = schema.GroupResource{Group: "apps", Resource: "daemonsets"}
)

// Config is what NewController needs.
type Config struct {
	// Name is the controller's canonical name.
	Name       string
	Client     kubernetes.Interface
	DaemonSets appsinformers.DaemonSetInformer
	Revisions  appsinformers.ControllerRevisionInformer
	Pods       coreinformers.PodInformer
	Nodes      coreinformers.NodeInformer
	// Clock defaults to the real clock; it also drives the failed-pod
	// backoff.
	Clock   clock.Clock
	Workers int
	// BurstReplicas defaults to BurstReplicas.
	BurstReplicas int
	// ConsistencyCheck waits for the informers to see the controller's
	// writes before syncing a DaemonSet again.
	ConsistencyCheck bool
	// CompareOps enables the Lt and Gt toleration operators.
	CompareOps bool
	// StatusSpacing is the Spacer period of progress-only status writes
	// and of syncs that can only move counters; 0 does each at once, as
	// upstream does.
	StatusSpacing time.Duration

	// ClientQPS is the QPS of Client's rate limiter; it sizes the turns
	// DaemonSets take over new nodes (turnSize).
	ClientQPS float32
	// NoTurns makes a sync cover every new node at once, as upstream's
	// does (newNodesFirst keeps the order and takes no turns).
	NoTurns bool

	// PodControl and Recorder replace what Run builds over Client (tests).
	PodControl podcontrol.Interface
	Recorder   record.EventRecorder
}

// Controller runs a daemon pod on every node a DaemonSet selects.
type Controller struct {
	name   string
	client kubernetes.Interface
	clock  clock.Clock

	dsLister   appslisters.DaemonSetLister
	revLister  appslisters.ControllerRevisionLister
	revIndexer cache.Indexer
	podIndexer cache.Indexer
	podLister  corelisters.PodLister
	nodeLister corelisters.NodeLister
	synced     []cache.InformerSynced

	// queue holds DaemonSet keys; nodeQueue node names whose change may
	// concern DaemonSets (nodes.go).
	queue     workqueue.TypedRateLimitingInterface[string]
	nodeQueue workqueue.TypedRateLimitingInterface[string]

	expectations *expectations.UIDTracking
	// consistency is nil when the check is off.
	consistency *expectations.Consistency
	placements  *placements
	written     *writtenStatuses
	// statusSpacer spaces progress-only status writes and the syncs of
	// pod changes that can only move counters.
	statusSpacer *controller.Spacer
	// failedPods delays deleting failed daemon pods, per DaemonSet
	// generation and node.
	failedPods *flowcontrol.Backoff

	workers       int
	burstReplicas int
	// turn is how many new nodes a settled DaemonSet covers per sync
	// while others wait (newNodesFirst); 0 takes no turns.
	turn      int
	revisions history.Client

	// podControl and recorder are set by Run, before any worker starts,
	// unless Config set them.
	podControl podcontrol.Interface
	recorder   record.EventRecorder
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the daemonset-controller.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	c, err := NewController(ctx, Config{
		Name:             name,
		Client:           client,
		DaemonSets:       cc.InformerFactory.Apps().V1().DaemonSets(),
		Revisions:        cc.InformerFactory.Apps().V1().ControllerRevisions(),
		Pods:             cc.InformerFactory.Core().V1().Pods(),
		Nodes:            cc.InformerFactory.Core().V1().Nodes(),
		Clock:            cc.Clock,
		Workers:          int(cc.Config.DaemonSetController.ConcurrentDaemonSetSyncs),
		ConsistencyCheck: features.Enabled(cc.FeatureGate, features.StaleControllerConsistencyDaemonSet),
		CompareOps:       features.Enabled(cc.FeatureGate, features.TaintTolerationComparisonOperators),
		StatusSpacing:    cc.Paced(StatusSpacing),
		NoTurns:          cc.UpstreamWriteTiming,
		ClientQPS:        cc.Config.Generic.ClientConnection.QPS,
	})
	if err != nil {
		return nil, fmt.Errorf("error creating DaemonSets controller: %w", err)
	}
	registerMetrics()
	return c, nil
}

// NewController builds the controller and registers its informer handlers
// and indexes. It does no API I/O.
func NewController(ctx context.Context, cfg Config) (*Controller, error) {
	clk := cfg.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	burst := cfg.BurstReplicas
	if burst <= 0 {
		burst = BurstReplicas
	}
	podInformer := cfg.Pods.Informer()
	if err := controllerref.AddPodControllerIndex(podInformer); err != nil {
		return nil, fmt.Errorf("adding pod index %q: %w", controllerref.PodControllerIndex, err)
	}
	if err := nodeutil.AddPodNodeNameIndexer(podInformer); err != nil {
		return nil, err
	}
	revInformer := cfg.Revisions.Informer()
	if err := history.AddIndex(revInformer); err != nil {
		return nil, fmt.Errorf("adding ControllerRevision index: %w", err)
	}
	c := &Controller{
		name:          cfg.Name,
		client:        cfg.Client,
		clock:         clk,
		dsLister:      cfg.DaemonSets.Lister(),
		revLister:     cfg.Revisions.Lister(),
		revIndexer:    revInformer.GetIndexer(),
		podIndexer:    podInformer.GetIndexer(),
		podLister:     cfg.Pods.Lister(),
		nodeLister:    cfg.Nodes.Lister(),
		queue:         controller.Queue(queueName),
		nodeQueue:     controller.Queue(nodeQueueName),
		expectations:  expectations.NewUIDTracking(clk),
		placements:    newPlacements(cfg.CompareOps),
		written:       newWrittenStatuses(),
		statusSpacer:  controller.NewSpacer(cfg.StatusSpacing, clk),
		failedPods:    flowcontrol.NewFakeBackOff(failedPodBackoffInitial, failedPodBackoffMax, clk),
		workers:       cfg.Workers,
		burstReplicas: burst,
		turn:          turnSize(cfg.ClientQPS, burst, cfg.NoTurns),
		revisions:     history.Client{Client: cfg.Client},
		podControl:    cfg.PodControl,
		recorder:      cfg.Recorder,
	}
	dsInformer := cfg.DaemonSets.Informer()
	if cfg.ConsistencyCheck {
		c.consistency = expectations.NewConsistency(map[schema.GroupResource]expectations.SyncedVersioner{
			podResource:       podInformer.GetStore(),
			daemonSetResource: dsInformer.GetStore(),
		})
	}
	if err := c.addHandlers(klog.FromContext(ctx), dsInformer, revInformer, podInformer, cfg.Nodes.Informer()); err != nil {
		return nil, err
	}
	return c, nil
}

// addHandlers registers the event handlers (handlers.go, nodes.go) and
// remembers their HasSynced.
func (c *Controller) addHandlers(logger klog.Logger, ds, rev, pod, node cache.SharedIndexInformer) error {
	regs := []struct {
		informer cache.SharedIndexInformer
		kind     string
		h        cache.ResourceEventHandlerFuncs
	}{
		{ds, "DaemonSet", cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { c.addDaemonSet(logger, obj) },
			UpdateFunc: func(oldObj, newObj any) { c.updateDaemonSet(logger, oldObj, newObj) },
			DeleteFunc: func(obj any) { c.deleteDaemonSet(logger, obj) },
		}},
		{rev, "ControllerRevision", cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { c.addRevision(logger, obj) },
			UpdateFunc: func(oldObj, newObj any) { c.updateRevision(logger, oldObj, newObj) },
			DeleteFunc: func(obj any) { c.deleteRevision(logger, obj) },
		}},
		{pod, "Pod", cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { c.addPod(logger, obj) },
			UpdateFunc: func(oldObj, newObj any) { c.updatePod(logger, oldObj, newObj) },
			DeleteFunc: func(obj any) { c.deletePod(logger, obj) },
		}},
		{node, "Node", cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { c.addNode(logger, obj) },
			UpdateFunc: func(oldObj, newObj any) { c.updateNode(logger, oldObj, newObj) },
			DeleteFunc: func(obj any) { c.deleteNode(logger, obj) },
		}},
	}
	for _, r := range regs {
		reg, err := r.informer.AddEventHandler(r.h)
		if err != nil {
			return fmt.Errorf("adding %s event handler: %w", r.kind, err)
		}
		c.synced = append(c.synced, reg.HasSynced)
	}
	return nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run waits for the caches, then syncs DaemonSets and evaluates node
// changes with the configured number of workers each until ctx is
// cancelled. It returns once every goroutine it started exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting controller", "controller", "daemonset")
	defer logger.Info("Shutting down controller", "controller", "daemonset")

	if c.recorder == nil {
		recorder, stopEvents := controller.NewRecorder(ctx, c.client, EventComponent)
		defer stopEvents()
		c.recorder = recorder
	}
	if c.podControl == nil {
		c.podControl = podcontrol.Real{Client: c.client, Recorder: c.recorder, OnWrite: c.podWritten}
	}
	dsWorkers := controller.Workers{Name: c.name, Queue: c.queue, Sync: c.sync, WaitFor: c.synced}
	nodeWorkers := controller.Workers{Name: c.name + "-nodes", Queue: c.nodeQueue, Sync: c.syncNode, WaitFor: c.synced}
	var wg sync.WaitGroup
	wg.Go(func() { dsWorkers.Run(ctx, c.workers) })
	wg.Go(func() { nodeWorkers.Run(ctx, c.workers) })
	wg.Go(func() { wait.Until(c.failedPods.GC, backoffGCInterval, ctx.Done()) })
	wg.Wait()
}

// podWritten records a pod the controller created or adopted, so that the
// next sync of its DaemonSet waits until the pod informer has seen it.
func (c *Controller) podWritten(pod *v1.Pod, ref *metav1.OwnerReference) {
	if ref == nil {
		return
	}
	c.consistency.WroteAt(types.NamespacedName{Namespace: pod.Namespace, Name: ref.Name}, ref.UID, podResource, pod.ResourceVersion)
}
