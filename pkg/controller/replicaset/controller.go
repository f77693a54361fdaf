package replicaset

import (
	"context"
	"fmt"
	"strings"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
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
	// source component, of the replicaset-controller.
	ClientName = "replicaset-controller"
	// BurstReplicas bounds the pods created or deleted by one sync.
	BurstReplicas = 500
	// StatusSpacing is the Spacer period of status writes that only report
	// progress, and of the syncs that pod status changes cause (upstream
	// writes and syncs each). Pods of one owner tend to become ready within
	// a fraction of a second of each other; one status write for them
	// instead of one each saves requests, and the Deployment syncs and
	// writes each of them causes.
	StatusSpacing = time.Second

	queueName = "replicaset"
	// statusUpdateRetries is how often a failed status update is retried,
	// after a fresh GET, before the key is requeued.
	statusUpdateRetries = 1
)

var (
	podResource        = schema.GroupResource{Resource: "pods"}
	replicaSetResource = apps.SchemeGroupVersion.WithResource("replicasets").GroupResource()
	replicaSetKind     = apps.SchemeGroupVersion.WithKind("ReplicaSet")
)

// Owners is the controller's access to the objects it manages, each seen
// as a ReplicaSet. Objects returned from the cache may share memory with
// it: they are read-only.
type Owners interface {
	// Informer is the owners' shared informer.
	Informer() cache.SharedIndexInformer
	// Get returns the cached owner.
	Get(namespace, name string) (*apps.ReplicaSet, error)
	// ForPod returns the cached owners whose selector matches the pod.
	ForPod(pod *v1.Pod) []*apps.ReplicaSet
	// ControlledBy returns the cached owners whose controller has uid.
	ControlledBy(uid types.UID) []*apps.ReplicaSet
	// GetFresh reads the owner from the API server, bypassing the cache.
	GetFresh(ctx context.Context, namespace, name string) (*apps.ReplicaSet, error)
	// UpdateStatus writes rs.Status through the status subresource.
	UpdateStatus(ctx context.Context, rs *apps.ReplicaSet) (*apps.ReplicaSet, error)
}

// Config is what NewController needs to run the controller for one kind.
type Config struct {
	// Name is the controller's canonical name.
	Name string
	// EventComponent is the source of the Events it records.
	EventComponent string
	// QueueName is the workqueue metrics name.
	QueueName string
	// Kind and Resource identify the owners' API.
	Kind     schema.GroupVersionKind
	Resource schema.GroupResource

	Client kubernetes.Interface
	Owners Owners
	Pods   coreinformers.PodInformer
	// Clock defaults to the real clock.
	Clock clock.PassiveClock

	Workers       int
	BurstReplicas int
	// TerminatingReplicas reports status.terminatingReplicas.
	TerminatingReplicas bool
	// ConsistencyCheck waits for the informers to see the controller's
	// writes before syncing an owner again.
	ConsistencyCheck bool
	// PodDeletionCost ranks pods by their pod-deletion-cost annotation.
	PodDeletionCost bool
	// StatusSpacing is the Spacer period of progress-only status writes
	// and of pod status syncs; 0 does each at once, as upstream does.
	StatusSpacing time.Duration

	// PodControl replaces the pod control Run builds over Client (tests).
	PodControl podcontrol.Interface
}

// Controller keeps the pods of ReplicaSet-like owners at their replica
// count.
type Controller struct {
	name      string
	component string
	kind      schema.GroupVersionKind
	resource  schema.GroupResource
	client    kubernetes.Interface
	owners    Owners
	clock     clock.PassiveClock

	podIndexer cache.Indexer
	synced     []cache.InformerSynced
	queue      workqueue.TypedRateLimitingInterface[string]

	expectations *expectations.UIDTracking
	// consistency is nil when the check is off.
	consistency *expectations.Consistency

	workers             int
	burstReplicas       int
	terminatingReplicas bool
	deletionCost        bool
	// statusSpacer spaces progress-only status writes and pod status syncs.
	statusSpacer *controller.Spacer

	// podControl is set by Run, before any worker starts, unless
	// Config.PodControl was.
	podControl podcontrol.Interface
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the replicaset-controller.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	rsInformer := cc.InformerFactory.Apps().V1().ReplicaSets()
	owners, err := newReplicaSetOwners(rsInformer, client)
	if err != nil {
		return nil, fmt.Errorf("error creating ReplicaSet controller: %w", err)
	}
	c, err := NewController(ctx, Config{
		Name:                name,
		EventComponent:      ClientName,
		QueueName:           queueName,
		Kind:                replicaSetKind,
		Resource:            replicaSetResource,
		Client:              client,
		Owners:              owners,
		Pods:                cc.InformerFactory.Core().V1().Pods(),
		Clock:               cc.Clock,
		Workers:             int(cc.Config.ReplicaSetController.ConcurrentRSSyncs),
		BurstReplicas:       BurstReplicas,
		TerminatingReplicas: features.Enabled(cc.FeatureGate, features.DeploymentReplicaSetTerminatingReplicas),
		ConsistencyCheck:    features.Enabled(cc.FeatureGate, features.StaleControllerConsistencyReplicaSet),
		PodDeletionCost:     features.Enabled(cc.FeatureGate, features.PodDeletionCost),
		StatusSpacing:       cc.Paced(StatusSpacing),
	})
	if err != nil {
		return nil, fmt.Errorf("error creating ReplicaSet controller: %w", err)
	}
	registerMetrics()
	return c, nil
}

// NewController builds the controller for the kind cfg describes and
// registers its informer handlers and indexes. It does no API I/O.
func NewController(ctx context.Context, cfg Config) (*Controller, error) {
	clk := cfg.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	podInformer := cfg.Pods.Informer()
	if err := controllerref.AddPodControllerIndex(podInformer); err != nil {
		return nil, fmt.Errorf("adding pod index %q: %w", controllerref.PodControllerIndex, err)
	}
	if err := labelindex.Add(podInformer); err != nil {
		return nil, err
	}
	c := &Controller{
		name:                cfg.Name,
		component:           cfg.EventComponent,
		kind:                cfg.Kind,
		resource:            cfg.Resource,
		client:              cfg.Client,
		owners:              cfg.Owners,
		clock:               clk,
		podIndexer:          podInformer.GetIndexer(),
		queue:               controller.Queue(cfg.QueueName),
		expectations:        expectations.NewUIDTracking(clk),
		workers:             cfg.Workers,
		burstReplicas:       cfg.BurstReplicas,
		terminatingReplicas: cfg.TerminatingReplicas,
		deletionCost:        cfg.PodDeletionCost,
		statusSpacer:        controller.NewSpacer(cfg.StatusSpacing, clk),
		podControl:          cfg.PodControl,
	}
	ownerInformer := cfg.Owners.Informer()
	if cfg.ConsistencyCheck {
		c.consistency = expectations.NewConsistency(map[schema.GroupResource]expectations.SyncedVersioner{
			podResource:  podInformer.GetStore(),
			cfg.Resource: ownerInformer.GetStore(),
		})
	}

	logger := klog.FromContext(ctx)
	// Owners keep the factory's resync, as upstream: a periodic full
	// status check. Pod resyncs carry nothing new (same resourceVersion).
	ownerReg, err := ownerInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.addOwner(logger, obj) },
		UpdateFunc: func(oldObj, newObj any) { c.updateOwner(logger, oldObj, newObj) },
		DeleteFunc: func(obj any) { c.deleteOwner(logger, obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("adding %s event handler: %w", cfg.Kind.Kind, err)
	}
	podReg, err := podInformer.AddEventHandlerWithResyncPeriod(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.addPod(logger, obj) },
		UpdateFunc: func(oldObj, newObj any) { c.updatePod(logger, oldObj, newObj) },
		DeleteFunc: func(obj any) { c.deletePod(logger, obj) },
	}, 0)
	if err != nil {
		return nil, fmt.Errorf("adding Pod event handler: %w", err)
	}
	c.synced = []cache.InformerSynced{podReg.HasSynced, ownerReg.HasSynced}
	return c, nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run waits for the caches, then syncs owners with the configured number
// of workers until ctx is cancelled. It returns once all workers exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	kind := strings.ToLower(c.kind.Kind)
	logger.Info("Starting controller", "name", kind)
	defer logger.Info("Shutting down controller", "name", kind)

	recorder, stopEvents := controller.NewRecorder(ctx, c.client, c.component)
	defer stopEvents()
	if c.podControl == nil {
		c.podControl = podcontrol.Real{Client: c.client, Recorder: recorder, OnWrite: c.podWritten}
	}
	w := controller.Workers{Name: c.name, Queue: c.queue, Sync: c.sync, WaitFor: c.synced}
	w.Run(ctx, c.workers)
}

// podWritten records a pod the controller created or adopted, so that the
// next sync of its owner waits until the pod informer has seen it.
func (c *Controller) podWritten(pod *v1.Pod, ref *metav1.OwnerReference) {
	if ref == nil {
		return
	}
	c.consistency.WroteAt(types.NamespacedName{Namespace: pod.Namespace, Name: ref.Name}, ref.UID, podResource, pod.ResourceVersion)
}

// eventTarget is the object Events about rs are recorded on: a reference
// of the owner's real kind.
func (c *Controller) eventTarget(rs *apps.ReplicaSet) *v1.ObjectReference {
	return &v1.ObjectReference{
		Kind:            c.kind.Kind,
		APIVersion:      c.kind.GroupVersion().String(),
		Namespace:       rs.Namespace,
		Name:            rs.Name,
		UID:             rs.UID,
		ResourceVersion: rs.ResourceVersion,
	}
}
