package legacytokencleaner

import (
	"context"
	"fmt"
	"time"

	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

const (
	// ClientName is the client identity upstream uses.
	ClientName = "legacy-service-account-token-cleaner"
	// SyncInterval is how often all Secrets are evaluated (upstream's
	// DefaultCleanerSyncInterval).
	SyncInterval = 24 * time.Hour
)

// Controller periodically invalidates and deletes unused legacy tokens.
type Controller struct {
	name          string
	client        kubernetes.Interface
	clock         clock.WithTicker
	cleanUpPeriod time.Duration
	syncInterval  time.Duration

	saLister     corelisters.ServiceAccountLister
	secretLister corelisters.SecretLister
	podLister    corelisters.PodLister
	synced       []cache.InformerSynced
}

var _ controllermanager.Controller = (*Controller)(nil)

// New is the controllermanager.Constructor of the
// legacy-serviceaccount-token-cleaner-controller.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	c, err := newController(name, client, cc.Clock, cc.Config.LegacySATokenCleaner.CleanUpPeriod.Duration, SyncInterval,
		cc.InformerFactory.Core().V1().ServiceAccounts(), cc.InformerFactory.Core().V1().Secrets(), cc.InformerFactory.Core().V1().Pods())
	if err != nil {
		return nil, fmt.Errorf("failed to init the legacy service account token cleaner: %w", err)
	}
	return c, nil
}

func newController(name string, client kubernetes.Interface, clk clock.WithTicker, cleanUpPeriod, syncInterval time.Duration,
	sas coreinformers.ServiceAccountInformer, secrets coreinformers.SecretInformer, pods coreinformers.PodInformer) (*Controller, error) {
	if cleanUpPeriod <= 0 {
		return nil, fmt.Errorf("invalid CleanUpPeriod: %v", cleanUpPeriod)
	}
	if syncInterval <= 0 {
		return nil, fmt.Errorf("invalid SyncInterval: %v", syncInterval)
	}
	if clk == nil {
		clk = clock.RealClock{}
	}
	// No handlers: the controller only reads the caches, on a timer.
	return &Controller{
		name:          name,
		client:        client,
		clock:         clk,
		cleanUpPeriod: cleanUpPeriod,
		syncInterval:  syncInterval,
		saLister:      sas.Lister(),
		secretLister:  secrets.Lister(),
		podLister:     pods.Lister(),
		synced:        []cache.InformerSynced{sas.Informer().HasSynced, secrets.Informer().HasSynced, pods.Informer().HasSynced},
	}, nil
}

// Name returns the controller's canonical name.
func (c *Controller) Name() string { return c.name }

// Run waits for the caches, evaluates all token Secrets at once and then
// every sync interval, until ctx is cancelled.
func (c *Controller) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting legacy service account token cleaner controller")
	defer logger.Info("Shutting down legacy service account token cleaner controller")

	if !cache.WaitForNamedCacheSyncWithContext(ctx, c.synced...) {
		return
	}
	ticker := c.clock.NewTicker(c.syncInterval)
	defer ticker.Stop()
	for {
		c.evaluate(ctx)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
		}
	}
}
