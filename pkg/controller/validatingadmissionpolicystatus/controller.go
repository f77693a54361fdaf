package validatingadmissionpolicystatus

import (
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	validatingpolicy "k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	admissionregistrationinformers "k8s.io/client-go/informers/admissionregistration/v1"
	admissionregistrationclient "k8s.io/client-go/kubernetes/typed/admissionregistration/v1"
	admissionregistrationlisters "k8s.io/client-go/listers/admissionregistration/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

const (
	// ClientName is the client (and, with service-account credentials,
	// ServiceAccount) identity the controller uses, upstream's.
	ClientName = "validatingadmissionpolicy-status-controller"
	// FieldManager is the server-side apply field manager of the status
	// writes, and the workqueue's metrics name, as upstream.
	FieldManager = "validatingadmissionpolicy-status"
)

// Checker type-checks a policy's expressions; the apiserver library's
// validating.TypeChecker implements it.
type Checker interface {
	Check(policy *admissionregistrationv1.ValidatingAdmissionPolicy) []admissionregistrationv1.ExpressionWarning
}

// Controller keeps status.typeChecking of ValidatingAdmissionPolicies.
type Controller struct {
	name    string
	workers int
	client  admissionregistrationclient.ValidatingAdmissionPolicyInterface
	checker Checker

	lister admissionregistrationlisters.ValidatingAdmissionPolicyLister
	synced []cache.InformerSynced
	queue  workqueue.TypedRateLimitingInterface[string]
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the
// validatingadmissionpolicy-status-controller.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	disco, err := cc.ClientBuilder.DiscoveryClient(ClientName)
	if err != nil {
		return nil, fmt.Errorf("failed to create discovery client for %s: %w", name, err)
	}
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	checker := &validatingpolicy.TypeChecker{
		SchemaResolver: &resolver.ClientDiscoveryResolver{Discovery: disco},
		RestMapper:     cc.RESTMapper,
	}
	workers := 5
	if cc.Config != nil && cc.Config.ValidatingAdmissionPolicyStatusController.ConcurrentPolicySyncs > 0 {
		workers = int(cc.Config.ValidatingAdmissionPolicyStatusController.ConcurrentPolicySyncs)
	}
	return newController(name, workers,
		cc.InformerFactory.Admissionregistration().V1().ValidatingAdmissionPolicies(),
		client.AdmissionregistrationV1().ValidatingAdmissionPolicies(), checker)
}

func newController(name string, workers int, informer admissionregistrationinformers.ValidatingAdmissionPolicyInformer,
	client admissionregistrationclient.ValidatingAdmissionPolicyInterface, checker Checker) (*Controller, error) {
	c := &Controller{
		name:    name,
		workers: workers,
		client:  client,
		checker: checker,
		lister:  informer.Lister(),
		queue:   controller.Queue(FieldManager),
	}
	// Deletions need no work: the status goes with the object.
	reg, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, newObj any) { c.enqueue(newObj) },
	})
	if err != nil {
		return nil, fmt.Errorf("adding ValidatingAdmissionPolicy event handler: %w", err)
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
	logger.Info("Starting ValidatingAdmissionPolicy status controller")
	defer logger.Info("Shutting down ValidatingAdmissionPolicy status controller")
	w := controller.Workers{Name: c.name, Queue: c.queue, Sync: c.sync, WaitFor: c.synced}
	w.Run(ctx, c.workers)
}

// enqueue queues a policy by name (policies are cluster-scoped).
func (c *Controller) enqueue(obj any) {
	if p, ok := obj.(*admissionregistrationv1.ValidatingAdmissionPolicy); ok && p.Name != "" {
		c.queue.Add(p.Name)
	}
}
