package persistentvolume

import (
	"context"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/controller/storageutil"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/features"
)

const (
	// ClientName is the client (and ServiceAccount) identity of the
	// persistentvolume-binder-controller, upstream's.
	ClientName = "persistent-volume-binder"
	// eventComponent is the source of its Events, upstream's.
	eventComponent = "persistentvolume-controller"

	// createProvisionedPVRetryCount and createProvisionedPVInterval bound
	// the saving of a volume the hostPath provisioner created (and the
	// cleanup when saving fails).
	createProvisionedPVRetryCount = 5
	createProvisionedPVInterval   = 10 * time.Second
)

// Config is what NewController needs. Tests fill it with fakes.
type Config struct {
	// Name is the controller's canonical name.
	Name      string
	Client    kubernetes.Interface
	Informers informers.SharedInformerFactory
	// SyncPeriod is --pvclaimbinder-sync-period: every volume and claim is
	// synced again this often (unbound claims find new volumes this way).
	SyncPeriod time.Duration
	// EnableDynamicProvisioning is --enable-dynamic-provisioning.
	EnableDynamicProvisioning bool
	// HostPath configures the built-in hostPath plugin (provisioner,
	// deleter, recycler) and the NFS recycler.
	HostPath HostPathConfig
	Recycler RecyclerConfig
	// VolumeAttributesClass is the feature gate of that name.
	VolumeAttributesClass bool
	// ProvisionRetryInterval defaults to createProvisionedPVInterval.
	ProvisionRetryInterval time.Duration
}

// volumeWorkers is how many volumes are synced at once. Upstream syncs one
// at a time, so 500 volumes created or released together wait for 500
// sequential status updates. A volume's sync writes only that volume
// (binding, which picks among volumes, stays in the one claim worker), and
// the queue never hands one volume to two workers.
const volumeWorkers = 4

// Controller binds PersistentVolumeClaims to PersistentVolumes, hands
// provisioning and deletion to external provisioners (or does them with
// the hostPath plugin) and reclaims released volumes.
type Controller struct {
	name       string
	client     kubernetes.Interface
	syncPeriod time.Duration
	dynamic    bool
	vac        bool
	retryEvery time.Duration

	volumeLister corelisters.PersistentVolumeLister
	claimLister  corelisters.PersistentVolumeClaimLister
	classLister  storagelisters.StorageClassLister
	nodeLister   corelisters.NodeLister
	podIndexer   cache.Indexer
	synced       []cache.InformerSynced

	// volumes and claims are the controller's own view: the informers'
	// objects, replaced by the controller's own writes as soon as they
	// succeed, never by an older resourceVersion. A sync right after a
	// write sees that write even before the informer delivers it.
	volumes *volumeIndex
	claims  cache.Store

	claimQueue  workqueue.TypedRateLimitingInterface[string]
	volumeQueue workqueue.TypedRateLimitingInterface[string]

	// ops runs provisioning, deletion and recycling, one at a time per
	// claim or volume, with exponential back-off after failures.
	ops *operations
	// opTimes holds the starts of provisionings and deletions, for
	// volume_operation_total_seconds (metrics.go).
	opTimes *operationTimes
	// deleted holds the UIDs of volumes this controller has deleted
	// (plugin and API) that are not gone yet: finalizers hold them.
	deleted sync.Map

	hostPath hostPathPlugin
	recycler recycler

	broadcaster record.EventBroadcaster
	recorder    record.EventRecorder
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the
// persistentvolume-binder-controller.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	o := cc.Config.PersistentVolumeBinderController
	r := o.PersistentVolumeRecyclerConfiguration
	rc := RecyclerConfig{
		HostPathMinimumTimeout: int(r.MinimumTimeoutHostPath),
		HostPathIncrement:      int(r.IncrementTimeoutHostPath),
		NFSMinimumTimeout:      int(r.MinimumTimeoutNFS),
		NFSIncrement:           int(r.IncrementTimeoutNFS),
	}
	if rc.HostPathTemplate, err = loadRecyclerTemplate(r.PodTemplateFilePathHostPath); err != nil {
		return nil, err
	}
	if rc.NFSTemplate, err = loadRecyclerTemplate(r.PodTemplateFilePathNFS); err != nil {
		return nil, err
	}
	return NewController(ctx, Config{
		Name:                      name,
		Client:                    client,
		Informers:                 cc.InformerFactory,
		SyncPeriod:                o.PVClaimBinderSyncPeriod.Duration,
		EnableDynamicProvisioning: o.EnableDynamicProvisioning,
		HostPath:                  HostPathConfig{ProvisioningEnabled: o.EnableHostPathProvisioning},
		Recycler:                  rc,
		VolumeAttributesClass:     features.Enabled(cc.FeatureGate, features.VolumeAttributesClass),
	})
}

// NewController registers the controller's informer handlers and the pod
// index by claim. It does no API I/O.
func NewController(ctx context.Context, cfg Config) (*Controller, error) {
	f := cfg.Informers
	pvInformer := f.Core().V1().PersistentVolumes()
	pvcInformer := f.Core().V1().PersistentVolumeClaims()
	classInformer := f.Storage().V1().StorageClasses()
	podInformer := f.Core().V1().Pods()
	nodeInformer := f.Core().V1().Nodes()
	if err := storageutil.AddPodPVCIndex(podInformer.Informer()); err != nil {
		return nil, err
	}
	retry := cfg.ProvisionRetryInterval
	if retry == 0 {
		retry = createProvisionedPVInterval
	}
	syncPeriod := cfg.SyncPeriod
	if syncPeriod <= 0 {
		syncPeriod = 15 * time.Second
	}
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	c := &Controller{
		name:         cfg.Name,
		client:       cfg.Client,
		syncPeriod:   syncPeriod,
		dynamic:      cfg.EnableDynamicProvisioning,
		vac:          cfg.VolumeAttributesClass,
		retryEvery:   retry,
		volumeLister: pvInformer.Lister(),
		claimLister:  pvcInformer.Lister(),
		classLister:  classInformer.Lister(),
		nodeLister:   nodeInformer.Lister(),
		podIndexer:   podInformer.Informer().GetIndexer(),
		synced: []cache.InformerSynced{
			pvInformer.Informer().HasSynced, pvcInformer.Informer().HasSynced,
			classInformer.Informer().HasSynced, podInformer.Informer().HasSynced,
			nodeInformer.Informer().HasSynced,
		},
		volumes:     newVolumeIndex(),
		claims:      cache.NewStore(cache.DeletionHandlingMetaNamespaceKeyFunc),
		claimQueue:  controller.Queue("claims"),
		volumeQueue: controller.Queue("volumes"),
		ops:         newOperations(),
		opTimes:     newOperationTimes(),
		hostPath:    newHostPathPlugin(cfg.HostPath),
		recycler:    recycler{config: cfg.Recycler, client: cfg.Client},
		broadcaster: broadcaster,
		recorder:    broadcaster.NewRecorder(scheme.Scheme, v1.EventSource{Component: eventComponent}),
	}
	logger := klog.FromContext(ctx)
	enqueue := func(q workqueue.TypedInterface[string]) cache.ResourceEventHandlerFuncs {
		add := func(obj any) {
			key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
			if err != nil {
				logger.Error(err, "Failed to get key from object")
				return
			}
			q.Add(key)
		}
		return cache.ResourceEventHandlerFuncs{
			AddFunc:    add,
			UpdateFunc: func(_, obj any) { add(obj) },
			DeleteFunc: add,
		}
	}
	if _, err := pvInformer.Informer().AddEventHandlerWithOptions(enqueue(c.volumeQueue), cache.HandlerOptions{Logger: &logger}); err != nil {
		return nil, err
	}
	if _, err := pvcInformer.Informer().AddEventHandlerWithOptions(enqueue(c.claimQueue), cache.HandlerOptions{Logger: &logger}); err != nil {
		return nil, err
	}
	registerBinderMetrics(c)
	return c, nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run waits for the caches, fills the controller's own view from them,
// then runs one claim worker, volumeWorkers volume workers and the
// periodic resync until ctx is cancelled. It returns once they and every
// provisioning, deletion or recycling operation have exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting persistent volume controller")
	defer logger.Info("Shutting down persistent volume controller")

	c.broadcaster.StartStructuredLogging(3)
	c.broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: c.client.CoreV1().Events("")})
	defer c.broadcaster.Shutdown()
	defer c.ops.wait()

	if !cache.WaitForNamedCacheSyncWithContext(ctx, c.synced...) {
		c.claimQueue.ShutDown()
		c.volumeQueue.ShutDown()
		return
	}
	c.initializeCaches(logger)

	volumes := controller.Workers{Name: c.name, Queue: c.volumeQueue, Sync: c.syncVolumeKey}
	claims := controller.Workers{Name: c.name, Queue: c.claimQueue, Sync: c.syncClaimKey}
	var wg sync.WaitGroup
	wg.Go(func() { wait.UntilWithContext(ctx, c.resync, c.syncPeriod) })
	wg.Go(func() { volumes.Run(ctx, volumeWorkers) })
	wg.Go(func() { claims.Run(ctx, 1) })
	wg.Wait()
}

// initializeCaches copies the informers' objects into the controller's
// own view.
func (c *Controller) initializeCaches(logger klog.Logger) {
	volumes, err := c.volumeLister.List(labels.Everything())
	if err != nil {
		logger.Error(err, "PersistentVolumeController can't initialize caches")
		return
	}
	for _, v := range volumes {
		if _, err := c.storeVolume(v.DeepCopy()); err != nil {
			logger.Error(err, "Error updating volume cache")
		}
	}
	claims, err := c.claimLister.List(labels.Everything())
	if err != nil {
		logger.Error(err, "PersistentVolumeController can't initialize caches")
		return
	}
	for _, claim := range claims {
		if _, err := c.storeClaim(claim.DeepCopy()); err != nil {
			logger.Error(err, "Error updating claim cache")
		}
	}
}

// resync queues every claim and volume.
func (c *Controller) resync(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.V(4).Info("Resyncing PV controller")
	claims, err := c.claimLister.List(labels.Everything())
	if err != nil {
		logger.Info("Cannot list claims", "err", err)
		return
	}
	for _, claim := range claims {
		c.claimQueue.Add(claimKey(claim))
	}
	volumes, err := c.volumeLister.List(labels.Everything())
	if err != nil {
		logger.Info("Cannot list persistent volumes", "err", err)
		return
	}
	for _, v := range volumes {
		c.volumeQueue.Add(v.Name)
	}
}
