package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/cluster"
)

// Scenario names, as --phases takes them.
const (
	ScenarioDeployments = "deployments"
	ScenarioNodes       = "nodes"
)

// Images the deployments phases use; kwok never pulls them.
const (
	imageBefore = "registry.k8s.io/pause:3.9"
	imageAfter  = "registry.k8s.io/pause:3.10"
)

// Names of objects the benchmark creates.
const (
	benchNamespace       = "bench"
	deploymentNameFormat = "bench-%04d"
	setupNodePrefix      = cluster.DefaultNodePrefix
	newNodePrefix        = "bench-node"
	containerName        = "pause"
)

// waitInterval is how often a phase re-checks its informer caches;
// progressEvery how often a long wait logs how far it got.
const (
	waitInterval  = 200 * time.Millisecond
	progressEvery = 30 * time.Second
)

// Params sizes the scenarios.
type Params struct {
	// Nodes is how many kwok nodes the deployments scenario runs on.
	Nodes int `json:"nodes"`
	// Deployments, Replicas: the create phase; ScaleTo: the scale phase.
	Deployments int `json:"deployments"`
	Replicas    int `json:"replicas"`
	ScaleTo     int `json:"scaleTo"`
	// NewNodes is how many nodes the nodes phase creates.
	NewNodes int `json:"newNodes"`
	// StatefulSets, StatefulSetReplicas: the statefulsets create phase;
	// StatefulSetScaleTo: its scale phase (0: 50, 10, 20).
	StatefulSets        int `json:"statefulSets,omitempty"`
	StatefulSetReplicas int `json:"statefulSetReplicas,omitempty"`
	StatefulSetScaleTo  int `json:"statefulSetScaleTo,omitempty"`
	// DaemonSets, DaemonSetNodes: the daemonsets create phase (each
	// DaemonSet on every node); DaemonSetNewNodes: its add-nodes phase
	// (0: 20, 500, 100).
	DaemonSets        int `json:"daemonSets,omitempty"`
	DaemonSetNodes    int `json:"daemonSetNodes,omitempty"`
	DaemonSetNewNodes int `json:"daemonSetNewNodes,omitempty"`
	// Services, ServiceReplicas: the endpoints create phase (a Deployment
	// per Service); ServiceScaleTo: its scale phase (0: 100, 30, 60).
	Services        int `json:"services,omitempty"`
	ServiceReplicas int `json:"serviceReplicas,omitempty"`
	ServiceScaleTo  int `json:"serviceScaleTo,omitempty"`
	// JobNodes, JobCompletions, JobParallelism: the jobs scenario's nodes
	// and its Indexed Job; SmallJobs, SmallJobCompletions: its small Jobs
	// (0: 10, 1000, 100, 200, 5).
	JobNodes            int `json:"jobNodes,omitempty"`
	JobCompletions      int `json:"jobCompletions,omitempty"`
	JobParallelism      int `json:"jobParallelism,omitempty"`
	SmallJobs           int `json:"smallJobs,omitempty"`
	SmallJobCompletions int `json:"smallJobCompletions,omitempty"`
	// DRANodes, DRADeployments, DRAReplicas: the dra scenario's nodes and
	// its Deployments (each pod with a claim from a template); DRATaints:
	// the devices its taint phase taints (0: 50, 100, 10, 10).
	DRANodes       int `json:"draNodes,omitempty"`
	DRADeployments int `json:"draDeployments,omitempty"`
	DRAReplicas    int `json:"draReplicas,omitempty"`
	DRATaints      int `json:"draTaints,omitempty"`
	// ScaleNodes, ScaleServices: the scale scenario's nodes (30 pods
	// each) and Services (0: 500, 1000).
	ScaleNodes    int `json:"scaleNodes,omitempty"`
	ScaleServices int `json:"scaleServices,omitempty"`
	// NodeLeaseSeconds is kwok's --node-lease-duration-seconds (0: 40, as
	// kwokctl; kwok renews at a quarter of it). A machine too small for
	// the nodes' heartbeats lengthens it, with the controller managers'
	// --node-monitor-grace-period through ExtraArgs, the same for both.
	NodeLeaseSeconds int `json:"nodeLeaseSeconds,omitempty"`
	// KwokParallelism is each kwok's pods, nodes and leases worked on at
	// once (0: kwok's 4), the same for both binaries (cluster.Options).
	KwokParallelism int `json:"kwokParallelism,omitempty"`
	// Idle is the length of the idle phase.
	Idle time.Duration `json:"idle"`
	// PhaseTimeout bounds every phase (and every setup).
	PhaseTimeout time.Duration `json:"phaseTimeout"`
	// Workers is the size of the load generator's worker pool.
	Workers int `json:"workers"`
}

// Phase is one measured step of a scenario.
type Phase struct {
	Name        string
	Description string
	// Requires lists the controllers this phase needs, given the controller
	// manager's command line; the phases before it and the scenario's setup
	// add theirs (see Scenario.Requirements).
	Requires func(kcmArgs []string) []string
	// Run does the phase's work and waits for its outcome; ctx carries the
	// phase's deadline. A missed deadline is returned as *TimeoutError.
	Run func(ctx context.Context, env *Env) error
}

// Scenario is a setup, not measured as a phase, and phases run in order on
// one fresh cluster.
type Scenario struct {
	Name string
	// SetupRequires lists the controllers Setup needs.
	SetupRequires []string
	// Setup, if not nil, prepares the cluster (e.g. creates the nodes).
	Setup  func(ctx context.Context, env *Env) error
	Phases []Phase
	// ControllerManagerArgs are appended to both controller managers'
	// command lines, after the QPS flags and before --kcm-arg's.
	ControllerManagerArgs []string
}

// Requirements returns, for each phase in order, every controller it needs:
// the setup's, its own and those of the phases before it (a phase runs on
// what they left).
func (s Scenario) Requirements(kcmArgs []string) [][]string {
	seen := map[string]bool{}
	var acc []string
	add := func(names []string) {
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				acc = append(acc, n)
			}
		}
	}
	add(s.SetupRequires)
	out := make([][]string, len(s.Phases))
	for i, p := range s.Phases {
		if p.Requires != nil {
			add(p.Requires(kcmArgs))
		}
		out[i] = append([]string(nil), acc...)
	}
	return out
}

// Scenarios returns every scenario, in the order they run.
func Scenarios() []Scenario {
	static := func(n ...string) func([]string) []string { return func([]string) []string { return n } }
	return []Scenario{
		{
			Name:          ScenarioDeployments,
			SetupRequires: []string{names.ServiceAccount, names.NodeLifecycle},
			Setup:         setupDeployments,
			Phases: []Phase{
				{Name: "create", Description: "create Deployments, wait until all are available",
					Requires: static(names.Deployment, names.ReplicaSet), Run: createDeployments},
				{Name: "scale", Description: "scale every Deployment, wait until all are available",
					Requires: static(names.Deployment, names.ReplicaSet), Run: scaleDeployments},
				{Name: "roll", Description: "new image in every Deployment, wait until every rollout is complete",
					Requires: static(names.Deployment, names.ReplicaSet), Run: rollDeployments},
				{Name: "delete", Description: "delete every Deployment (background propagation), wait until no pod remains",
					Requires: static(names.GarbageCollector), Run: deleteDeployments},
				{Name: "idle", Description: "nothing happens", Run: idle},
			},
		},
		{
			Name: ScenarioNodes,
			Phases: []Phase{
				{Name: "nodes", Description: "create nodes, wait until all are untainted (and have a podCIDR with --allocate-node-cidrs)",
					Requires: nodesRequire, Run: createNodes},
			},
		},
		statefulSetsScenario(),
		endpointsScenario(),
		daemonSetsScenario(),
		jobsScenario(),
		volumesScenario(),
		draScenario(),
		scaleScenario(),
	}
}

// SelectScenarios returns the named scenarios in their run order.
func SelectScenarios(selected []string) ([]Scenario, error) {
	all := Scenarios()
	want := map[string]bool{}
	for _, n := range selected {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		found := false
		for _, s := range all {
			found = found || s.Name == n
		}
		if !found {
			var known []string
			for _, s := range all {
				known = append(known, s.Name)
			}
			return nil, fmt.Errorf("bench: unknown phase set %q (known: %s)", n, strings.Join(known, ", "))
		}
		want[n] = true
	}
	var out []Scenario
	for _, s := range all {
		if want[s.Name] {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("bench: no phase set selected")
	}
	return out, nil
}

func nodesRequire(kcmArgs []string) []string {
	if AllocateNodeCIDRs(kcmArgs) {
		return []string{names.NodeLifecycle, names.NodeIpam}
	}
	return []string{names.NodeLifecycle}
}

// AllocateNodeCIDRs reads the effective --allocate-node-cidrs from a
// command line (the last occurrence wins; a bare flag means true).
func AllocateNodeCIDRs(args []string) bool {
	on := false
	for _, a := range args {
		k, v, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if k == "allocate-node-cidrs" {
			on = !hasValue || v == "true"
		}
	}
	return on
}

// Env is what phases work with: the cluster, a fast client, informer caches
// of the objects they wait on, and what earlier phases wrote.
type Env struct {
	Cluster *cluster.Cluster
	// Client is the load generator's client, an admin with high QPS; its
	// requests are not audited.
	Client    kubernetes.Interface
	Namespace string
	Params    Params
	// KCMArgs is the controller manager's full command line.
	KCMArgs []string
	Logf    func(format string, args ...any)

	Deployments  appslisters.DeploymentLister
	StatefulSets appslisters.StatefulSetLister
	Pods         corelisters.PodLister
	// PodInformer is the informer behind Pods, started and synced.
	PodInformer cache.SharedIndexInformer
	Nodes       corelisters.NodeLister
	// EndpointSlices and Endpoints are the bench namespace's.
	EndpointSlices discoverylisters.EndpointSliceLister
	Endpoints      corelisters.EndpointsLister

	// stopCh ends with the load generator's informers; scale holds the
	// scale scenario's own (setupScale).
	stopCh <-chan struct{}
	scale  *scaleState

	mu sync.Mutex
	// figures are the running phase's own figures (Figure).
	figures map[string]float64
	// generations holds, per Deployment, the generation the last write
	// returned: the cache may still hold an older object.
	generations map[string]int64
}

// Figure records a figure of the running phase, reported with it.
func (env *Env) Figure(name string, v float64) {
	env.mu.Lock()
	defer env.mu.Unlock()
	if env.figures == nil {
		env.figures = map[string]float64{}
	}
	env.figures[name] = v
}

// takeFigures returns the figures recorded since the last call.
func (env *Env) takeFigures() map[string]float64 {
	env.mu.Lock()
	defer env.mu.Unlock()
	f := env.figures
	env.figures = nil
	return f
}

func (env *Env) setGeneration(name string, gen int64) {
	env.mu.Lock()
	defer env.mu.Unlock()
	if env.generations == nil {
		env.generations = map[string]int64{}
	}
	env.generations[name] = gen
}

func (env *Env) generation(name string) int64 {
	env.mu.Lock()
	defer env.mu.Unlock()
	return env.generations[name]
}

// TimeoutError is a wait that missed its phase's deadline.
type TimeoutError struct {
	What     string
	After    time.Duration
	Progress string
}

func (e *TimeoutError) Error() string {
	if e.Progress == "" {
		return fmt.Sprintf("timed out after %v waiting for %s", e.After.Round(time.Second), e.What)
	}
	return fmt.Sprintf("timed out after %v waiting for %s (%s)", e.After.Round(time.Second), e.What, e.Progress)
}

// waitFor polls check on the informer caches until it holds, ctx ends (a
// deadline becomes a *TimeoutError) or the controller manager exits.
func (env *Env) waitFor(ctx context.Context, what string, check func() (bool, string)) error {
	start := time.Now()
	lastLog := start
	t := time.NewTicker(waitInterval)
	defer t.Stop()
	for {
		done, progress := check()
		if done {
			return nil
		}
		if time.Since(lastLog) >= progressEvery {
			lastLog = time.Now()
			env.Logf("bench: waiting %v for %s: %s", lastLog.Sub(start).Round(time.Second), what, progress)
		}
		if !env.Cluster.ControllerManagerRunning() {
			return fmt.Errorf("kube-controller-manager exited while waiting for %s (%s); see %s", what, progress, env.Cluster.LogPath(cluster.ControllerManager))
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return &TimeoutError{What: what, After: time.Since(start), Progress: progress}
			}
			return ctx.Err()
		case <-t.C:
		}
	}
}

// forEach runs fn(ctx, i) for i in [0, n) on the worker pool, retrying
// transient API errors. It returns the first few errors joined.
func (env *Env) forEach(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	workers := max(1, min(env.Params.Workers, n))
	next := make(chan int)
	var mu sync.Mutex
	var errs []error
	failed := 0
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				err := retry.OnError(retry.DefaultBackoff, transient, func() error { return fn(ctx, i) })
				if err != nil {
					mu.Lock()
					if failed++; failed <= 3 {
						errs = append(errs, err)
					}
					mu.Unlock()
				}
			}
		})
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	// Once ctx has ended, the errors are only its consequences.
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &TimeoutError{What: "the load generator's requests", After: env.Params.PhaseTimeout}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if failed > 3 {
		errs = append(errs, fmt.Errorf("and %d more errors", failed-3))
	}
	return errors.Join(errs...)
}

// transient reports errors worth retrying.
func transient(err error) bool {
	return apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsUnexpectedServerError(err)
}

func deploymentName(i int) string { return fmt.Sprintf(deploymentNameFormat, i) }

// setupDeployments creates the namespace, waits for its default
// ServiceAccount (pods are admitted only then), creates the nodes and waits
// until they are schedulable.
func setupDeployments(ctx context.Context, env *Env) error {
	return setupNamespaceAndNodes(ctx, env, env.Params.Nodes)
}

// setupNamespaceAndNodes is setupDeployments with n nodes.
func setupNamespaceAndNodes(ctx context.Context, env *Env, n int) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: env.Namespace}}
	if _, err := env.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", env.Namespace, err)
	}
	err := env.waitFor(ctx, "ServiceAccount "+env.Namespace+"/default", func() (bool, string) {
		_, err := env.Client.CoreV1().ServiceAccounts(env.Namespace).Get(ctx, "default", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	if err != nil {
		return err
	}
	nodeNames := make([]string, n)
	err = env.forEach(ctx, n, func(ctx context.Context, i int) error {
		nodeNames[i] = fmt.Sprintf("%s-%d", setupNodePrefix, i)
		return createNode(ctx, env.Client, nodeNames[i])
	})
	if err != nil {
		return err
	}
	err = env.waitFor(ctx, fmt.Sprintf("%d nodes Ready and untainted", len(nodeNames)), func() (bool, string) {
		ready := 0
		var why string
		for _, n := range nodeNames {
			node, err := env.Nodes.Get(n)
			if err != nil {
				why = n + ": not in cache yet"
				continue
			}
			if ok, reason := cluster.NodeSchedulable(node); !ok {
				why = n + ": " + reason
				continue
			}
			ready++
		}
		return ready == len(nodeNames), fmt.Sprintf("%d/%d ready; e.g. %s", ready, len(nodeNames), why)
	})
	if err != nil {
		return err
	}
	return waitRegistered(ctx, env, nodeNames)
}

// registrationWait bounds waitRegistered.
const registrationWait = time.Minute

// waitRegistered waits until the node lifecycle controller has registered
// every setup node (its RegisteredNode Event), so that its first look at
// them (the Events, its Lease reads) falls in the setup rather than in the
// first phase. Its monitor runs every 5 s: without this wait, whether that
// look landed in the phase depended on the monitor's phase against the
// setup's end, which differed between the binaries. A controller manager
// without that controller never registers them: after registrationWait the
// phases run anyway.
func waitRegistered(ctx context.Context, env *Env, nodeNames []string) error {
	want := make(map[string]bool, len(nodeNames))
	for _, n := range nodeNames {
		want[n] = true
	}
	wctx, cancel := context.WithTimeout(ctx, registrationWait)
	defer cancel()
	err := env.waitFor(wctx, fmt.Sprintf("%d nodes registered by the node lifecycle controller", len(nodeNames)), func() (bool, string) {
		events, err := env.Client.CoreV1().Events(metav1.NamespaceDefault).List(wctx, metav1.ListOptions{FieldSelector: "reason=RegisteredNode"})
		if err != nil {
			return false, err.Error()
		}
		seen := map[string]bool{}
		for _, e := range events.Items {
			if want[e.InvolvedObject.Name] {
				seen[e.InvolvedObject.Name] = true
			}
		}
		return len(seen) == len(want), fmt.Sprintf("%d/%d registered", len(seen), len(want))
	})
	var te *TimeoutError
	if errors.As(err, &te) && ctx.Err() == nil {
		env.Logf("bench: %v; running the phases anyway", err)
		return nil
	}
	return err
}

func createNode(ctx context.Context, c kubernetes.Interface, name string) error {
	_, err := c.CoreV1().Nodes().Create(ctx, cluster.NewKwokNode(name), metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create node %s: %w", name, err)
	}
	return nil
}

func newDeployment(name, namespace string, replicas int) *appsv1.Deployment {
	lbls := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: lbls},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(replicas)),
			Selector: &metav1.LabelSelector{MatchLabels: lbls},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: lbls},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: containerName, Image: imageBefore}},
				},
			},
		},
	}
}

func createDeployments(ctx context.Context, env *Env) error {
	err := env.forEach(ctx, env.Params.Deployments, func(ctx context.Context, i int) error {
		name := deploymentName(i)
		d, err := env.Client.AppsV1().Deployments(env.Namespace).Create(ctx, newDeployment(name, env.Namespace, env.Params.Replicas), metav1.CreateOptions{})
		switch {
		case apierrors.IsAlreadyExists(err): // a retried create that had gone through
			env.setGeneration(name, 1)
		case err != nil:
			return fmt.Errorf("create deployment %s: %w", name, err)
		default:
			env.setGeneration(name, d.Generation)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return env.waitRolledOut(ctx, int32(env.Params.Replicas))
}

func scaleDeployments(ctx context.Context, env *Env) error {
	patch := fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, env.Params.ScaleTo)
	err := env.patchAll(ctx, types.MergePatchType, patch)
	if err != nil {
		return err
	}
	return env.waitRolledOut(ctx, int32(env.Params.ScaleTo))
}

func rollDeployments(ctx context.Context, env *Env) error {
	patch := fmt.Appendf(nil, `{"spec":{"template":{"spec":{"containers":[{"name":%q,"image":%q}]}}}}`, containerName, imageAfter)
	err := env.patchAll(ctx, types.StrategicMergePatchType, patch)
	if err != nil {
		return err
	}
	return env.waitRolledOut(ctx, int32(env.Params.ScaleTo))
}

func (env *Env) patchAll(ctx context.Context, pt types.PatchType, patch []byte) error {
	return env.patchDeployments(ctx, env.Params.Deployments, deploymentName, pt, patch)
}

// patchDeployments patches the n Deployments nameOf(0..n-1), recording the
// generation each write returned.
func (env *Env) patchDeployments(ctx context.Context, n int, nameOf func(int) string, pt types.PatchType, patch []byte) error {
	return env.forEach(ctx, n, func(ctx context.Context, i int) error {
		name := nameOf(i)
		d, err := env.Client.AppsV1().Deployments(env.Namespace).Patch(ctx, name, pt, patch, metav1.PatchOptions{})
		if err != nil {
			return fmt.Errorf("patch deployment %s: %w", name, err)
		}
		env.setGeneration(name, d.Generation)
		return nil
	})
}

// RolledOut reports whether a Deployment has observed at least generation
// gen and runs exactly want replicas, all updated and available: what
// `kubectl rollout status` waits for, with no old replica left.
func RolledOut(d *appsv1.Deployment, gen int64, want int32) bool {
	return d.Generation >= gen && d.Status.ObservedGeneration >= d.Generation &&
		d.Spec.Replicas != nil && *d.Spec.Replicas == want &&
		d.Status.Replicas == want && d.Status.UpdatedReplicas == want && d.Status.AvailableReplicas == want
}

func (env *Env) waitRolledOut(ctx context.Context, want int32) error {
	return env.waitDeploymentsRolledOut(ctx, env.Params.Deployments, deploymentName, want)
}

// waitDeploymentsRolledOut waits until the n Deployments nameOf(0..n-1) are
// RolledOut with want replicas.
func (env *Env) waitDeploymentsRolledOut(ctx context.Context, n int, nameOf func(int) string, want int32) error {
	what := fmt.Sprintf("%d Deployments with %d available updated replicas", n, want)
	return env.waitFor(ctx, what, func() (bool, string) {
		done := 0
		for i := range n {
			name := nameOf(i)
			d, err := env.Deployments.Deployments(env.Namespace).Get(name)
			if err == nil && RolledOut(d, env.generation(name), want) {
				done++
			}
		}
		pods, _ := env.Pods.Pods(env.Namespace).List(labels.Everything())
		return done == n, fmt.Sprintf("%d/%d done, %d pods", done, n, len(pods))
	})
}

func deleteDeployments(ctx context.Context, env *Env) error {
	err := env.forEach(ctx, env.Params.Deployments, func(ctx context.Context, i int) error {
		name := deploymentName(i)
		err := env.Client.AppsV1().Deployments(env.Namespace).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete deployment %s: %w", name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return env.waitFor(ctx, "no pod left in namespace "+env.Namespace, func() (bool, string) {
		pods, _ := env.Pods.Pods(env.Namespace).List(labels.Everything())
		ds, _ := env.Deployments.Deployments(env.Namespace).List(labels.Everything())
		return len(pods) == 0 && len(ds) == 0, fmt.Sprintf("%d pods, %d deployments left", len(pods), len(ds))
	})
}

func idle(ctx context.Context, env *Env) error {
	t := time.NewTimer(env.Params.Idle)
	defer t.Stop()
	select {
	case <-t.C:
		if !env.Cluster.ControllerManagerRunning() {
			return fmt.Errorf("kube-controller-manager exited during the idle phase; see %s", env.Cluster.LogPath(cluster.ControllerManager))
		}
		return nil
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return &TimeoutError{What: "the end of the idle period", After: env.Params.PhaseTimeout}
		}
		return ctx.Err()
	}
}

// NodeInitialized reports whether a new Node has lost the not-ready taint
// and, if cidrs, has a podCIDR; if not, why.
func NodeInitialized(n *corev1.Node, cidrs bool) (bool, string) {
	for _, t := range n.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady {
			return false, "tainted " + t.Key + ":" + string(t.Effect)
		}
	}
	if cidrs && n.Spec.PodCIDR == "" {
		return false, "no podCIDR"
	}
	return true, ""
}

func createNodes(ctx context.Context, env *Env) error {
	n := env.Params.NewNodes
	nodeNames := make([]string, n)
	for i := range n {
		nodeNames[i] = fmt.Sprintf("%s-%d", newNodePrefix, i)
	}
	err := env.forEach(ctx, n, func(ctx context.Context, i int) error {
		return createNode(ctx, env.Client, nodeNames[i])
	})
	if err != nil {
		return err
	}
	cidrs := AllocateNodeCIDRs(env.KCMArgs)
	what := fmt.Sprintf("%d new nodes untainted", n)
	if cidrs {
		what += " with a podCIDR"
	}
	return env.waitFor(ctx, what, func() (bool, string) {
		done, tainted, noCIDR := 0, 0, 0
		for _, name := range nodeNames {
			node, err := env.Nodes.Get(name)
			if err != nil {
				tainted++
				continue
			}
			ok, why := NodeInitialized(node, cidrs)
			switch {
			case ok:
				done++
			case why == "no podCIDR":
				noCIDR++
			default:
				tainted++
			}
		}
		return done == n, fmt.Sprintf("%d/%d done, %d still tainted, %d without podCIDR", done, n, tainted, noCIDR)
	})
}

// orDefault returns v, or d when v is not positive (a Params field left
// unset).
func orDefault(v, d int) int {
	if v <= 0 {
		return d
	}
	return v
}
