package controllermanager

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/apiserver/pkg/server/mux"
	controllersmetrics "k8s.io/component-base/metrics/prometheus/controllers"
	"k8s.io/controller-manager/controller"
	"k8s.io/klog/v2"
)

// Build constructs the controllers that selection (the canonical
// --controllers value) enables, SpecialHandling ones first and always (with
// rootCC, which carries the process's own credentials), and
// registers a health check per controller on health and debug handlers on
// debugMux (either may be nil). Enabled controllers that kcm does not
// implement are logged once and skipped.
func Build(ctx context.Context, cc, rootCC *ControllerContext, registry Registry, selection []string, health *HealthHandler, debugMux *mux.PathRecorderMux) ([]Controller, error) {
	logger := klog.FromContext(ctx)
	controllersmetrics.Register()
	var order []*Descriptor
	for _, name := range registry.Names() {
		if d := registry[name]; d.SpecialHandling {
			order = append(order, d)
		}
	}
	for _, name := range registry.Selected(selection) {
		order = append(order, registry[name])
	}

	var (
		controllers   []Controller
		checks        []healthz.HealthChecker
		ready         []healthz.HealthChecker
		unimplemented []string
	)
	for _, d := range order {
		if !d.Implemented() {
			if !d.SpecialHandling {
				unimplemented = append(unimplemented, d.Name)
			}
			continue
		}
		if gate := firstDisabledGate(cc, d); gate != "" {
			logger.Info("Controller is disabled by a feature gate", "controller", d.Name, "featureGate", gate)
			continue
		}
		cctx := klog.NewContext(ctx, klog.LoggerWithName(logger, d.Name))
		dcc := cc
		if d.SpecialHandling {
			dcc = rootCC
		}
		ctrl, err := d.New(cctx, dcc, d.Name)
		if err != nil {
			return nil, fmt.Errorf("error starting %q: %w", d.Name, err)
		}
		if ctrl == nil {
			logger.Info("Skipping controller: nothing to do with this configuration", "controller", d.Name)
			continue
		}
		t := &tracked{Controller: ctrl, runningMetric: d.RunningMetric, manager: cc.Manager}
		controllers = append(controllers, t)
		checks = append(checks, healthCheck(t))
		if r, ok := ctrl.(ReadinessReporter); ok {
			ready = append(ready, healthz.NamedCheck(d.Name+"-ready", r.ReadinessCheck))
		}
		installDebug(debugMux, ctrl, d.Aliases)
	}
	if len(unimplemented) > 0 {
		logger.Info("Enabled controllers that kcm does not implement yet; they will not run", "controllers", unimplemented)
	}
	if health != nil {
		health.add(checks, ready)
	}
	return controllers, nil
}

// ReadinessReporter is implemented by controllers whose degraded state is
// reported under /readyz/<name>-ready only, never under /healthz or /livez:
// a liveness probe must not restart the process for something a restart
// cannot fix.
type ReadinessReporter interface {
	ReadinessCheck(*http.Request) error
}

func firstDisabledGate(cc *ControllerContext, d *Descriptor) string {
	for _, g := range d.RequiredFeatureGates {
		if cc.FeatureGate == nil || !cc.FeatureGate.Enabled(g) {
			return string(g)
		}
	}
	return ""
}

// healthCheck fails when the controller's Run has returned early, and
// otherwise asks the controller's own health check, if it has one.
func healthCheck(t *tracked) healthz.HealthChecker {
	var own func(*http.Request) error
	if hc, ok := t.Controller.(controller.HealthCheckable); ok {
		if check := hc.HealthChecker(); check != nil {
			own = check.Check
		}
	}
	return healthz.NamedCheck(t.Name(), func(r *http.Request) error {
		if err := t.check(r); err != nil || own == nil {
			return err
		}
		return own(r)
	})
}

// installDebug serves the controller's debugging handler under
// /debug/controllers/<name>, as upstream v1.37, and under each alias too:
// before canonical names (v1.28) upstream served it there, e.g.
// /debug/controllers/garbagecollector/graph, and runbooks still use that.
func installDebug(m *mux.PathRecorderMux, ctrl Controller, aliases []string) {
	d, ok := ctrl.(controller.Debuggable)
	if !ok || m == nil {
		return
	}
	h := d.DebuggingHandler()
	if h == nil {
		return
	}
	for _, name := range append([]string{ctrl.Name()}, aliases...) {
		base := "/debug/controllers/" + name
		m.UnlistedHandle(base, http.StripPrefix(base, h))
		m.UnlistedHandlePrefix(base+"/", http.StripPrefix(base, h))
	}
}

// tracked wraps a controller so that its health check fails if its Run
// returned while the process still wanted it running.
type tracked struct {
	Controller
	// runningMetric and manager label its running_managed_controllers
	// series; no series when runningMetric is empty.
	runningMetric, manager string

	mu     sync.Mutex
	exited bool
}

// running sets the controller's running_managed_controllers series.
func (t *tracked) running(on bool) {
	if t.runningMetric == "" {
		return
	}
	m := controllersmetrics.NewControllerManagerMetrics(t.manager)
	if on {
		m.ControllerStarted(t.runningMetric)
	} else {
		m.ControllerStopped(t.runningMetric)
	}
}

func (t *tracked) check(*http.Request) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.exited {
		return fmt.Errorf("controller %s is not running", t.Name())
	}
	return nil
}

// Run starts every controller in its own goroutine, each after a jittered
// delay of startInterval, and blocks until ctx is cancelled and they have
// all returned, or until shutdownTimeout has passed after cancellation (a
// timeout of 0 waits forever). It reports whether all controllers stopped.
func Run(ctx context.Context, controllers []Controller, startInterval, shutdownTimeout time.Duration) bool {
	logger := klog.FromContext(ctx)
	var (
		mu      sync.Mutex
		running = sets.New[string]()
		wg      sync.WaitGroup
	)
	for _, c := range controllers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if startInterval > 0 {
				select {
				case <-time.After(wait.Jitter(startInterval, 1.0)):
				case <-ctx.Done():
					return
				}
			}
			mu.Lock()
			running.Insert(c.Name())
			mu.Unlock()
			logger.V(1).Info("Controller starting", "controller", c.Name())
			t, _ := c.(*tracked)
			if t != nil {
				t.running(true)
			}
			defer func() {
				mu.Lock()
				running.Delete(c.Name())
				mu.Unlock()
				if t != nil {
					t.running(false)
					t.mu.Lock()
					t.exited = true
					t.mu.Unlock()
				}
				logger.V(1).Info("Controller terminated", "controller", c.Name())
			}()
			c.Run(ctx)
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	select {
	case <-done:
		return true
	case <-ctx.Done():
	}
	var timeout <-chan time.Time
	if shutdownTimeout > 0 {
		t := time.NewTimer(shutdownTimeout)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-done:
		logger.Info("All controllers terminated")
		return true
	case <-timeout:
		mu.Lock()
		names := sets.List(running)
		mu.Unlock()
		sort.Strings(names)
		logger.Info("Controller shutdown timeout reached", "timeout", shutdownTimeout, "runningControllers", names)
		return false
	}
}
