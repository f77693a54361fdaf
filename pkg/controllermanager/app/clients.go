package app

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
	genericcontrollermanager "k8s.io/controller-manager/app"
	"k8s.io/controller-manager/pkg/clientbuilder"
	"k8s.io/utils/clock"

	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

// clientBuilders returns the builder controllers get their clients from
// and the root builder (the process's own credentials), as upstream does:
// with --use-service-account-credentials, each controller authenticates as
// kube-system/<its name> with tokens from the TokenRequest API.
func clientBuilders(c *Config) (controllers, root clientbuilder.ControllerClientBuilder) {
	root = clientbuilder.SimpleControllerClientBuilder{ClientConfig: c.Kubeconfig}
	if !c.Component.KubeCloudShared.UseServiceAccountCredentials {
		return root, root
	}
	return clientbuilder.NewDynamicClientBuilder(
		restclient.AnonymousClientConfig(c.Kubeconfig),
		c.Client.CoreV1(),
		metav1.NamespaceSystem), root
}

// resyncPeriod returns a function giving a period between
// --min-resync-period and twice that, as upstream's informers use.
func resyncPeriod(c *Config) func() time.Duration {
	return func() time.Duration {
		factor := rand.Float64() + 1
		return time.Duration(float64(c.Component.Generic.MinResyncPeriod.Nanoseconds()) * factor)
	}
}

// newControllerContext builds the shared informers, metadata informers and
// REST mapper of one leadership term.
func newControllerContext(ctx context.Context, c *Config, controllers, root clientbuilder.ControllerClientBuilder) (*controllermanager.ControllerContext, error) {
	versioned, err := root.Client("shared-informers")
	if err != nil {
		return nil, fmt.Errorf("failed to create Kubernetes client for %q: %w", "shared-informers", err)
	}
	informerName, err := cache.NewInformerName(c.Name)
	if err != nil {
		return nil, fmt.Errorf("failed to create informer name: %w", err)
	}
	resync := resyncPeriod(c)
	shared := informers.NewSharedInformerFactoryWithOptions(versioned, resync(),
		informers.WithTransform(controllermanager.TrimManagedFields),
		informers.WithInformerName(informerName))

	metadataConfig, err := root.Config("metadata-informers")
	if err != nil {
		return nil, fmt.Errorf("failed to create metadata client config: %w", err)
	}
	metadataClient, err := metadata.NewForConfig(metadataConfig)
	if err != nil {
		return nil, fmt.Errorf("failed to create metadata client: %w", err)
	}
	metadataInformers := metadatainformer.NewSharedInformerFactoryWithOptions(metadataClient, resync(),
		metadatainformer.WithTransform(controllermanager.TrimManagedFields))

	if err := genericcontrollermanager.WaitForAPIServer(versioned, 10*time.Second); err != nil {
		return nil, fmt.Errorf("failed to wait for apiserver being healthy: %w", err)
	}
	discoveryClient, err := root.DiscoveryClient("controller-discovery")
	if err != nil {
		return nil, fmt.Errorf("failed to create discovery client: %w", err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(discoveryClient))
	go wait.Until(mapper.Reset, 30*time.Second, ctx.Done())

	return &controllermanager.ControllerContext{
		ClientBuilder:           controllers,
		InformerFactory:         shared,
		MetadataInformerFactory: metadataInformers,
		RESTMapper:              mapper,
		Config:                  &c.Component,
		FeatureGate:             c.FeatureGate,
		Clock:                   clock.RealClock{},
		InformersStarted:        make(chan struct{}),
		ResyncPeriod:            resync,
		UpstreamWriteTiming:     c.UpstreamWriteTiming,
		Manager:                 c.Name,
	}, nil
}
