package job

import (
	"context"
	"fmt"
	"sync"
	"time"

	batch "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	batchinformers "k8s.io/client-go/informers/batch/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/controller/controllerref"
	"github.com/kcm-dev/kcm/internal/controller/expectations"
	"github.com/kcm-dev/kcm/internal/controller/labelindex"
	"github.com/kcm-dev/kcm/internal/controller/podcontrol"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/features"
)

const (
	// ClientName is the client (and ServiceAccount) identity, and the Event
	// source component, of the job-controller.
	ClientName = "job-controller"

	// SyncBatchPeriod delays the syncs that pod events and Job status
	// updates cause, so that a burst of them makes one sync.
	SyncBatchPeriod = time.Second
	// MaxUncountedPods bounds the UIDs one sync adds to
	// status.uncountedTerminatedPods (keeping it below ~20 KB) and so the
	// finalizers it removes.
	MaxUncountedPods = 500
	// MaxPodCreateDeletePerSync bounds the pods one sync creates or deletes.
	MaxPodCreateDeletePerSync = 500

	// The queues retry a failed sync after 1s, doubling up to a minute
	// (upstream's Job-specific limits).
	retryBaseDelay = time.Second
	retryMaxDelay  = time.Minute

	queueName       = "job"
	orphanQueueName = "job_orphan_pod"
)

var (
	jobKind     = batch.SchemeGroupVersion.WithKind("Job")
	podResource = schema.GroupResource{Resource: "pods"}
	jobResource = schema.GroupResource{Group: "batch", Resource: "jobs"}
)

// Config is what NewController needs.
type Config struct {
	// Name is the controller's canonical name.
	Name   string
	Client kubernetes.Interface
	Jobs   batchinformers.JobInformer
	Pods   coreinformers.PodInformer
	// Clock defaults to the real clock.
	Clock clock.WithTicker
	// Workers is the number of workers of each queue
	// (--concurrent-job-syncs).
	Workers int
	// ConsistencyCheck waits for the informers to see the controller's
	// writes before syncing a Job again (StaleControllerConsistencyJob).
	ConsistencyCheck bool
	// ResetStartTimeOnSuspend clears status.startTime when a Job is
	// suspended (MutableSchedulingDirectivesForSuspendedJobs).
	ResetStartTimeOnSuspend bool
	// BatchPeriod replaces SyncBatchPeriod when positive (tests).
	BatchPeriod time.Duration

	// PodControl and Recorder replace what Run builds over Client (tests).
	PodControl podcontrol.Interface
	Recorder   record.EventRecorder
}

// Controller runs the pods of Jobs and reports on them.
type Controller struct {
	name   string
	client kubernetes.Interface
	clock  clock.WithTicker

	jobs       batchlisters.JobLister
	pods       corelisters.PodLister
	podIndexer cache.Indexer
	synced     []cache.InformerSynced

	// queue holds Job keys; orphans holds orphanKeys of pods that may hold
	// a tracking finalizer nobody will remove otherwise.
	queue   workqueue.TypedRateLimitingInterface[string]
	orphans workqueue.TypedRateLimitingInterface[string]

	// expectations counts pod creations and deletions not yet observed.
	expectations *expectations.UIDTracking
	// finalizers holds the pods whose finalizer removal is not yet observed.
	finalizers *finalizerExpectations
	// consistency is nil when the check is off.
	consistency *expectations.Consistency
	backoff     *backoffStore
	// finishing holds the UIDs of Jobs this controller marked finished
	// whose update the informer has not delivered yet.
	finishing sync.Map

	workers             int
	batchPeriod         time.Duration
	resetStartOnSuspend bool

	// podControl and recorder are set by Run, before any worker starts,
	// unless Config set them.
	podControl podcontrol.Interface
	recorder   record.EventRecorder
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the job-controller.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	if features.Enabled(cc.FeatureGate, features.WorkloadWithJob) {
		klog.FromContext(ctx).Info("The WorkloadWithJob feature gate is on: kcm's job-controller does not create Workloads and PodGroups for Jobs")
	}
	c, err := NewController(ctx, Config{
		Name:                    name,
		Client:                  client,
		Jobs:                    cc.InformerFactory.Batch().V1().Jobs(),
		Pods:                    cc.InformerFactory.Core().V1().Pods(),
		Clock:                   cc.Clock,
		Workers:                 int(cc.Config.JobController.ConcurrentJobSyncs),
		ConsistencyCheck:        features.Enabled(cc.FeatureGate, features.StaleControllerConsistencyJob),
		ResetStartTimeOnSuspend: features.Enabled(cc.FeatureGate, features.MutableSchedulingDirectivesForSuspendedJobs),
	})
	if err != nil {
		return nil, fmt.Errorf("creating Job controller: %w", err)
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
	period := cfg.BatchPeriod
	if period <= 0 {
		period = SyncBatchPeriod
	}
	podInformer, jobInformer := cfg.Pods.Informer(), cfg.Jobs.Informer()
	if err := controllerref.AddPodControllerIndex(podInformer); err != nil {
		return nil, fmt.Errorf("adding pod index %q: %w", controllerref.PodControllerIndex, err)
	}
	if err := labelindex.Add(podInformer); err != nil {
		return nil, err
	}
	c := &Controller{
		name:                cfg.Name,
		client:              cfg.Client,
		clock:               clk,
		jobs:                cfg.Jobs.Lister(),
		pods:                cfg.Pods.Lister(),
		podIndexer:          podInformer.GetIndexer(),
		queue:               newQueue(queueName, clk),
		orphans:             newQueue(orphanQueueName, clk),
		expectations:        expectations.NewUIDTracking(clk),
		finalizers:          newFinalizerExpectations(),
		backoff:             newBackoffStore(),
		workers:             cfg.Workers,
		batchPeriod:         period,
		resetStartOnSuspend: cfg.ResetStartTimeOnSuspend,
		podControl:          cfg.PodControl,
		recorder:            cfg.Recorder,
	}
	if cfg.ConsistencyCheck {
		c.consistency = expectations.NewConsistency(map[schema.GroupResource]expectations.SyncedVersioner{
			podResource: podInformer.GetStore(),
			jobResource: jobInformer.GetStore(),
		})
	}
	logger := klog.FromContext(ctx)
	jobReg, err := jobInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.addJob(logger, obj) },
		UpdateFunc: func(oldObj, newObj any) { c.updateJob(logger, oldObj, newObj) },
		DeleteFunc: func(obj any) { c.deleteJob(logger, obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("adding Job event handler: %w", err)
	}
	podReg, err := podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.addPod(logger, obj) },
		UpdateFunc: func(oldObj, newObj any) { c.updatePod(logger, oldObj, newObj) },
		DeleteFunc: func(obj any) { c.deletePod(logger, obj, true) },
	})
	if err != nil {
		return nil, fmt.Errorf("adding Pod event handler: %w", err)
	}
	c.synced = []cache.InformerSynced{podReg.HasSynced, jobReg.HasSynced}
	return c, nil
}

func newQueue(name string, clk clock.WithTicker) workqueue.TypedRateLimitingInterface[string] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](retryBaseDelay, retryMaxDelay),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: name, Clock: controller.QueueClock(clk)},
	)
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run waits for the caches, then syncs Jobs and orphan pods, each with the
// configured number of workers, until ctx is cancelled. It returns once
// every worker exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting job controller")
	defer logger.Info("Shutting down job controller")

	if c.recorder == nil {
		recorder, stopEvents := controller.NewRecorder(ctx, c.client, ClientName)
		defer stopEvents()
		c.recorder = recorder
	}
	if c.podControl == nil {
		c.podControl = podcontrol.Real{Client: c.client, Recorder: c.recorder, OnWrite: c.podWritten}
	}
	jobs := controller.Workers{Name: c.name, Queue: c.queue, Sync: c.sync, WaitFor: c.synced}
	orphans := controller.Workers{Name: c.name + "-orphans", Queue: c.orphans, Sync: c.syncOrphan, WaitFor: c.synced}
	var wg sync.WaitGroup
	wg.Go(func() { jobs.Run(ctx, c.workers) })
	wg.Go(func() { orphans.Run(ctx, c.workers) })
	wg.Wait()
}

// podWritten records a pod the controller created or patched, so that the
// next sync of its Job waits until the pod informer has seen it.
func (c *Controller) podWritten(pod *v1.Pod, ref *metav1.OwnerReference) {
	if ref == nil {
		return
	}
	c.consistency.WroteAt(types.NamespacedName{Namespace: pod.Namespace, Name: ref.Name}, ref.UID, podResource, pod.ResourceVersion)
}
