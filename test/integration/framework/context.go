package framework

import (
	"context"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/controller-manager/pkg/clientbuilder"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"

	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/controllermanager/config"
)

// informerClientName is the identity of the shared informers' client, as
// upstream's.
const informerClientName = "shared-informers"

// NewControllerContext builds a ControllerContext on cfg the way kcm does
// without --use-service-account-credentials: every controller gets a client
// with cfg's credentials and its own user agent, and the informer factories
// trim managedFields. Config is an empty ComponentConfig that tests may fill
// in before calling a constructor; FeatureGate is left nil.
func NewControllerContext(t testing.TB, cfg *rest.Config) *controllermanager.ControllerContext {
	t.Helper()
	builder := clientbuilder.SimpleControllerClientBuilder{ClientConfig: rest.CopyConfig(cfg)}
	infCfg, err := builder.Config(informerClientName)
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(infCfg)
	if err != nil {
		t.Fatal(err)
	}
	metaClient, err := metadata.NewForConfig(infCfg)
	if err != nil {
		t.Fatal(err)
	}
	disco, err := builder.DiscoveryClient("controller-discovery")
	if err != nil {
		t.Fatal(err)
	}
	return &controllermanager.ControllerContext{
		ClientBuilder: builder,
		InformerFactory: informers.NewSharedInformerFactoryWithOptions(client, 0,
			informers.WithTransform(controllermanager.TrimManagedFields)),
		MetadataInformerFactory: metadatainformer.NewSharedInformerFactoryWithOptions(metaClient, 0,
			metadatainformer.WithTransform(controllermanager.TrimManagedFields)),
		RESTMapper:       restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco)),
		Config:           &config.ComponentConfig{},
		Clock:            clock.RealClock{},
		InformersStarted: make(chan struct{}),
		ResyncPeriod:     func() time.Duration { return 12 * time.Hour },
	}
}

// StartController runs c.Run in a goroutine with a test logger, then starts
// cc's informer factories (kcm starts them after every constructor ran).
// The returned stop function, also run at cleanup, cancels the controller,
// fails the test unless Run returns within 30s, and shuts the informers
// down; calling it more than once is fine.
func StartController(t testing.TB, cc *controllermanager.ControllerContext, c controllermanager.Controller) (stop func()) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(ctx)
	}()
	cc.InformerFactory.Start(ctx.Done())
	cc.MetadataInformerFactory.Start(ctx.Done())
	close(cc.InformersStarted)

	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Errorf("%s: Run did not return within 30s of cancellation", c.Name())
			}
			cc.InformerFactory.Shutdown()
			cc.MetadataInformerFactory.Shutdown()
		})
	}
	t.Cleanup(stop)
	return stop
}
