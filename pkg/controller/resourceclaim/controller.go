package resourceclaim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	coreinformers "k8s.io/client-go/informers/core/v1"
	resourceinformers "k8s.io/client-go/informers/resource/v1"
	schedulinginformers "k8s.io/client-go/informers/scheduling/v1beta1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	resourcelisters "k8s.io/client-go/listers/resource/v1"
	schedulinglisters "k8s.io/client-go/listers/scheduling/v1beta1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/lru"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/features"
)

const (
	// ClientName is upstream's client identity for the controller (the
	// apiserver's bootstrap RBAC grants it).
	ClientName = "resource-claim-controller"
	// eventComponent is the source component of the controller's Events.
	eventComponent = "resource_claim"
	// queueName is upstream's workqueue metrics name.
	queueName = "resource_claim"
	// fieldManager owns the pod and PodGroup status entries the
	// controller applies, as upstream's.
	fieldManager = "ResourceClaimController"

	// Work item prefixes, upstream's.
	podKeyPrefix      = "pod:"
	podGroupKeyPrefix = "podgroup:"
	claimKeyPrefix    = "claim:"

	// deletedCacheSize bounds the memory of deleted consumers' UIDs.
	deletedCacheSize = 500
	// createdCacheSize bounds the claims created and not yet cached.
	createdCacheSize = 1000
)

// Features are the gates the controller reads once, at construction.
// DRAAdminAccess and DRAPrioritizedList are locked on in v1.37, so the
// checks upstream keeps for them never refuse a template and are not here.
type Features struct {
	// GenericWorkload: pods may belong to a PodGroup
	// (spec.schedulingGroup); off by default.
	GenericWorkload bool
	// WorkloadResourceClaims (DRAWorkloadResourceClaims): PodGroups get
	// claims of their own, shared by their pods; off by default.
	WorkloadResourceClaims bool
}

// Config holds what the controller is built from.
type Config struct {
	Name      string
	Client    kubernetes.Interface
	Pods      coreinformers.PodInformer
	PodGroups schedulinginformers.PodGroupInformer // read only under the gates
	Claims    resourceinformers.ResourceClaimInformer
	Templates resourceinformers.ResourceClaimTemplateInformer
	Features  Features
	Workers   int
}

// Controller creates the ResourceClaims of pods' (and PodGroups')
// claim templates, records them in their status, reserves allocated
// claims for pods bound without the scheduler and releases the
// reservations of pods that are gone or finished.
type Controller struct {
	name     string
	client   kubernetes.Interface
	features Features
	workers  int

	pods       corelisters.PodLister
	podIndexer cache.Indexer
	podGroups  schedulinglisters.PodGroupLister // nil without GenericWorkload
	groupIndex cache.Indexer                    // nil without WorkloadResourceClaims
	claims     resourcelisters.ResourceClaimLister
	templates  resourcelisters.ResourceClaimTemplateLister
	synced     []cache.InformerSynced

	// created layers the claims this controller created over the
	// informer's cache until the cache has them, so that a retry after a
	// failed status write finds the claim instead of creating another.
	created cache.MutationCache
	// deleted remembers the UIDs of pods and PodGroups seen deleted: their
	// reservations go without asking the API server whether they exist.
	deleted *lru.Cache

	queue        workqueue.TypedRateLimitingInterface[string]
	recorder     record.EventRecorder
	stopRecorder func()
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the
// resourceclaim-controller.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	c, err := NewController(ctx, Config{
		Name:      name,
		Client:    client,
		Pods:      cc.InformerFactory.Core().V1().Pods(),
		PodGroups: cc.InformerFactory.Scheduling().V1beta1().PodGroups(),
		Claims:    cc.InformerFactory.Resource().V1().ResourceClaims(),
		Templates: cc.InformerFactory.Resource().V1().ResourceClaimTemplates(),
		Features: Features{
			GenericWorkload:        features.Enabled(cc.FeatureGate, features.GenericWorkload),
			WorkloadResourceClaims: features.Enabled(cc.FeatureGate, features.DRAWorkloadResourceClaims),
		},
		Workers: int(cc.Config.ResourceClaimController.ConcurrentSyncs),
	})
	if err != nil {
		return nil, fmt.Errorf("failed to init resource claim controller: %w", err)
	}
	return c, nil
}

// NewController builds the controller; it does no API I/O.
func NewController(ctx context.Context, cfg Config) (*Controller, error) {
	logger := klog.FromContext(ctx)
	podInformer := cfg.Pods.Informer()
	claimInformer := cfg.Claims.Informer()
	c := &Controller{
		name:       cfg.Name,
		client:     cfg.Client,
		features:   cfg.Features,
		workers:    cfg.Workers,
		pods:       cfg.Pods.Lister(),
		podIndexer: podInformer.GetIndexer(),
		claims:     cfg.Claims.Lister(),
		templates:  cfg.Templates.Lister(),
		deleted:    lru.New(deletedCacheSize),
		queue:      controller.Queue(queueName),
	}
	if err := podInformer.AddIndexers(cache.Indexers{
		podClaimIndex:    podClaimIndexFunc,
		podTemplateIndex: podTemplateIndexFunc,
	}); err != nil {
		return nil, fmt.Errorf("could not initialize ResourceClaim controller: %w", err)
	}
	if err := claimInformer.AddIndexers(cache.Indexers{claimPodOwnerIndex: claimPodOwnerIndexFunc}); err != nil {
		return nil, fmt.Errorf("could not initialize ResourceClaim controller: %w", err)
	}
	podReg, err := podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.podChanged(logger, obj, false) },
		UpdateFunc: func(_, obj any) { c.podChanged(logger, obj, false) },
		DeleteFunc: func(obj any) { c.podChanged(logger, obj, true) },
	})
	if err != nil {
		return nil, err
	}
	claimReg, err := claimInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.claimChanged(logger, obj, false) },
		UpdateFunc: func(_, obj any) { c.claimChanged(logger, obj, false) },
		DeleteFunc: func(obj any) { c.claimChanged(logger, obj, true) },
	})
	if err != nil {
		return nil, err
	}
	templateReg, err := cfg.Templates.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.templateChanged(logger, obj) },
		UpdateFunc: func(_, obj any) { c.templateChanged(logger, obj) },
	})
	if err != nil {
		return nil, err
	}
	c.synced = []cache.InformerSynced{podReg.HasSynced, claimReg.HasSynced, templateReg.HasSynced}
	if cfg.Features.GenericWorkload || cfg.Features.WorkloadResourceClaims {
		c.podGroups = cfg.PodGroups.Lister()
	}
	if cfg.Features.WorkloadResourceClaims {
		if err := c.watchPodGroups(logger, cfg, podInformer, claimInformer); err != nil {
			return nil, fmt.Errorf("could not initialize ResourceClaim controller: %w", err)
		}
	}
	c.created = cache.NewIntegerResourceVersionMutationCacheWithOptions(logger, claimInformer.GetIndexer(), cache.MutationCacheOptions{
		Indexer: claimInformer.GetIndexer(),
		// The informer normally catches up within a second; the hour only
		// bounds an entry whose claim was deleted before it did.
		TTL:          time.Hour,
		IncludeAdds:  true,
		MaxCacheSize: createdCacheSize,
	})
	registerMetrics(c.claims)
	c.recorder, c.stopRecorder = controller.NewRecorder(ctx, cfg.Client, eventComponent)
	return c, nil
}

// watchPodGroups adds the PodGroup handler and indexes
// (DRAWorkloadResourceClaims).
func (c *Controller) watchPodGroups(logger klog.Logger, cfg Config, podInformer, claimInformer cache.SharedIndexInformer) error {
	groupInformer := cfg.PodGroups.Informer()
	c.groupIndex = groupInformer.GetIndexer()
	if err := groupInformer.AddIndexers(cache.Indexers{
		groupClaimIndex:    groupClaimIndexFunc,
		groupTemplateIndex: groupTemplateIndexFunc,
	}); err != nil {
		return err
	}
	if err := podInformer.AddIndexers(cache.Indexers{groupMembersIndex: groupMembersIndexFunc}); err != nil {
		return err
	}
	if err := claimInformer.AddIndexers(cache.Indexers{claimGroupOwnerIndex: claimGroupOwnerIndexFunc}); err != nil {
		return err
	}
	reg, err := groupInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.podGroupChanged(logger, obj, false) },
		UpdateFunc: func(_, obj any) { c.podGroupChanged(logger, obj, false) },
		DeleteFunc: func(obj any) { c.podGroupChanged(logger, obj, true) },
	})
	if err != nil {
		return err
	}
	c.synced = append(c.synced, reg.HasSynced)
	return nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run processes work items until ctx is cancelled and returns once the
// workers have exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting resource claim controller")
	defer logger.Info("Shutting down resource claim controller")
	defer c.stopRecorder()
	w := controller.Workers{Name: c.name, Queue: c.queue, Sync: c.sync, WaitFor: c.synced}
	w.Run(ctx, c.workers)
}

// sync dispatches a work item by its prefix.
func (c *Controller) sync(ctx context.Context, key string) error {
	prefix, object, ok := strings.Cut(key, ":")
	if !ok {
		return controller.Permanent(fmt.Errorf("unexpected key: %s", key))
	}
	namespace, name, err := cache.SplitMetaNamespaceKey(object)
	if err != nil {
		return controller.Permanent(err)
	}
	switch prefix + ":" {
	case podKeyPrefix:
		err = c.syncPod(ctx, namespace, name)
	case podGroupKeyPrefix:
		err = c.syncPodGroup(ctx, namespace, name)
	case claimKeyPrefix:
		err = c.syncClaim(ctx, namespace, name)
	default:
		err = permanent{fmt.Errorf("unexpected key prefix: %s", prefix)}
	}
	if _, ok := errors.AsType[permanent](err); ok {
		return controller.Permanent(err)
	}
	return err
}

// permanent marks an error that retrying cannot cure (a feature gate is
// off); the item is dropped until its object changes. Upstream's
// nonRetryableError.
type permanent struct{ error }

// wasDeleted reports whether a pod or PodGroup of this UID was seen
// deleted.
func (c *Controller) wasDeleted(uid types.UID) bool {
	_, ok := c.deleted.Get(uid)
	return ok
}

// objectOf unwraps a deletion tombstone.
func objectOf(obj any) any {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return obj
}
