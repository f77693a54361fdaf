package parity

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/kcm-dev/kcm/test/cluster"
	"github.com/kcm-dev/kcm/test/metricsapi"
)

// MetricsStep sets values of the test metrics API (scenarios with
// metricsAPI: true): resource usage of pods, custom and external metrics.
type MetricsStep = metricsapi.Values

// startMetricsAPI runs the test metrics API beside the cluster and
// registers it by APIService. The aggregator authenticates with its
// front-proxy client certificate, as to metrics-server.
func startMetricsAPI(ctx context.Context, c *cluster.Cluster) (*metricsapi.Server, error) {
	ca, err := os.ReadFile(c.PKI.FrontProxyCACert)
	if err != nil {
		return nil, fmt.Errorf("parity: %w", err)
	}
	srv, err := metricsapi.Start(ctx, metricsapi.Options{Pods: c.Client, ClientCA: ca})
	if err != nil {
		return nil, err
	}
	if err := srv.Register(ctx, c.RESTConfig); err != nil {
		srv.Close()
		return nil, fmt.Errorf("parity: metrics API: %w", err)
	}
	return srv, nil
}

func (r *stepRunner) setMetrics(v *MetricsStep) error {
	if r.metrics == nil {
		return errors.New("metrics: the scenario has no metricsAPI")
	}
	r.metrics.Set(*v)
	return nil
}

// validateMetricsAPI: metrics steps need the metrics API.
func (s *Scenario) validateMetricsAPI() error {
	if s.MetricsAPI {
		return nil
	}
	for i, st := range s.Steps {
		if st.Metrics != nil {
			return fmt.Errorf("steps[%d]: metrics: needs metricsAPI: true", i)
		}
	}
	return nil
}
