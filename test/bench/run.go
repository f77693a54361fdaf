package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kcm-dev/kcm/cmd/kube-controller-manager/app"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/test/cluster"
)

// Binary keys, as --binaries takes them.
const (
	Upstream = "upstream"
	Ours     = "ours"
)

// Load generator client: fast enough never to be the bottleneck.
const (
	loadQPS   = 500
	loadBurst = 1000
)

// Config is one invocation of the benchmark.
type Config struct {
	// OutDir receives results.json, results.md and runs/<qps>/<binary>/<scenario>/
	// (each a cluster work dir: logs/, audit.log, samples.json…).
	OutDir string
	// BinDir is where test/cluster finds the binaries; empty means its default.
	BinDir string
	// Scenarios run in order on a fresh cluster each.
	Scenarios []Scenario
	// Binaries: Upstream and/or Ours, in run order.
	Binaries []string
	// BinaryPaths overrides, per binary key, the controller manager binary
	// (a path, or a name in BinDir); by default upstream is
	// upstream-kube-controller-manager and ours kube-controller-manager.
	BinaryPaths map[string]string
	// QPSSettings run in order; each runs every binary.
	QPSSettings []QPSSetting
	// Repeat runs every binary's phase sets this many times per QPS
	// setting, the binaries taking turns (upstream, ours, upstream, ours…),
	// so that slow drift of the machine falls on both alike; the table
	// then shows medians. Zero means once.
	Repeat int
	Params Params
	// ExtraArgs are appended to both controller managers' command lines,
	// after the QPS flags.
	ExtraArgs []string
	// SchedulerArgs are appended to kube-scheduler's command line, the same
	// for both binaries (sig-scalability's large jobs raise its QPS).
	SchedulerArgs []string
	// StartTimeout bounds each process's start (test/cluster).
	StartTimeout time.Duration
	// Settle is how long to let a new controller manager start its
	// controllers, after it took the Lease, before the setup begins.
	Settle time.Duration
	// Drain is how long the cluster stays up after the last phase, so that
	// requests still on their way (Events above all) reach the audit log
	// and count in the phase whose work they record; zero means none.
	Drain time.Duration
	// Registry is our binary's controller registry; nil means
	// app.NewRegistry(). Phases needing a controller without a constructor
	// are not run on ours unless Force.
	Registry controllermanager.Registry
	Force    bool
	// Logf receives progress; nil means none.
	Logf func(format string, args ...any)
}

// QPSSetting is one --kube-api-qps/--kube-api-burst pair; zero means the
// binary's defaults (no flags passed).
type QPSSetting struct {
	Name       string `json:"name"`
	QPS, Burst int    `json:"-"`
}

// Args returns the controller manager flags of the setting.
func (q QPSSetting) Args() []string {
	if q.QPS == 0 {
		return nil
	}
	return []string{"--kube-api-qps=" + strconv.Itoa(q.QPS), "--kube-api-burst=" + strconv.Itoa(q.Burst)}
}

// ParseQPSSetting parses "default", "500" (QPS and burst 500) or "500/1000".
func ParseQPSSetting(s string) (QPSSetting, error) {
	s = strings.TrimSpace(s)
	if s == "default" {
		return QPSSetting{Name: s}, nil
	}
	qs, bs, hasBurst := strings.Cut(s, "/")
	q, err := strconv.Atoi(qs)
	if err != nil || q <= 0 {
		return QPSSetting{}, fmt.Errorf("bench: QPS setting %q: want \"default\", N or N/BURST with N > 0", s)
	}
	b := q
	if hasBurst {
		if b, err = strconv.Atoi(bs); err != nil || b <= 0 {
			return QPSSetting{}, fmt.Errorf("bench: QPS setting %q: burst must be a positive integer", s)
		}
	}
	return QPSSetting{Name: s, QPS: q, Burst: b}, nil
}

// MissingControllers returns the required controllers that the registry
// lacks or has no constructor for, in the order given.
func MissingControllers(reg controllermanager.Registry, required []string) []string {
	var out []string
	for _, name := range required {
		if d := reg[name]; d == nil || d.New == nil {
			out = append(out, name)
		}
	}
	return out
}

func (cfg *Config) logf(format string, args ...any) {
	if cfg.Logf != nil {
		cfg.Logf(format, args...)
	}
}

func (cfg *Config) binaryName(b string) string {
	if p := cfg.BinaryPaths[b]; p != "" {
		return p
	}
	if b == Upstream {
		return cluster.UpstreamControllerManager
	}
	return cluster.OurControllerManager
}

// Validate checks a Config before anything starts.
func (cfg *Config) Validate() error {
	var errs []error
	if cfg.OutDir == "" {
		errs = append(errs, errors.New("bench: an output directory is required"))
	}
	if len(cfg.Scenarios) == 0 || len(cfg.Binaries) == 0 || len(cfg.QPSSettings) == 0 {
		errs = append(errs, errors.New("bench: need at least one phase set, binary and QPS setting"))
	}
	for _, b := range cfg.Binaries {
		if b != Upstream && b != Ours {
			errs = append(errs, fmt.Errorf("bench: unknown binary %q (want %s or %s)", b, Upstream, Ours))
		}
	}
	p := cfg.Params
	if p.Nodes < 1 || p.Deployments < 1 || p.Replicas < 1 || p.ScaleTo < 1 || p.NewNodes < 1 || p.Workers < 1 {
		errs = append(errs, errors.New("bench: nodes, deployments, replicas, scale-to, new-nodes and workers must be positive"))
	}
	if cfg.Drain < 0 {
		errs = append(errs, errors.New("bench: the drain period must not be negative"))
	}
	if cfg.Repeat < 0 {
		errs = append(errs, errors.New("bench: the repetition count must not be negative"))
	}
	if p.PhaseTimeout <= 0 || p.Idle < 0 {
		errs = append(errs, errors.New("bench: the phase timeout must be positive and the idle period not negative"))
	}
	return errors.Join(errs...)
}

// Warnings returns what in a valid Config will likely distort the figures.
func (cfg *Config) Warnings() []string {
	var w []string
	p := cfg.Params
	// A rolling update surges by 25% (rounded up) per Deployment.
	peak := p.Deployments * (max(p.Replicas, p.ScaleTo) + (max(p.Replicas, p.ScaleTo)+3)/4)
	if capacity := p.Nodes * 110; slices.ContainsFunc(cfg.Scenarios, func(s Scenario) bool { return s.Name == ScenarioDeployments }) && peak > capacity {
		w = append(w, fmt.Sprintf("up to %d pods at once but %d nodes hold only %d: pods will stay Pending and phases time out", peak, p.Nodes, capacity))
	}
	return w
}

// Run runs every QPS setting × binary × scenario, each on a fresh cluster,
// and writes results.json and results.md into OutDir. It returns the
// results also when ctx is cancelled midway (with what ran so far) and an
// error only if nothing could be measured or the results not written.
func Run(ctx context.Context, cfg Config) (*Results, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Registry == nil {
		cfg.Registry = app.NewRegistry()
	}
	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	res := &Results{
		Started: time.Now(),
		Host:    hostInfo(),
		Config:  cfg.summary(),
	}
	for _, q := range cfg.QPSSettings {
		for rep := 1; rep <= cfg.repetitions(); rep++ {
			for _, b := range cfg.Binaries {
				for _, s := range cfg.Scenarios {
					if ctx.Err() != nil {
						break
					}
					r := runOne(ctx, &cfg, q, b, s, rep)
					res.Runs = append(res.Runs, r)
					// Write as we go, so an interrupted invocation leaves figures.
					if err := res.Write(cfg.OutDir); err != nil {
						cfg.logf("bench: %v", err)
					}
				}
			}
		}
	}
	res.Finished = time.Now()
	res.Interrupted = ctx.Err() != nil
	if err := res.Write(cfg.OutDir); err != nil {
		return res, err
	}
	return res, nil
}

// repetitions is how many times each run is made (Repeat, at least once).
func (cfg *Config) repetitions() int { return max(cfg.Repeat, 1) }

func (cfg *Config) summary() ConfigSummary {
	s := ConfigSummary{Params: cfg.Params, Binaries: cfg.Binaries, ExtraArgs: cfg.ExtraArgs, SchedulerArgs: cfg.SchedulerArgs, Settle: cfg.Settle, Drain: cfg.Drain, Force: cfg.Force}
	if cfg.repetitions() > 1 {
		s.Repeat = cfg.repetitions()
	}
	for _, q := range cfg.QPSSettings {
		s.QPSSettings = append(s.QPSSettings, q.Name)
	}
	for _, sc := range cfg.Scenarios {
		s.PhaseSets = append(s.PhaseSets, sc.Name)
		for _, p := range sc.Phases {
			s.Phases = append(s.Phases, PhaseInfo{Set: sc.Name, Name: p.Name, Description: p.Description})
		}
	}
	return s
}

// runOne measures one scenario on one binary at one QPS setting on a fresh
// cluster, and always stops that cluster again. rep numbers the repetition
// from 1; with more than one, each has its own work dir (<scenario>.<rep>).
func runOne(ctx context.Context, cfg *Config, q QPSSetting, binary string, sc Scenario, rep int) RunResult {
	dirName := sc.Name
	r := RunResult{QPS: q.Name, Binary: binary, Scenario: sc.Name}
	if cfg.repetitions() > 1 {
		dirName = fmt.Sprintf("%s.%d", sc.Name, rep)
		r.Repetition = rep
	}
	dir := filepath.Join(cfg.OutDir, "runs", strings.ReplaceAll(q.Name, "/", "-"), binary, dirName)
	extra := append(append(q.Args(), sc.ControllerManagerArgs...), cfg.ExtraArgs...)
	r.ExtraArgs = extra
	of := ""
	if r.Repetition > 0 {
		of = fmt.Sprintf(" (repetition %d of %d)", rep, cfg.repetitions())
	}
	cfg.logf("bench: === %s, qps %s, %s%s", binary, q.Name, sc.Name, of)

	// Which phases can run: all on upstream; on ours, the leading phases
	// whose controllers exist (a phase builds on the ones before it).
	// Command-line flags are not known before the cluster exists, but only
	// their names matter here, and kubeadm's line always comes first.
	kcmArgs := append(kubeadmFlagsForRequirements(), extra...)
	reqs := sc.Requirements(kcmArgs)
	missing := make([][]string, len(sc.Phases))
	runnable := 0
	for i := range sc.Phases {
		if binary == Ours {
			missing[i] = MissingControllers(cfg.Registry, reqs[i])
		}
		if len(missing[i]) == 0 || cfg.Force {
			if runnable == i {
				runnable++
			}
		}
	}
	for i, p := range sc.Phases {
		r.Phases = append(r.Phases, PhaseResult{Name: p.Name, Status: StatusSkipped, Missing: missing[i]})
		if i >= runnable {
			r.Phases[i].Status = StatusNotRunnable
			r.Phases[i].Detail = notRunnableDetail(missing[i])
		}
	}
	if runnable == 0 {
		cfg.logf("bench: %s cannot run %s: %s", binary, sc.Name, r.Phases[0].Detail)
		return r
	}

	r.WorkDir = dir
	if err := os.RemoveAll(dir); err != nil {
		r.Error = err.Error()
		return r
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.Error = err.Error()
		return r
	}
	r.LoadAvgBefore = loadAvg()
	clean := measure(ctx, cfg, &r, sc, runnable, binary, extra)
	r.LoadAvgAfter = loadAvg()
	if clean {
		// Logs and the audit log stay; etcd's data is only bulk.
		_ = os.RemoveAll(filepath.Join(dir, "etcd"))
	} else {
		cfg.logf("bench: logs and audit log of this run kept in %s", dir)
	}
	return r
}

// kubeadmFlagsForRequirements is the part of test/cluster's controller
// manager command line that decides which controllers phases need.
func kubeadmFlagsForRequirements() []string {
	return []string{"--allocate-node-cidrs=true"}
}

func notRunnableDetail(missing []string) string {
	if len(missing) == 0 {
		return "not run: an earlier phase is not runnable"
	}
	return "not yet runnable: missing " + strings.Join(missing, ", ")
}

// measure starts the cluster, runs the setup and the first n phases,
// samples the controller manager throughout, stops everything and counts
// the audit log. It reports whether everything went as planned.
func measure(ctx context.Context, cfg *Config, r *RunResult, sc Scenario, n int, binary string, extra []string) (clean bool) {
	setupStart := time.Now()
	c, err := cluster.Start(ctx, cluster.Options{
		WorkDir:           r.WorkDir,
		BinDir:            cfg.BinDir,
		ControllerManager: cluster.ControllerManagerOptions{Binary: cfg.binaryName(binary), ExtraArgs: extra},
		// Without node leases kwok heartbeats a node only every 10-20
		// minutes: node-lifecycle-controller then finds every node NotReady
		// after its grace period and marks every pod NotReady, for good
		// (kwok readies pods only while Pending). kwokctl passes 40.
		ExtraKwokArgs:   []string{"--node-lease-duration-seconds=" + strconv.Itoa(orDefault(cfg.Params.NodeLeaseSeconds, defaultNodeLeaseSeconds))},
		KwokParallelism: cfg.Params.KwokParallelism,
		// The only scheduler needs no lease. With one, a loaded machine
		// can keep it from renewing in time: it exits ("Leaderelection
		// lost") and the phase waits for pods nobody schedules.
		ExtraSchedulerArgs: append([]string{"--leader-elect=false"}, cfg.SchedulerArgs...),
		StartTimeout:       cfg.StartTimeout,
		Logf:               cfg.Logf,
	})
	if err != nil {
		r.Error = "cluster start: " + err.Error()
		return false
	}
	ticks := ClockTicks()
	sampler := NewSampler(func() int { return c.PID(cluster.ControllerManager) }, DefaultSampleInterval)
	sampler.Start()
	r.BinaryPath = c.Options().ControllerManager.Binary
	r.BinaryVersion = binaryVersion(r.BinaryPath)

	windows, clean := runPhases(ctx, cfg, c, sampler, r, sc, n, setupStart)
	if err := c.Stop(); err != nil {
		r.Error = strings.TrimSpace(r.Error + "; stop: " + err.Error())
		clean = false
	}
	samples := sampler.Samples()
	r.SamplerErrors, _ = sampler.Errors()
	if err := writeJSON(filepath.Join(r.WorkDir, "samples.json"), samples); err != nil {
		cfg.logf("bench: %v", err)
	}
	events, err := cluster.ReadAuditEvents(c.AuditLogPath)
	if err != nil {
		r.Error = strings.TrimSpace(r.Error + "; " + err.Error())
		return false
	}
	account(r, samples, events, windows, ticks)
	return clean
}

// runPhases waits for the controller manager, runs the setup and the first
// n phases while the sampler runs, and returns the time windows to count
// requests in and whether everything succeeded.
func runPhases(ctx context.Context, cfg *Config, c *cluster.Cluster, sampler *Sampler, r *RunResult, sc Scenario, n int, setupStart time.Time) ([]Window, bool) {
	defer sampler.Stop()
	env, stopInformers, err := newEnv(ctx, cfg, c)
	if err != nil {
		r.Error = err.Error()
		return nil, false
	}
	defer stopInformers()

	setup := PhaseResult{Name: "setup", Start: setupStart, Status: StatusOK}
	err = c.WaitForControllerManagerLeader(ctx)
	if err == nil {
		err = sleepCtx(ctx, cfg.Settle)
	}
	if err == nil && sc.Setup != nil {
		err = runBounded(ctx, env, sc.Setup)
	}
	setup.End = time.Now()
	setStatus(&setup, err)
	r.Setup = &setup
	windows := []Window{{Name: setup.Name, Start: setup.Start, End: setup.End}}
	if err != nil {
		cfg.logf("bench: setup: %v", err)
		return windows, false
	}
	for i, p := range sc.Phases[:n] {
		pr := &r.Phases[i]
		pr.Start = time.Now()
		sampler.SampleNow()
		cfg.logf("bench: phase %s: %s", p.Name, p.Description)
		err := runBounded(ctx, env, p.Run)
		sampler.SampleNow()
		pr.End = time.Now()
		pr.Figures = env.takeFigures()
		if heap, herr := heapInUseMiB(ctx, c); herr == nil {
			if pr.Figures == nil {
				pr.Figures = map[string]float64{}
			}
			pr.Figures[heapInUseFigure] = heap
		} else {
			cfg.logf("bench: phase %s: heap in use: %v", p.Name, herr)
		}
		saveHeap(ctx, cfg, c, r, p.Name)
		setStatus(pr, err)
		windows = append(windows, Window{Name: p.Name, Start: pr.Start, End: pr.End})
		cfg.logf("bench: phase %s: %s in %.1fs %s", p.Name, pr.Status, pr.End.Sub(pr.Start).Seconds(), pr.Detail)
		if err != nil {
			for j := i + 1; j < n; j++ {
				r.Phases[j].Detail = "after " + p.Name + " " + pr.Status
			}
			return windows, false
		}
	}
	if cfg.Drain > 0 {
		start := time.Now()
		cfg.logf("bench: drain: %v for requests still on their way", cfg.Drain)
		if err := sleepCtx(ctx, cfg.Drain); err != nil {
			return windows, false
		}
		windows = append(windows, Window{Name: drainWindow, Start: start, End: time.Now()})
	}
	return windows, true
}

// drainWindow names the period after the last phase (Config.Drain).
const drainWindow = "(drain)"

// account fills in the setup's and every run phase's wall time, process
// figures and requests.
func account(r *RunResult, samples []Sample, events []cluster.AuditEvent, windows []Window, ticks uint64) {
	byWindow, other := CountByWindow(events, windows)
	r.Unattributed = other
	if rc := byWindow[drainWindow]; rc != nil {
		r.Drained = *rc
	}
	for _, pr := range append([]*PhaseResult{r.Setup}, phasePointers(r.Phases)...) {
		if pr == nil || pr.Start.IsZero() {
			continue
		}
		pr.WallSeconds = pr.End.Sub(pr.Start).Seconds()
		pr.Process = StatsBetween(samples, pr.Start, pr.End, ticks)
		if rc := byWindow[pr.Name]; rc != nil {
			pr.Requests = *rc
		}
	}
}

func phasePointers(ps []PhaseResult) []*PhaseResult {
	out := make([]*PhaseResult, len(ps))
	for i := range ps {
		out[i] = &ps[i]
	}
	return out
}

// runBounded runs fn with the phase timeout.
func runBounded(ctx context.Context, env *Env, fn func(context.Context, *Env) error) error {
	ctx, cancel := context.WithTimeout(ctx, env.Params.PhaseTimeout)
	defer cancel()
	return fn(ctx, env)
}

func setStatus(pr *PhaseResult, err error) {
	var te *TimeoutError
	switch {
	case err == nil:
		pr.Status, pr.Detail = StatusOK, ""
	case errors.As(err, &te):
		pr.Status, pr.Detail = StatusTimeout, te.Error()
	case errors.Is(err, context.Canceled):
		pr.Status, pr.Detail = StatusInterrupted, ""
	default:
		pr.Status, pr.Detail = StatusFailed, err.Error()
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// newEnv builds the load generator's client and starts informers on the
// objects phases wait for; stop ends them.
func newEnv(ctx context.Context, cfg *Config, c *cluster.Cluster) (*Env, func(), error) {
	rc := rest.CopyConfig(c.RESTConfig)
	rc.QPS, rc.Burst = loadQPS, loadBurst
	rc.UserAgent = "kcm-bench"
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, nil, fmt.Errorf("bench: client: %w", err)
	}
	nsFactory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(benchNamespace), informers.WithTransform(trimManagedFields))
	nodeFactory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTransform(trimManagedFields))
	env := &Env{
		Cluster:      c,
		Client:       client,
		Namespace:    benchNamespace,
		Params:       cfg.Params,
		KCMArgs:      c.ControllerManagerArgs(c.Options().ControllerManager.ExtraArgs...),
		Logf:         cfg.logf,
		Deployments:  nsFactory.Apps().V1().Deployments().Lister(),
		StatefulSets: nsFactory.Apps().V1().StatefulSets().Lister(),
		Pods:         nsFactory.Core().V1().Pods().Lister(),
		PodInformer:  nsFactory.Core().V1().Pods().Informer(),
		Nodes:        nodeFactory.Core().V1().Nodes().Lister(),

		EndpointSlices: nsFactory.Discovery().V1().EndpointSlices().Lister(),
		Endpoints:      nsFactory.Core().V1().Endpoints().Lister(),
	}
	ictx, cancel := context.WithCancel(ctx)
	env.stopCh = ictx.Done()
	nsFactory.Start(ictx.Done())
	nodeFactory.Start(ictx.Done())
	stop := func() {
		cancel()
		nsFactory.Shutdown()
		nodeFactory.Shutdown()
	}
	sctx, scancel := context.WithTimeout(ictx, cfg.StartTimeout)
	defer scancel()
	for typ, ok := range nsFactory.WaitForCacheSync(sctx.Done()) {
		if !ok {
			stop()
			return nil, nil, fmt.Errorf("bench: informer for %v did not sync", typ)
		}
	}
	for typ, ok := range nodeFactory.WaitForCacheSync(sctx.Done()) {
		if !ok {
			stop()
			return nil, nil, fmt.Errorf("bench: informer for %v did not sync", typ)
		}
	}
	return env, stop, nil
}

// trimManagedFields drops managedFields from informer objects: trimmed
// objects keep the load generator's own memory and CPU small.
func trimManagedFields(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}

func hostInfo() Host {
	h := Host{CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		h.Kernel = strings.TrimSpace(string(b))
	}
	return h
}

// loadAvg returns the 1, 5 and 15 minute load averages ("" if unknown): the
// machine is shared, so they say how much else was running.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// binaryVersion asks a binary for --version, bounded.
func binaryVersion(path string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return nil
}

func writeFile(path, s string) error {
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return nil
}

// saveHeap writes the controller manager's heap profile at the end of a
// phase to the run's heap-<phase>.pprof, for its largest retainers: the
// heap peaks in the middle of a scale run (after outage), not at its end,
// and a timed-out phase at a large size is often all a run gets to.
func saveHeap(ctx context.Context, cfg *Config, c *cluster.Cluster, r *RunResult, phase string) {
	if err := saveHeapProfile(ctx, c, filepath.Join(r.WorkDir, "heap-"+phase+".pprof")); err != nil {
		cfg.logf("bench: heap profile: %v", err)
	}
}
