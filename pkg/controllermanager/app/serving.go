package app

import (
	"context"
	"fmt"
	goruntime "runtime"

	"k8s.io/apiserver/pkg/server/mux"
	"k8s.io/apiserver/pkg/server/routes"
	"k8s.io/component-base/configz"
	"k8s.io/component-base/logs"
	"k8s.io/component-base/metrics/legacyregistry"
	genericcontrollermanager "k8s.io/controller-manager/app"

	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

// serve starts the HTTPS endpoints and returns the mux, on which
// controllers' debug handlers are installed later. /healthz, /livez and
// /readyz are open to anonymous clients through the default
// --authorization-always-allow-paths; everything else is authenticated and
// authorized through the apiserver (TokenReview, SubjectAccessReview).
func serve(ctx context.Context, c *Config, health *controllermanager.HealthHandler) (*mux.PathRecorderMux, error) {
	if c.SecureServing == nil {
		return nil, nil
	}
	m := mux.NewPathRecorderMux(c.Name)
	health.Install(m)
	if c.Component.Generic.Debugging.EnableProfiling {
		routes.Profiling{}.Install(m)
		if c.Component.Generic.Debugging.EnableContentionProfiling {
			goruntime.SetBlockProfileRate(1)
		}
		routes.DebugFlags{}.Install(m, "v", routes.StringFlagPutHandler(logs.GlogSetter))
	}
	configz.InstallHandler(m)
	m.Handle("/metrics", legacyregistry.Handler())

	handler := genericcontrollermanager.BuildHandlerChain(m, &c.Authorization, &c.Authentication)
	if _, _, err := c.SecureServing.Serve(handler, 0, ctx.Done()); err != nil {
		return nil, fmt.Errorf("unable to serve on %s: %w", c.SecureServing.Listener.Addr(), err)
	}
	return m, nil
}

// registerConfigz publishes the configuration under /configz.
func registerConfigz(c *Config) error {
	if c.ConfigzName == "" {
		return nil
	}
	cfgz, err := configz.New(c.ConfigzName)
	if err != nil {
		return fmt.Errorf("unable to register configz: %w", err)
	}
	return cfgz.Set(c.Configz)
}
