package controllermanager

import (
	"context"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata/metadatainformer"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	certutil "k8s.io/client-go/util/cert"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/component-base/featuregate"
	"k8s.io/controller-manager/pkg/clientbuilder"
	"k8s.io/utils/clock"

	"github.com/kcm-dev/kcm/pkg/controllermanager/config"
)

// ControllerContext is everything a controller constructor may use. It is
// built once per leadership term; constructors must not do API I/O with it
// beyond creating clients and registering informers.
type ControllerContext struct {
	// ClientBuilder hands each controller its own client, so that each has
	// its own rate limiter and user agent, and, with
	// --use-service-account-credentials, its own ServiceAccount identity.
	ClientBuilder clientbuilder.ControllerClientBuilder
	// InformerFactory and MetadataInformerFactory are shared by all
	// controllers and started once every constructor has run.
	InformerFactory         informers.SharedInformerFactory
	MetadataInformerFactory metadatainformer.SharedInformerFactory
	// RESTMapper is discovery-backed and reset periodically.
	RESTMapper *restmapper.DeferredDiscoveryRESTMapper
	// Config is the completed component configuration (flags).
	Config *config.ComponentConfig
	// FeatureGate is the effective feature gate of this process.
	FeatureGate featuregate.FeatureGate
	// Clock is injected so that controllers can be tested with a fake one.
	Clock clock.WithTicker
	// InformersStarted is closed once the informer factories were started.
	InformersStarted chan struct{}
	// ResyncPeriod returns a period between MinResyncPeriod and twice that.
	ResyncPeriod func() time.Duration
	// Cloud is the initialized provider --cloud-provider names, nil without
	// one (or with "external"): the cloud controllers then do not run.
	Cloud cloudprovider.Interface
	// UpstreamWriteTiming (the hidden --kcm-upstream-write-timing) turns
	// off kcm's write pacing: every status and endpoint write spacing
	// and DaemonSet turn is zero, so that controllers write when
	// upstream's would (docs/ARCHITECTURE.md, "Write policies").
	UpstreamWriteTiming bool
	// Manager is the command's name, the manager label of
	// running_managed_controllers.
	Manager string
}

// Paced returns d, kcm's pacing period of some write, or 0 under
// UpstreamWriteTiming.
func (c *ControllerContext) Paced(d time.Duration) time.Duration {
	if c.UpstreamWriteTiming {
		return 0
	}
	return d
}

// NewClient returns the client for the named controller identity (the
// ServiceAccount name upstream uses for it), rate-limited by client-go
// with the builder's QPS and burst.
func (c *ControllerContext) NewClient(name string) (kubernetes.Interface, error) {
	cfg, err := c.ClientBuilder.Config(name)
	if err != nil {
		return nil, fmt.Errorf("failed to create Kubernetes client for %q: %w", name, err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create Kubernetes client for %q: %w", name, err)
	}
	return client, nil
}

// NewClientConfig returns the rest config for the named controller identity.
func (c *ControllerContext) NewClientConfig(name string) (*restclient.Config, error) {
	cfg, err := c.ClientBuilder.Config(name)
	if err != nil {
		return nil, fmt.Errorf("failed to create Kubernetes client config for %q: %w", name, err)
	}
	return cfg, nil
}

// TrimManagedFields is the informer transform that drops managedFields from
// cached objects: no controller reads them and they are a large share of an
// object's memory.
func TrimManagedFields(obj any) (any, error) {
	if accessor, err := meta.Accessor(obj); err == nil && accessor.GetManagedFields() != nil {
		accessor.SetManagedFields(nil)
	}
	return obj, nil
}

// Controller is a running control loop.
type Controller interface {
	// Name returns the controller's canonical name.
	Name() string
	// Run blocks until ctx is cancelled and returns only after every
	// goroutine it started has exited.
	Run(ctx context.Context)
}

// RootCABundle returns the cluster's root CA bundle as controllers publish
// it (upstream's rule): the contents of --root-ca-file, which must parse as
// PEM certificates, or, when the flag is unset, the CA data of the client
// config of the named identity (possibly empty).
func (c *ControllerContext) RootCABundle(clientName string) ([]byte, error) {
	var file string
	if c.Config != nil {
		file = c.Config.SAController.RootCAFile
	}
	if file == "" {
		cfg, err := c.NewClientConfig(clientName)
		if err != nil {
			return nil, err
		}
		return cfg.CAData, nil
	}
	data, err := os.ReadFile(file)
	if err == nil {
		_, err = certutil.ParseCertsPEM(data)
	}
	if err != nil {
		return nil, fmt.Errorf("error parsing root-ca-file at %s: %w", file, err)
	}
	return data, nil
}
