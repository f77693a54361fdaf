package cloudnodelifecycle

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/internal/controller/nodeutil"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

const (
	// ClientName is upstream's client identity for this controller.
	ClientName = "node-controller"
	// EventSource is the component of the Events.
	EventSource = "cloud-node-lifecycle-controller"
	// TaintShutdown marks a node whose instance is shut down.
	TaintShutdown = "node.cloudprovider.kubernetes.io/shutdown"

	defaultMonitorPeriod = 5 * time.Second
)

// ShutdownTaint is the taint a shut-down node carries.
var ShutdownTaint = v1.Taint{Key: TaintShutdown, Effect: v1.TaintEffectNoSchedule}

// Controller deletes nodes whose instance is gone and taints those shut down.
type Controller struct {
	name    string
	client  kubernetes.Interface
	cloud   cloudprovider.Interface
	period  time.Duration
	workers int
	nodes   corelisters.NodeLister
	synced  cache.InformerSynced

	recorder record.EventRecorder
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor. Without a provider, or one
// without instances, there is nothing to do (upstream logs and skips too).
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	if cc.Cloud == nil {
		return nil, nil
	}
	_, v1ok := cc.Cloud.Instances()
	_, v2ok := cc.Cloud.InstancesV2()
	if !v1ok && !v2ok {
		klog.FromContext(ctx).Info("failed to start cloud node lifecycle controller: cloud provider does not support instances")
		return nil, nil
	}
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	period, workers := defaultMonitorPeriod, 1
	if cc.Config != nil {
		if p := cc.Config.NodeLifecycleController.NodeMonitorPeriod.Duration; p > 0 {
			period = p
		}
		if n := cc.Config.Cloud.ConcurrentNodeLifecycleSyncs; n > 0 {
			workers = int(n)
		}
	}
	return newController(name, client, cc.Cloud, cc.InformerFactory.Core().V1().Nodes(), period, workers)
}

func newController(name string, client kubernetes.Interface, cloud cloudprovider.Interface,
	nodes coreinformers.NodeInformer, period time.Duration, workers int) (*Controller, error) {
	if period <= 0 {
		return nil, fmt.Errorf("--node-monitor-period must be positive, got %s", period)
	}
	// The pass reads the lister; no handler is needed beyond the informer
	// being registered with the factory.
	reg, err := nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{})
	if err != nil {
		return nil, fmt.Errorf("adding Node event handler: %w", err)
	}
	return &Controller{name: name, client: client, cloud: cloud, period: period, workers: workers,
		nodes: nodes.Lister(), synced: reg.HasSynced}, nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run checks the nodes every period until ctx is cancelled.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting", "controller", EventSource)
	defer logger.Info("Shutting down", "controller", EventSource)
	if c.recorder == nil {
		recorder, stop := controller.NewRecorder(ctx, c.client, EventSource)
		defer stop()
		c.recorder = recorder
	}
	if !cache.WaitForNamedCacheSyncWithContext(ctx, c.synced) {
		return
	}
	wait.UntilWithContext(ctx, c.monitor, c.period)
}

// monitor is one pass over the nodes.
func (c *Controller) monitor(ctx context.Context) {
	nodes, err := c.nodes.List(labels.Everything())
	if err != nil {
		klog.FromContext(ctx).Error(err, "Listing nodes from the cache")
		return
	}
	workqueue.ParallelizeUntil(ctx, c.workers, len(nodes), func(i int) { c.check(ctx, nodes[i]) })
}

func (c *Controller) check(ctx context.Context, node *v1.Node) {
	logger := klog.FromContext(ctx)
	if nodeutil.ReadyStatus(node) == v1.ConditionTrue {
		if _, err := nodeutil.PatchNode(ctx, c.client, node, removeShutdownTaint); err != nil {
			logger.Error(err, "Removing the shutdown taint", "node", klog.KObj(node))
		}
		return
	}
	exists, err := c.exists(ctx, node)
	if err != nil {
		logger.Error(err, "Checking whether the node's instance exists", "node", klog.KObj(node))
		return
	}
	if !exists {
		c.delete(ctx, node)
		return
	}
	shutdown, err := c.shutdown(ctx, node)
	if err != nil {
		logger.Error(err, "Checking whether the node's instance is shut down", "node", klog.KObj(node))
		return
	}
	if shutdown {
		if _, err := nodeutil.PatchNode(ctx, c.client, node, addShutdownTaint); err != nil {
			logger.Error(err, "Failed to apply the shutdown taint; the node may have been deleted", "node", klog.KObj(node))
		}
	}
}

func (c *Controller) delete(ctx context.Context, node *v1.Node) {
	klog.FromContext(ctx).V(2).Info("Deleting node since it is no longer present in cloud provider", "node", klog.KObj(node))
	ref := &v1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}
	c.recorder.Eventf(ref, v1.EventTypeNormal, "DeletingNode", "Deleting node %s because it does not exist in the cloud provider", node.Name)
	if err := c.client.CoreV1().Nodes().Delete(ctx, node.Name, metav1.DeleteOptions{}); err != nil {
		klog.FromContext(ctx).Error(err, "Unable to delete node", "node", klog.KObj(node))
		c.recorder.Eventf(ref, v1.EventTypeWarning, "DeletingNodeFailed", "Failed deleting node %s: %v", node.Name, err)
	}
}

func addShutdownTaint(n *v1.Node) {
	if !nodeutil.TaintExists(n.Spec.Taints, &ShutdownTaint) {
		n.Spec.Taints = append(n.Spec.Taints, ShutdownTaint)
	}
}

func removeShutdownTaint(n *v1.Node) {
	kept := n.Spec.Taints[:0:0]
	for _, t := range n.Spec.Taints {
		if !ShutdownTaint.MatchTaint(&t) {
			kept = append(kept, t)
		}
	}
	if len(kept) != len(n.Spec.Taints) {
		n.Spec.Taints = kept
	}
}

// exists asks InstancesV2, else Instances by provider ID (a node whose
// provider ID the cloud does not know has no instance).
func (c *Controller) exists(ctx context.Context, node *v1.Node) (bool, error) {
	if v2, ok := c.cloud.InstancesV2(); ok {
		return v2.InstanceExists(ctx, node)
	}
	inst, ok := c.cloud.Instances()
	if !ok {
		return false, errors.New("instances interface not supported in the cloud provider")
	}
	id, err := c.providerID(ctx, node)
	if errors.Is(err, cloudprovider.InstanceNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return inst.InstanceExistsByProviderID(ctx, id)
}

func (c *Controller) shutdown(ctx context.Context, node *v1.Node) (bool, error) {
	if v2, ok := c.cloud.InstancesV2(); ok {
		return v2.InstanceShutdown(ctx, node)
	}
	inst, ok := c.cloud.Instances()
	if !ok {
		return false, errors.New("cloud provider does not support instances")
	}
	id, err := c.providerID(ctx, node)
	if errors.Is(err, cloudprovider.InstanceNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	down, err := inst.InstanceShutdownByProviderID(ctx, id)
	if errors.Is(err, cloudprovider.NotImplemented) {
		return false, nil
	}
	return down, err
}

func (c *Controller) providerID(ctx context.Context, node *v1.Node) (string, error) {
	if node.Spec.ProviderID != "" {
		return node.Spec.ProviderID, nil
	}
	return cloudprovider.GetInstanceProviderID(ctx, c.cloud, types.NodeName(node.Name))
}
