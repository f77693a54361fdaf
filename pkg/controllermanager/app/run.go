package app

import (
	"context"
	"errors"
	"fmt"
	"os"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/apiserver/pkg/server/mux"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/version"
	"k8s.io/controller-manager/pkg/clientbuilder"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/pkg/cloudcontrollers"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

// errShutdownTimeout is returned when controllers did not stop within
// --controller-shutdown-timeout.
var errShutdownTimeout = errors.New("controller shutdown timeout reached")

// Run serves the endpoints, then runs the controllers of registry that
// --controllers enables: at once with --leader-elect=false, otherwise while
// this instance holds the Lease. It returns when ctx is cancelled (SIGTERM)
// and the controllers stopped.
func Run(ctx context.Context, c *Config, registry controllermanager.Registry) error {
	logger := klog.FromContext(ctx)
	logger.Info("Starting", "version", version.Get().GitVersion)

	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartStructuredLogging(0)
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: c.Client.CoreV1().Events("")})
	defer broadcaster.Shutdown()
	recorder := broadcaster.NewRecorder(scheme.Scheme, v1.EventSource{Component: c.Name})

	if err := registerConfigz(c); err != nil {
		return err
	}
	var electionChecker *leaderelection.HealthzAdaptor
	var checks []healthz.HealthChecker
	if c.Component.Generic.LeaderElection.LeaderElect {
		electionChecker = leaderelection.NewLeaderHealthzAdaptor(leaderHealthTimeout)
		checks = append(checks, electionChecker)
	}
	health := controllermanager.NewHealthHandler(checks...)
	debugMux, err := serve(ctx, c, health)
	if err != nil {
		return err
	}

	controllerClients, rootClients := clientBuilders(c)
	run := func(ctx context.Context) error {
		return runControllers(ctx, c, registry, controllerClients, rootClients, health, debugMux)
	}
	if !c.Component.Generic.LeaderElection.LeaderElect {
		return run(ctx)
	}
	if c.Component.Generic.LeaderMigrationEnabled {
		return errors.New("--enable-leader-migration: leader migration (for moving cloud controllers out of kube-controller-manager) is not supported by kcm")
	}
	host, err := os.Hostname()
	if err != nil {
		return err
	}
	id := host + "_" + string(uuid.NewUUID())
	return leaderElectAndRun(ctx, c, id, recorder, electionChecker, health, run)
}

// runControllers runs one leadership term: it builds the controller
// context and the enabled controllers, starts the informers, and runs the
// controllers until ctx is cancelled and they stopped.
func runControllers(ctx context.Context, c *Config, registry controllermanager.Registry,
	controllerClients, rootClients clientbuilder.ControllerClientBuilder,
	health *controllermanager.HealthHandler, debugMux *mux.PathRecorderMux) error {
	cc, err := newControllerContext(ctx, c, controllerClients, rootClients)
	if err != nil {
		return err
	}
	if err := cloudcontrollers.Attach(ctx, cc, c.Cloud); err != nil {
		return err
	}
	// serviceaccount-token-controller runs with the root credentials: the
	// others' credentials come from the tokens it makes.
	rootCC := *cc
	rootCC.ClientBuilder = rootClients
	controllers, err := controllermanager.Build(ctx, cc, &rootCC, registry, c.Component.Generic.Controllers, health, debugMux)
	if err != nil {
		return err
	}
	cc.InformerFactory.Start(ctx.Done())
	defer cc.InformerFactory.Shutdown()
	cc.MetadataInformerFactory.Start(ctx.Done())
	defer cc.MetadataInformerFactory.Shutdown()
	close(cc.InformersStarted)

	if len(controllers) == 0 {
		<-ctx.Done()
		return nil
	}
	if !controllermanager.Run(ctx, controllers, c.Component.Generic.ControllerStartInterval.Duration, c.ControllerShutdownTimeout) {
		return fmt.Errorf("%w after %s", errShutdownTimeout, c.ControllerShutdownTimeout)
	}
	return nil
}
