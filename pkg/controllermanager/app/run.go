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
	prepare := func(ctx context.Context) (*leadTerm, error) {
		return prepareTerm(ctx, c, registry, controllerClients, rootClients, health, debugMux)
	}
	if !c.Component.Generic.LeaderElection.LeaderElect {
		t, err := prepare(ctx)
		if err != nil {
			return err
		}
		return t.run(ctx, c)
	}
	if c.Component.Generic.LeaderMigrationEnabled {
		return errors.New("--enable-leader-migration: leader migration (for moving cloud controllers out of kube-controller-manager) is not supported by kcm")
	}
	host, err := os.Hostname()
	if err != nil {
		return err
	}
	id := host + "_" + string(uuid.NewUUID())

	// A warm standby builds the controllers and starts their informers
	// before it campaigns, so that once it leads its controllers find
	// their caches synced (upstream's builds everything after taking the
	// Lease and then lists every resource at once; kube-scheduler's standby
	// is warm). Building a controller makes no write (TestWarmStandby...
	// in test/integration/kcm holds a standby to that), except that with
	// --use-service-account-credentials each controller's ServiceAccount is
	// looked up and created if missing, as the leader does. A cloud
	// provider's Initialize may act on the cluster, so with one the
	// standby stays cold, as upstream's.
	run := func(ctx context.Context) error {
		t, err := prepare(ctx)
		if err != nil {
			return err
		}
		return t.run(ctx, c)
	}
	if c.WarmStandby && c.Cloud == nil {
		logger.Info("Warm standby: building the controllers and syncing their informers before leading")
		t, err := prepare(ctx)
		if err != nil {
			return err
		}
		run = func(runCtx context.Context) error { return t.run(runCtx, c) }
	}
	return leaderElectAndRun(ctx, c, id, recorder, electionChecker, health, run)
}

// leadTerm is what one leadership term runs: the controller context, its
// informers started, and the enabled controllers built.
type leadTerm struct {
	cc          *controllermanager.ControllerContext
	controllers []controllermanager.Controller
}

// prepareTerm builds the controller context and the enabled controllers,
// then starts the informers (until ctx ends) without waiting for them to
// sync.
func prepareTerm(ctx context.Context, c *Config, registry controllermanager.Registry,
	controllerClients, rootClients clientbuilder.ControllerClientBuilder,
	health *controllermanager.HealthHandler, debugMux *mux.PathRecorderMux) (*leadTerm, error) {
	cc, err := newControllerContext(ctx, c, controllerClients, rootClients)
	if err != nil {
		return nil, err
	}
	if err := cloudcontrollers.Attach(ctx, cc, c.Cloud); err != nil {
		return nil, err
	}
	// serviceaccount-token-controller runs with the root credentials: the
	// others' credentials come from the tokens it makes.
	rootCC := *cc
	rootCC.ClientBuilder = rootClients
	controllers, err := controllermanager.Build(ctx, cc, &rootCC, registry, c.Component.Generic.Controllers, health, debugMux)
	if err != nil {
		return nil, err
	}
	cc.InformerFactory.Start(ctx.Done())
	cc.MetadataInformerFactory.Start(ctx.Done())
	close(cc.InformersStarted)
	return &leadTerm{cc: cc, controllers: controllers}, nil
}

// run runs the term's controllers until ctx is cancelled and they
// stopped, then waits for the informers to stop (they stop with the ctx
// they were started under).
func (t *leadTerm) run(ctx context.Context, c *Config) error {
	defer t.cc.InformerFactory.Shutdown()
	defer t.cc.MetadataInformerFactory.Shutdown()
	if len(t.controllers) == 0 {
		<-ctx.Done()
		return nil
	}
	if !controllermanager.Run(ctx, t.controllers, c.Component.Generic.ControllerStartInterval.Duration, c.ControllerShutdownTimeout) {
		return fmt.Errorf("%w after %s", errShutdownTimeout, c.ControllerShutdownTimeout)
	}
	return nil
}
