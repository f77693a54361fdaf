package podautoscaler

import (
	"context"
	"fmt"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/scale"

	"github.com/kcm-dev/kcm/pkg/controller/podautoscaler/metrics"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/features"
)

// New is the controllermanager.Constructor of the
// horizontal-pod-autoscaler-controller: upstream's clients (its own
// identity for the API, the scale client over the REST mapper and an
// uncached scale-kind discovery, the three metrics APIs) and the
// --horizontal-pod-autoscaler-* flags.
func New(ctx context.Context, cc *controllermanager.ControllerContext, name string) (controllermanager.Controller, error) {
	client, err := cc.NewClient(ClientName)
	if err != nil {
		return nil, err
	}
	cfg, err := cc.NewClientConfig(ClientName)
	if err != nil {
		return nil, err
	}
	scales, err := scale.NewForConfig(cfg, cc.RESTMapper, dynamic.LegacyAPIPathResolverFunc, scale.NewDiscoveryScaleKindResolver(client.Discovery()))
	if err != nil {
		return nil, fmt.Errorf("failed to init HPA scale client: %w", err)
	}
	metricsClient, err := metrics.NewREST(cfg, cc.RESTMapper, client.Discovery())
	if err != nil {
		return nil, fmt.Errorf("%w for %s", err, name)
	}
	hpaCfg := cc.Config.HPAController
	c, err := NewController(ctx, Config{
		Name:                     name,
		Client:                   client,
		Scales:                   scales,
		Mapper:                   cc.RESTMapper,
		Metrics:                  metricsClient,
		InvalidateMetricVersions: metricsClient.InvalidateVersions,
		HPAs:                     cc.InformerFactory.Autoscaling().V2().HorizontalPodAutoscalers(),
		Pods:                     cc.InformerFactory.Core().V1().Pods(),
		Clock:                    cc.Clock,
		Workers:                  int(hpaCfg.ConcurrentHorizontalPodAutoscalerSyncs),
		SyncPeriod:               hpaCfg.HorizontalPodAutoscalerSyncPeriod.Duration,
		DownscaleStabilization:   hpaCfg.HorizontalPodAutoscalerDownscaleStabilizationWindow.Duration,
		Tolerance:                hpaCfg.HorizontalPodAutoscalerTolerance,
		CPUInitializationPeriod:  hpaCfg.HorizontalPodAutoscalerCPUInitializationPeriod.Duration,
		InitialReadinessDelay:    hpaCfg.HorizontalPodAutoscalerInitialReadinessDelay.Duration,
		ConfigurableTolerance:    features.Enabled(cc.FeatureGate, features.HPAConfigurableTolerance),
		ScaleToZero:              features.Enabled(cc.FeatureGate, features.HPAScaleToZero),
		ObservedGeneration:       features.Enabled(cc.FeatureGate, features.HPAGeneration),
		PodLevelResources:        features.Enabled(cc.FeatureGate, features.PodLevelResources),
		StaleConsistency:         features.Enabled(cc.FeatureGate, features.StaleControllerConsistencyHPA),
	})
	if err != nil {
		return nil, err
	}
	registerMetrics()
	return c, nil
}
