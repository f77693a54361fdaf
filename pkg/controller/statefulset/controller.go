package statefulset

import (
	"context"
	"fmt"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/lru"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/controller/controllerref"
	"github.com/kcm-dev/kcm/internal/controller/expectations"
	"github.com/kcm-dev/kcm/internal/controller/history"
	"github.com/kcm-dev/kcm/internal/controller/podcontrol"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/features"
)

const (
	// ClientName is the client (and ServiceAccount) identity, and the
	// Event source component, of the statefulset-controller.
	ClientName = "statefulset-controller"
	queueName  = "statefulset"
)

var (
	controllerKind = apps.SchemeGroupVersion.WithKind("StatefulSet")
	podKind        = v1.SchemeGroupVersion.WithKind("Pod")

	setResource   = apps.SchemeGroupVersion.WithResource("statefulsets").GroupResource()
	podResource   = schema.GroupResource{Resource: "pods"}
	claimResource = schema.GroupResource{Resource: "persistentvolumeclaims"}
)

// Features are the feature gates that change the controller's behaviour.
type Features struct {
	// MaxUnavailable honours rollingUpdate.maxUnavailable
	// (MaxUnavailableStatefulSet).
	MaxUnavailable bool
	// Recreate implements the Recreate update strategy
	// (StatefulSetRecreateStrategy).
	Recreate bool
	// SemanticRevisions compares the latest revision to the set after
	// defaulting (StatefulSetSemanticRevisionComparison).
	SemanticRevisions bool
	// Consistency waits for the informers to see the controller's writes
	// before syncing a set again (StaleControllerConsistencyStatefulSet).
	Consistency bool
}

// FeaturesFrom reads Features from a feature gate (nil: v1.37 defaults).
func FeaturesFrom(fg featuregate.FeatureGate) Features {
	return Features{
		MaxUnavailable:    features.Enabled(fg, features.MaxUnavailableStatefulSet),
		Recreate:          features.Enabled(fg, features.StatefulSetRecreateStrategy),
		SemanticRevisions: features.Enabled(fg, features.StatefulSetSemanticRevisionComparison),
		Consistency:       features.Enabled(fg, features.StaleControllerConsistencyStatefulSet),
	}
}

// Config is what NewController needs.
type Config struct {
	Name   string
	Client kubernetes.Interface

	StatefulSets appsinformers.StatefulSetInformer
	Pods         coreinformers.PodInformer
	Claims       coreinformers.PersistentVolumeClaimInformer
	Revisions    appsinformers.ControllerRevisionInformer

	// Clock defaults to the real clock.
	Clock    clock.PassiveClock
	Workers  int
	Features Features
	// Recorder replaces the Event recorder Run builds (tests).
	Recorder record.EventRecorder
	// StatusSpacing is the period of progress-only status writes; 0
	// writes each at once, as upstream does.
	StatusSpacing time.Duration
}

// Controller runs StatefulSets: pods with stable identities and storage,
// created, updated and deleted in ordinal order.
type Controller struct {
	name     string
	client   kubernetes.Interface
	clock    clock.PassiveClock
	features gates

	setLister   appslisters.StatefulSetLister
	podLister   corelisters.PodLister
	claimLister corelisters.PersistentVolumeClaimLister
	podIndexer  cache.Indexer
	revIndexer  cache.Indexer
	synced      []cache.InformerSynced
	queue       workqueue.TypedRateLimitingInterface[string]
	workers     int

	history history.Client
	// podPatcher adopts and releases pods.
	podPatcher podcontrol.Interface
	// consistency is nil when the check is off.
	consistency *expectations.Consistency
	// revisionEquality remembers set generations that match their latest
	// revision semantically.
	revisionEquality *lru.Cache
	// patches remembers each set's revision data.
	patches setPatches
	// creations are the pods created that the cache has yet to show;
	// statusSpacer spaces progress-only status writes.
	creations    creations
	statusSpacer *controller.Spacer

	// recorder is set by Run, before any worker starts, unless
	// Config.Recorder was.
	recorder record.EventRecorder
}

// gates is Features for the controller's own use.
type gates struct {
	maxUnavailable, recreate, semanticRevisions bool
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the statefulset-controller.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	c, err := NewController(ctx, Config{
		Name:          name,
		Client:        client,
		StatefulSets:  cc.InformerFactory.Apps().V1().StatefulSets(),
		Pods:          cc.InformerFactory.Core().V1().Pods(),
		Claims:        cc.InformerFactory.Core().V1().PersistentVolumeClaims(),
		Revisions:     cc.InformerFactory.Apps().V1().ControllerRevisions(),
		Clock:         cc.Clock,
		Workers:       int(cc.Config.StatefulSetController.ConcurrentStatefulSetSyncs),
		Features:      FeaturesFrom(cc.FeatureGate),
		StatusSpacing: cc.Paced(StatusSpacing),
	})
	if err != nil {
		return nil, fmt.Errorf("error creating StatefulSet controller: %w", err)
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
	podInformer := cfg.Pods.Informer()
	if err := controllerref.AddPodControllerIndex(podInformer); err != nil {
		return nil, fmt.Errorf("adding pod index %q: %w", controllerref.PodControllerIndex, err)
	}
	revInformer := cfg.Revisions.Informer()
	if err := history.AddIndex(revInformer); err != nil {
		return nil, fmt.Errorf("adding ControllerRevision index: %w", err)
	}
	setInformer := cfg.StatefulSets.Informer()
	claimInformer := cfg.Claims.Informer()
	c := &Controller{
		name:             cfg.Name,
		client:           cfg.Client,
		clock:            clk,
		features:         gates{maxUnavailable: cfg.Features.MaxUnavailable, recreate: cfg.Features.Recreate, semanticRevisions: cfg.Features.SemanticRevisions},
		setLister:        cfg.StatefulSets.Lister(),
		podLister:        cfg.Pods.Lister(),
		claimLister:      cfg.Claims.Lister(),
		podIndexer:       podInformer.GetIndexer(),
		revIndexer:       revInformer.GetIndexer(),
		queue:            controller.Queue(queueName),
		workers:          cfg.Workers,
		history:          history.Client{Client: cfg.Client},
		revisionEquality: lru.New(revisionEqualityEntries),
		statusSpacer:     controller.NewSpacer(cfg.StatusSpacing, clk),
	}
	if cfg.Recorder != nil {
		c.setRecorder(cfg.Recorder)
	}
	if cfg.Features.Consistency {
		c.consistency = expectations.NewConsistency(map[schema.GroupResource]expectations.SyncedVersioner{
			podResource:   podInformer.GetStore(),
			claimResource: claimInformer.GetStore(),
			setResource:   setInformer.GetStore(),
		})
	}

	logger := klog.FromContext(ctx)
	podReg, err := podInformer.AddEventHandlerWithResyncPeriod(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.onPodAdd(logger, obj) },
		UpdateFunc: func(oldObj, newObj any) { c.onPodUpdate(logger, oldObj, newObj) },
		DeleteFunc: func(obj any) { c.onPodDelete(logger, obj) },
	}, 0)
	if err != nil {
		return nil, fmt.Errorf("adding Pod event handler: %w", err)
	}
	// Sets keep the factory's resync, as upstream: a periodic full sync.
	setReg, err := setInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.enqueue(logger, obj) },
		UpdateFunc: func(oldObj, newObj any) { c.onSetUpdate(logger, oldObj, newObj) },
		DeleteFunc: func(obj any) { c.onSetDelete(logger, obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("adding StatefulSet event handler: %w", err)
	}
	c.synced = []cache.InformerSynced{podReg.HasSynced, setReg.HasSynced, claimInformer.HasSynced, revInformer.HasSynced}
	return c, nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run waits for the caches, then syncs StatefulSets with the configured
// number of workers until ctx is cancelled. It returns once all workers
// exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting stateful set controller")
	defer logger.Info("Shutting down statefulset controller")

	if c.recorder == nil {
		recorder, stopEvents := controller.NewRecorder(ctx, c.client, ClientName)
		defer stopEvents()
		c.setRecorder(recorder)
	}
	w := controller.Workers{Name: c.name, Queue: c.queue, Sync: c.sync, WaitFor: c.synced}
	w.Run(ctx, c.workers)
}

// setRecorder sets the Event recorder and the pod patcher that uses it.
func (c *Controller) setRecorder(r record.EventRecorder) {
	c.recorder = r
	c.podPatcher = podcontrol.Real{Client: c.client, Recorder: r, OnWrite: c.podWritten}
}

// recordWrite notes that the controller wrote resource at rv for set, so
// that set's next sync waits until the informer has seen it.
func (c *Controller) recordWrite(set metav1.Object, resource schema.GroupResource, rv string) {
	c.consistency.WroteAt(types.NamespacedName{Namespace: set.GetNamespace(), Name: set.GetName()}, set.GetUID(), resource, rv)
}

// podWritten records a pod adopted or released for its controller.
func (c *Controller) podWritten(pod *v1.Pod, ref *metav1.OwnerReference) {
	if ref == nil {
		return
	}
	c.consistency.WroteAt(types.NamespacedName{Namespace: pod.Namespace, Name: ref.Name}, ref.UID, podResource, pod.ResourceVersion)
}
