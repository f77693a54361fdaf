package deployment

import (
	"context"
	"fmt"
	"time"

	apps "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/controller/controllerref"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/features"
)

const (
	// ClientName is the client (and ServiceAccount) identity, and the Event
	// source component, of the deployment-controller.
	ClientName = "deployment-controller"

	queueName = "deployment"
	// orphanIndex indexes ReplicaSets without a controller by namespace.
	// With controllerref.ControllerUIDIndex it gives a sync the
	// ReplicaSets it may claim without listing the whole namespace.
	orphanIndex = "deploymentOrphanReplicaSets"
	// maxRetries is how often a failing Deployment is retried (5ms doubling
	// up to about 82s) before it is dropped until its next event.
	maxRetries = 15

	// StatusSpacing is the Spacer period of status writes that change only
	// counters (and the Progressing condition's lastUpdateTime). Upstream
	// writes each; during a rollout the counters move with every pod, and
	// spacing the writes roughly halves them. Changes of a condition,
	// observedGeneration, collisionCount or annotations are written at
	// once.
	StatusSpacing = time.Second
)

var controllerKind = apps.SchemeGroupVersion.WithKind("Deployment")

// Config is what NewController needs.
type Config struct {
	// Name is the controller's canonical name.
	Name        string
	Client      kubernetes.Interface
	Deployments appsinformers.DeploymentInformer
	ReplicaSets appsinformers.ReplicaSetInformer
	Pods        coreinformers.PodInformer
	// Clock stamps conditions and measures progress deadlines; it defaults
	// to the real clock.
	Clock   clock.PassiveClock
	Workers int
	// TerminatingReplicas reports status.terminatingReplicas (gate
	// DeploymentReplicaSetTerminatingReplicas).
	TerminatingReplicas bool
	// StatusSpacing is the Spacer period of status writes that change
	// only counters; 0 writes every change at once, as upstream does.
	StatusSpacing time.Duration
	// Recorder replaces the event recorder Run builds over Client (tests).
	Recorder record.EventRecorder
}

// Controller rolls Deployments out through ReplicaSets.
type Controller struct {
	name   string
	client kubernetes.Interface
	clock  clock.PassiveClock

	dLister    appslisters.DeploymentLister
	rsLister   appslisters.ReplicaSetLister
	rsIndexer  cache.Indexer
	podIndexer cache.Indexer
	synced     []cache.InformerSynced
	queue      workqueue.TypedRateLimitingInterface[string]

	workers             int
	terminatingReplicas bool

	// written are the controller's own writes the cache lags behind.
	written writtenDeployments
	// statusSpacer spaces status writes that change only counters.
	statusSpacer *controller.Spacer

	// recorder is set by Run, before any worker starts, unless
	// Config.Recorder was.
	recorder record.EventRecorder
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the deployment-controller.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	c, err := NewController(ctx, Config{
		Name:                name,
		Client:              client,
		Deployments:         cc.InformerFactory.Apps().V1().Deployments(),
		ReplicaSets:         cc.InformerFactory.Apps().V1().ReplicaSets(),
		Pods:                cc.InformerFactory.Core().V1().Pods(),
		Clock:               cc.Clock,
		Workers:             int(cc.Config.DeploymentController.ConcurrentDeploymentSyncs),
		TerminatingReplicas: features.Enabled(cc.FeatureGate, features.DeploymentReplicaSetTerminatingReplicas),
		StatusSpacing:       cc.Paced(StatusSpacing),
	})
	if err != nil {
		return nil, fmt.Errorf("error creating Deployment controller: %w", err)
	}
	return c, nil
}

// NewController builds the controller and registers its informer handlers
// and indexes. It does no API I/O.
func NewController(ctx context.Context, cfg Config) (*Controller, error) {
	clk := cfg.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	podInformer := cfg.Pods.Informer()
	if err := controllerref.AddPodControllerIndex(podInformer); err != nil {
		return nil, fmt.Errorf("adding pod index %q: %w", controllerref.PodControllerIndex, err)
	}
	rsInformer := cfg.ReplicaSets.Informer()
	if err := controllerref.AddControllerUIDIndex(rsInformer); err != nil {
		return nil, fmt.Errorf("adding ReplicaSet index %q: %w", controllerref.ControllerUIDIndex, err)
	}
	if err := addOrphanIndex(rsInformer); err != nil {
		return nil, fmt.Errorf("adding ReplicaSet index %q: %w", orphanIndex, err)
	}
	c := &Controller{
		name:                cfg.Name,
		client:              cfg.Client,
		clock:               clk,
		dLister:             cfg.Deployments.Lister(),
		rsLister:            cfg.ReplicaSets.Lister(),
		rsIndexer:           rsInformer.GetIndexer(),
		podIndexer:          podInformer.GetIndexer(),
		queue:               controller.Queue(queueName),
		workers:             cfg.Workers,
		terminatingReplicas: cfg.TerminatingReplicas,
		statusSpacer:        controller.NewSpacer(cfg.StatusSpacing, clk),
		recorder:            cfg.Recorder,
	}

	logger := klog.FromContext(ctx)
	dReg, err := cfg.Deployments.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.addDeployment(logger, obj) },
		UpdateFunc: func(_, newObj any) { c.updateDeployment(logger, newObj) },
		DeleteFunc: func(obj any) { c.deleteDeployment(logger, obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("adding Deployment event handler: %w", err)
	}
	rsReg, err := rsInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.addReplicaSet(logger, obj) },
		UpdateFunc: func(oldObj, newObj any) { c.updateReplicaSet(logger, oldObj, newObj) },
		DeleteFunc: func(obj any) { c.deleteReplicaSet(logger, obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("adding ReplicaSet event handler: %w", err)
	}
	// Pods matter only when they are gone: a Recreate rollout waits for
	// the old ones to disappear.
	podReg, err := podInformer.AddEventHandlerWithResyncPeriod(cache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) { c.deletePod(logger, obj) },
	}, 0)
	if err != nil {
		return nil, fmt.Errorf("adding Pod event handler: %w", err)
	}
	c.synced = []cache.InformerSynced{dReg.HasSynced, rsReg.HasSynced, podReg.HasSynced}
	return c, nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run waits for the caches, then syncs Deployments with the configured
// number of workers until ctx is cancelled. It returns once all workers
// exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting controller", "controller", "deployment")
	defer logger.Info("Shutting down controller", "controller", "deployment")

	if c.recorder == nil {
		recorder, stopEvents := controller.NewRecorder(ctx, c.client, ClientName)
		defer stopEvents()
		c.recorder = recorder
	}
	w := controller.Workers{Name: c.name, Queue: c.queue, Sync: c.sync, MaxRetries: maxRetries, WaitFor: c.synced}
	w.Run(ctx, c.workers)
}

// addOrphanIndex adds orphanIndex to the ReplicaSet informer.
func addOrphanIndex(informer cache.SharedIndexInformer) error {
	if _, ok := informer.GetIndexer().GetIndexers()[orphanIndex]; ok {
		return nil
	}
	return informer.AddIndexers(cache.Indexers{orphanIndex: func(obj any) ([]string, error) {
		rs, ok := obj.(*apps.ReplicaSet)
		if !ok || metav1.GetControllerOfNoCopy(rs) != nil {
			return nil, nil
		}
		return []string{rs.Namespace}, nil
	}})
}
