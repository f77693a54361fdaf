package clusterroleaggregation

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	rbacinformers "k8s.io/client-go/informers/rbac/v1"
	rbacclient "k8s.io/client-go/kubernetes/typed/rbac/v1"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

const (
	// ClientName is the client (and, with service-account credentials,
	// ServiceAccount) identity the controller uses; it is also the field
	// manager of the applied rules.
	ClientName = "clusterrole-aggregation-controller"
	// FieldManager is the server-side apply field manager, as upstream's.
	FieldManager = "clusterrole-aggregation-controller"
	// queueName is upstream's workqueue metrics name.
	queueName = "ClusterRoleAggregator"
	// workers is fixed to five, as upstream does.
	workers = 5
)

// Controller keeps aggregated ClusterRoles' rules up to date.
type Controller struct {
	name   string
	client rbacclient.ClusterRolesGetter
	lister rbaclisters.ClusterRoleLister
	synced []cache.InformerSynced
	queue  workqueue.TypedRateLimitingInterface[string]
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the
// clusterrole-aggregation-controller.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	return newController(ctx, name, client.RbacV1(), cc.InformerFactory.Rbac().V1().ClusterRoles())
}

func newController(ctx context.Context, name string, client rbacclient.ClusterRolesGetter, informer rbacinformers.ClusterRoleInformer) (*Controller, error) {
	c := &Controller{
		name:   name,
		client: client,
		lister: informer.Lister(),
		queue:  controller.Queue(queueName),
	}
	logger := klog.FromContext(ctx)
	reg, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.enqueueAggregated(logger) },
		UpdateFunc: func(_, _ any) { c.enqueueAggregated(logger) },
		DeleteFunc: func(any) { c.enqueueAggregated(logger) },
	})
	if err != nil {
		return nil, fmt.Errorf("adding ClusterRole event handler: %w", err)
	}
	c.synced = []cache.InformerSynced{reg.HasSynced}
	return c, nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run waits for the cache, then runs the workers until ctx is cancelled. It
// returns once they have exited.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting ClusterRoleAggregator controller")
	defer logger.Info("Shutting down ClusterRoleAggregator controller")

	w := controller.Workers{Name: c.name, Queue: c.queue, Sync: c.sync, WaitFor: c.synced}
	w.Run(ctx, workers)
}

// enqueueAggregated queues every ClusterRole that has an aggregationRule,
// whatever changed: as upstream notes, the set of ClusterRoles is small and
// which aggregates a change affects is not known without evaluating every
// selector, which is the sync's job.
func (c *Controller) enqueueAggregated(logger klog.Logger) {
	roles, err := c.lister.List(labels.Everything())
	if err != nil {
		utilruntime.HandleErrorWithLogger(logger, err, "Listing ClusterRoles")
		return
	}
	for _, role := range roles {
		if role.AggregationRule != nil {
			c.queue.Add(role.Name)
		}
	}
}

// isAggregated reports whether role's rules are managed by this controller.
func isAggregated(role *rbacv1.ClusterRole) bool { return role.AggregationRule != nil }
