package vacprotection

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/controller/storageutil"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

const (
	// ClientName is upstream's client identity for the controller.
	ClientName = "volumeattributesclass-protection-controller"
	// queueName is upstream's workqueue metrics name.
	queueName = "vacprotection"
	// classIndex is upstream's name of the PV and PVC indexes by class.
	classIndex = "volumeAttributesClassName"
	// workers is fixed to one, as upstream does.
	workers = 1
)

// Controller adds and removes the VolumeAttributesClass protection
// finalizer.
type Controller struct {
	name       string
	client     kubernetes.Interface
	vacs       storagelisters.VolumeAttributesClassLister
	pvIndexer  cache.Indexer
	pvcIndexer cache.Indexer
	synced     []cache.InformerSynced
	queue      workqueue.TypedRateLimitingInterface[string]
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the
// volumeattributesclass-protection-controller.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	c, err := NewController(ctx, name, client, cc.InformerFactory)
	if err != nil {
		return nil, fmt.Errorf("failed to init the vac protection controller: %w", err)
	}
	return c, nil
}

// NewController builds the controller on f's informers; it does no API I/O.
func NewController(ctx context.Context, name string, client kubernetes.Interface, f informers.SharedInformerFactory) (*Controller, error) {
	pvInformer := f.Core().V1().PersistentVolumes().Informer()
	pvcInformer := f.Core().V1().PersistentVolumeClaims().Informer()
	vacInformer := f.Storage().V1().VolumeAttributesClasses()
	if err := addIndex(pvInformer, pvClasses); err != nil {
		return nil, fmt.Errorf("failed to add index to PV informer: %w", err)
	}
	if err := addIndex(pvcInformer, pvcClasses); err != nil {
		return nil, fmt.Errorf("failed to add index to PVC informer: %w", err)
	}
	c := &Controller{
		name:       name,
		client:     client,
		vacs:       vacInformer.Lister(),
		pvIndexer:  pvInformer.GetIndexer(),
		pvcIndexer: pvcInformer.GetIndexer(),
		queue:      controller.Queue(queueName),
	}
	logger := klog.FromContext(ctx)
	vacReg, err := vacInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.vacChanged(logger, obj) },
		UpdateFunc: func(_, obj any) { c.vacChanged(logger, obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("failed to add event handler to VAC informer: %w", err)
	}
	pvcReg, err := pvcInformer.AddEventHandler(referrerHandler(c.queue, pvcClasses))
	if err != nil {
		return nil, fmt.Errorf("failed to add event handler to PVC informer: %w", err)
	}
	pvReg, err := pvInformer.AddEventHandler(referrerHandler(c.queue, pvClasses))
	if err != nil {
		return nil, fmt.Errorf("failed to add event handler to PV informer: %w", err)
	}
	c.synced = []cache.InformerSynced{vacReg.HasSynced, pvcReg.HasSynced, pvReg.HasSynced}
	return c, nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run processes classes until ctx is cancelled and returns once the worker
// has exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting VAC protection controller")
	defer logger.Info("Shutting down VAC protection controller")
	w := controller.Workers{Name: c.name, Queue: c.queue, Sync: c.sync, WaitFor: c.synced}
	w.Run(ctx, workers)
}

func (c *Controller) vacChanged(logger klog.Logger, obj any) {
	vac, ok := obj.(*storagev1.VolumeAttributesClass)
	if !ok {
		utilruntime.HandleErrorWithLogger(logger, nil, "VAC informer returned non-VAC object", "type", fmt.Sprintf("%T", obj))
		return
	}
	if storageutil.NeedToAddFinalizer(vac, storageutil.VACProtectionFinalizer) ||
		storageutil.IsDeletionCandidate(vac, storageutil.VACProtectionFinalizer) {
		c.queue.Add(vac.Name)
	}
}

// referrerHandler queues the classes a volume or claim stopped naming: by
// an update that dropped them, or by its deletion.
func referrerHandler(q workqueue.TypedInterface[string], classes func(obj any) []string) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, obj any) {
			for _, n := range sets.List(sets.New(classes(old)...).Delete(classes(obj)...)) {
				q.Add(n)
			}
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			for _, n := range classes(obj) {
				q.Add(n)
			}
		},
	}
}

// pvcClasses are the classes a claim names in its spec and status.
func pvcClasses(obj any) []string {
	pvc, ok := obj.(*v1.PersistentVolumeClaim)
	if !ok {
		return nil
	}
	names := sets.New[string]()
	if n := pvc.Spec.VolumeAttributesClassName; n != nil && *n != "" {
		names.Insert(*n)
	}
	if n := pvc.Status.CurrentVolumeAttributesClassName; n != nil && *n != "" {
		names.Insert(*n)
	}
	if s := pvc.Status.ModifyVolumeStatus; s != nil && s.TargetVolumeAttributesClassName != "" {
		names.Insert(s.TargetVolumeAttributesClassName)
	}
	return sets.List(names)
}

// pvClasses is the class a volume names in its spec.
func pvClasses(obj any) []string {
	pv, ok := obj.(*v1.PersistentVolume)
	if !ok || pv.Spec.VolumeAttributesClassName == nil || *pv.Spec.VolumeAttributesClassName == "" {
		return nil
	}
	return []string{*pv.Spec.VolumeAttributesClassName}
}

func addIndex(inf cache.SharedIndexInformer, classes func(obj any) []string) error {
	if _, ok := inf.GetIndexer().GetIndexers()[classIndex]; ok {
		return nil
	}
	return inf.AddIndexers(cache.Indexers{classIndex: func(obj any) ([]string, error) { return classes(obj), nil }})
}
