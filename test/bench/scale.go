package bench

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/cluster"
)

// ScenarioScale is the scale phase set: sig-scalability's envelope in
// miniature or in full (--scale-nodes; 5,000 nodes and 150,000 pods at the
// top): nodes join under two DaemonSets, Deployments fill them to 30 pods a
// node, a tenth of them roll, Services get endpoints, a tenth of the nodes
// stop heartbeating and come back, half the pods go with their namespaces,
// then nothing happens.
const ScenarioScale = "scale"

const (
	defaultScaleNodes    = 500
	defaultScaleServices = 1000
	// kwok's node lease duration (kwokctl's) and parallelism (its own
	// default) when Params leave them zero.
	defaultNodeLeaseSeconds = 40
	defaultKwokParallelism  = 4
	// scalePodsPerNode is the envelope's density: two daemon pods and 28
	// Deployment pods on every node.
	scalePodsPerNode  = 30
	scaleDaemonSets   = 2
	scaleReplicas     = 100 // per Deployment
	scaleNamespaces   = 10  // the Deployments are spread over them
	scaleZones        = 10  // nodes are spread over them (eviction limits are per zone)
	scaleRollPercent  = 10
	scaleOutageStride = 10 // every tenth node of each zone stops heartbeating
	// scaleNodesPerKwok is how many nodes one kwok instance manages (its
	// README puts one at about 1,000 nodes and 100,000 pods).
	scaleNodesPerKwok = 1000
	// scaleOutageKwok manages the nodes the outage phase silences, so
	// pausing it silences exactly them.
	scaleOutageKwok = "outage"

	scaleNodePrefix        = "scale-node"
	scaleNamespaceFormat   = "scale-%02d"
	scaleDeploymentFormat  = "scale-%04d"
	scaleServiceFormat     = "scale-svc-%04d"
	scaleDaemonSetFormat   = "scale-ds-%d"
	zoneLabel              = "topology.kubernetes.io/zone"
	serviceNameLabel       = "kubernetes.io/service-name"
	scaleTolerationSeconds = 10
)

func scaleScenario() Scenario {
	static := func(n ...string) func([]string) []string { return func([]string) []string { return n } }
	return Scenario{
		Name:          ScenarioScale,
		SetupRequires: []string{names.ServiceAccount, names.NodeLifecycle},
		Setup:         setupScale,
		// 5,000 nodes need more /24 blocks than the default cluster CIDR's
		// 256: a /10 holds 16,384.
		ControllerManagerArgs: []string{"--cluster-cidr=10.64.0.0/10", "--node-cidr-mask-size=24"},
		Phases: []Phase{
			{Name: "join", Description: fmt.Sprintf("create the nodes (%d by default, over %d zones); wait until each runs an available pod of both DaemonSets; figures: node-to-pods latency", defaultScaleNodes, scaleZones),
				Requires: nodesThen(names.DaemonSet), Run: joinScaleNodes},
			{Name: "fill", Description: fmt.Sprintf("create Deployments of %d replicas over %d namespaces until the nodes hold %d pods each; wait until all are available", scaleReplicas, scaleNamespaces, scalePodsPerNode),
				Requires: static(names.Deployment, names.ReplicaSet), Run: fillScaleNodes},
			{Name: "roll", Description: fmt.Sprintf("new image in %d%% of the Deployments; wait until those rollouts are complete", scaleRollPercent),
				Requires: static(names.Deployment, names.ReplicaSet), Run: rollScaleDeployments},
			{Name: "services", Description: fmt.Sprintf("create Services (%d by default), each over a Deployment; wait until every one's EndpointSlices list its ready pods", defaultScaleServices),
				Requires: static(names.EndpointSlice), Run: createScaleServices},
			{Name: "outage", Description: fmt.Sprintf("every %dth node of each zone stops heartbeating; wait until each is tainted unreachable, its Deployment pods evicted (they tolerate %ds) and replaced; then the nodes heartbeat again, until Ready and untainted with no pod left terminating", scaleOutageStride, scaleTolerationSeconds),
				Requires: static(names.TaintEviction), Run: scaleOutage},
			{Name: "delete-namespaces", Description: fmt.Sprintf("delete %d of the %d namespaces (half the Deployment pods); wait until they are gone", scaleNamespaces/2, scaleNamespaces),
				Requires: static(names.Namespace, names.GarbageCollector), Run: deleteScaleNamespaces},
			{Name: "idle", Description: "nothing happens", Run: idle},
			{Name: "failover-term", Description: "a standby controller manager (the same binary and command line) syncs, the leader gets SIGTERM, a Deployment is created; wait until its pod is available; figures: Lease taken, first write, controllers synced, new pod available",
				Requires: static(names.Deployment, names.ReplicaSet), Run: failoverPhase(false)},
			{Name: "failover-kill", Description: "the same with SIGKILL",
				Requires: static(names.Deployment, names.ReplicaSet), Run: failoverPhase(true)},
		},
	}
}

// nodesThen is what node creation needs, plus more.
func nodesThen(more ...string) func([]string) []string {
	return func(args []string) []string { return append(nodesRequire(args), more...) }
}

// scaleSizes returns the scale scenario's node, Deployment and Service
// counts, defaults for zero fields.
func (p Params) scaleSizes() (nodes, deployments, services int) {
	nodes = orDefault(p.ScaleNodes, defaultScaleNodes)
	deployments = max(1, nodes*(scalePodsPerNode-scaleDaemonSets)/scaleReplicas)
	return nodes, deployments, orDefault(p.ScaleServices, defaultScaleServices)
}

func scaleNodeName(i int) string   { return fmt.Sprintf("%s-%d", scaleNodePrefix, i) }
func scaleNamespace(i int) string  { return fmt.Sprintf(scaleNamespaceFormat, i%scaleNamespaces) }
func scaleDeployment(i int) string { return fmt.Sprintf(scaleDeploymentFormat, i) }

// scaleZone is node i's zone: runs of ten nodes take turns.
func scaleZone(i int) int { return (i / scaleOutageStride) % scaleZones }

// scaleOutageNode reports whether node i is one the outage phase stops:
// the first of each run of ten, so a tenth of every zone, and no zone is
// disrupted beyond the normal eviction rate's threshold.
func scaleOutageNode(i int) bool { return i%scaleOutageStride == 0 }

// scaleKwokPartitions is how many kwok instances manage the nodes that stay
// up: the main one and enough others for scaleNodesPerKwok each.
func scaleKwokPartitions(nodes int) int {
	return max(1, (nodes+scaleNodesPerKwok-1)/scaleNodesPerKwok)
}

// scalePartition is partition k's annotation value; partition 0 is the
// main kwok's.
func scalePartition(k int) string {
	if k == 0 {
		return cluster.KwokNodeAnnotationValue
	}
	return fmt.Sprintf("scale-%d", k)
}

// scaleKwokFor is the kwok annotation value of node i of nodes.
func scaleKwokFor(i, nodes int) string {
	if scaleOutageNode(i) {
		return scaleOutageKwok
	}
	return scalePartition(i % scaleKwokPartitions(nodes))
}

// scaleState is the scale scenario's own view of the cluster: informers over
// every namespace (the load generator's others see only the bench one).
type scaleState struct {
	deployments appslisters.DeploymentLister
	pods        corelisters.PodLister
	slices      discoverylisters.EndpointSliceLister
}

func setupScale(ctx context.Context, env *Env) error {
	if err := setupNamespaceAndNodes(ctx, env, 0); err != nil {
		return err
	}
	for i := range scaleNamespaces {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: scaleNamespace(i)}}
		if _, err := env.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create namespace %s: %w", ns.Name, err)
		}
	}
	err := env.waitFor(ctx, "the scale namespaces' default ServiceAccounts", func() (bool, string) {
		for i := range scaleNamespaces {
			if _, err := env.Client.CoreV1().ServiceAccounts(scaleNamespace(i)).Get(ctx, "default", metav1.GetOptions{}); err != nil {
				return false, err.Error()
			}
		}
		return true, ""
	})
	if err != nil {
		return err
	}
	nodes, _, _ := env.Params.scaleSizes()
	for k := 1; k < scaleKwokPartitions(nodes); k++ {
		if err := env.Cluster.StartKwokPartition(ctx, scalePartition(k)); err != nil {
			return err
		}
	}
	if err := env.Cluster.StartKwokPartition(ctx, scaleOutageKwok); err != nil {
		return err
	}
	for i := range scaleDaemonSets {
		ds := newDaemonSet(fmt.Sprintf(scaleDaemonSetFormat, i), env.Namespace)
		if _, err := env.Client.AppsV1().DaemonSets(env.Namespace).Create(ctx, ds, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create daemonset %s: %w", ds.Name, err)
		}
	}
	factory := informers.NewSharedInformerFactoryWithOptions(env.Client, 0, informers.WithTransform(trimManagedFields))
	env.scale = &scaleState{
		deployments: factory.Apps().V1().Deployments().Lister(),
		pods:        factory.Core().V1().Pods().Lister(),
		slices:      factory.Discovery().V1().EndpointSlices().Lister(),
	}
	factory.Start(env.stopCh)
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("bench: informer for %v did not sync", typ)
		}
	}
	return nil
}

func joinScaleNodes(ctx context.Context, env *Env) error {
	nodes, _, _ := env.Params.scaleSizes()
	lat := newPodLatency(scaleDaemonSets)
	stop, err := lat.watch(ctx, env)
	if err != nil {
		return err
	}
	defer stop()
	err = env.forEach(ctx, nodes, func(ctx context.Context, i int) error {
		n := cluster.NewKwokNode(scaleNodeName(i))
		n.Labels[zoneLabel] = fmt.Sprintf("zone-%d", scaleZone(i))
		n.Annotations[cluster.KwokNodeAnnotation] = scaleKwokFor(i, nodes)
		lat.nodeCreating(n.Name)
		if _, err := env.Client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create node %s: %w", n.Name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := env.waitDaemonSetsOn(ctx, scaleDaemonSets, int32(nodes)); err != nil {
		return err
	}
	lat.record(env, nodes)
	return nil
}

// newScaleDeployment is a Deployment whose pods leave an unreachable or
// not-ready node after scaleTolerationSeconds instead of the admission
// default's 300 s, so the outage phase is about the controllers.
func newScaleDeployment(name, namespace string) *appsv1.Deployment {
	d := newDeployment(name, namespace, scaleReplicas)
	for _, key := range []string{corev1.TaintNodeUnreachable, corev1.TaintNodeNotReady} {
		d.Spec.Template.Spec.Tolerations = append(d.Spec.Template.Spec.Tolerations, corev1.Toleration{
			Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute,
			TolerationSeconds: ptr.To[int64](scaleTolerationSeconds),
		})
	}
	// A tenth of a big Deployment at a time, as the daemonsets phases.
	d.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{
		MaxUnavailable: ptr.To(intstr.FromString("10%")), MaxSurge: ptr.To(intstr.FromString("10%")),
	}
	return d
}

func fillScaleNodes(ctx context.Context, env *Env) error {
	_, deployments, _ := env.Params.scaleSizes()
	err := env.forEach(ctx, deployments, func(ctx context.Context, i int) error {
		name, ns := scaleDeployment(i), scaleNamespace(i)
		d, err := env.Client.AppsV1().Deployments(ns).Create(ctx, newScaleDeployment(name, ns), metav1.CreateOptions{})
		switch {
		case apierrors.IsAlreadyExists(err):
			env.setGeneration(ns+"/"+name, 1)
		case err != nil:
			return fmt.Errorf("create deployment %s/%s: %w", ns, name, err)
		default:
			env.setGeneration(ns+"/"+name, d.Generation)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return env.waitScaleRolledOut(ctx, deployments, nil)
}

func rollScaleDeployments(ctx context.Context, env *Env) error {
	_, deployments, _ := env.Params.scaleSizes()
	rolled := max(1, deployments*scaleRollPercent/100)
	patch := fmt.Appendf(nil, `{"spec":{"template":{"spec":{"containers":[{"name":%q,"image":%q}]}}}}`, containerName, imageAfter)
	err := env.forEach(ctx, rolled, func(ctx context.Context, i int) error {
		name, ns := scaleDeployment(i), scaleNamespace(i)
		d, err := env.Client.AppsV1().Deployments(ns).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
		if err != nil {
			return fmt.Errorf("patch deployment %s/%s: %w", ns, name, err)
		}
		env.setGeneration(ns+"/"+name, d.Generation)
		return nil
	})
	if err != nil {
		return err
	}
	return env.waitScaleRolledOut(ctx, deployments, nil)
}

// waitScaleRolledOut waits until the first n scale Deployments, except in
// namespaces skip holds, are RolledOut with all their replicas.
func (env *Env) waitScaleRolledOut(ctx context.Context, n int, skip map[string]bool) error {
	what := fmt.Sprintf("%d Deployments with %d available updated replicas", n, scaleReplicas)
	return env.waitFor(ctx, what, func() (bool, string) {
		done, want := 0, 0
		for i := range n {
			name, ns := scaleDeployment(i), scaleNamespace(i)
			if skip[ns] {
				continue
			}
			want++
			d, err := env.scale.deployments.Deployments(ns).Get(name)
			if err == nil && RolledOut(d, env.generation(ns+"/"+name), scaleReplicas) {
				done++
			}
		}
		return done == want, fmt.Sprintf("%d/%d done", done, want)
	})
}

func createScaleServices(ctx context.Context, env *Env) error {
	_, deployments, services := env.Params.scaleSizes()
	err := env.forEach(ctx, services, func(ctx context.Context, i int) error {
		target := i % deployments
		svc := newService(fmt.Sprintf(scaleServiceFormat, i), scaleNamespace(target))
		svc.Spec.Selector = map[string]string{"app": scaleDeployment(target)}
		if _, err := env.Client.CoreV1().Services(svc.Namespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create service %s/%s: %w", svc.Namespace, svc.Name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	what := fmt.Sprintf("%d Services with %d ready endpoints each", services, scaleReplicas)
	return env.waitFor(ctx, what, func() (bool, string) {
		ready := map[string]int{} // namespace/service → ready endpoints
		slices, _ := env.scale.slices.List(labels.Everything())
		for _, s := range slices {
			svc := s.Labels[serviceNameLabel]
			for _, e := range s.Endpoints {
				if e.Conditions.Ready == nil || *e.Conditions.Ready {
					ready[s.Namespace+"/"+svc]++
				}
			}
		}
		done := 0
		for i := range services {
			if ready[scaleNamespace(i%deployments)+"/"+fmt.Sprintf(scaleServiceFormat, i)] == scaleReplicas {
				done++
			}
		}
		return done == services, fmt.Sprintf("%d/%d done", done, services)
	})
}

// scaleOutage pauses the kwok that manages a tenth of the nodes (SIGSTOP:
// a rack without power; their heartbeats stop), waits for the
// controllers' whole answer, then resumes it and waits until the nodes are
// healthy again and kwok has finished the pods evicted from them.
func scaleOutage(ctx context.Context, env *Env) error {
	nodes, deployments, _ := env.Params.scaleSizes()
	var down []string
	for i := range nodes {
		if scaleOutageNode(i) {
			down = append(down, scaleNodeName(i))
		}
	}
	isDown := map[string]bool{}
	for _, n := range down {
		isDown[n] = true
	}
	outage := cluster.KwokPartition(scaleOutageKwok)
	if err := env.Cluster.PauseComponent(outage); err != nil {
		return err
	}
	start := time.Now()
	err := env.waitFor(ctx, fmt.Sprintf("%d silent nodes tainted unreachable and emptied of Deployment pods", len(down)), func() (bool, string) {
		tainted := 0
		for _, n := range down {
			node, err := env.Nodes.Get(n)
			if err == nil && hasTaint(node, corev1.TaintNodeUnreachable, corev1.TaintEffectNoExecute) {
				tainted++
			}
		}
		left := 0
		pods, _ := env.scale.pods.List(labels.Everything())
		for _, p := range pods {
			if isDown[p.Spec.NodeName] && p.DeletionTimestamp == nil && p.Namespace != env.Namespace {
				left++
			}
		}
		return tainted == len(down) && left == 0, fmt.Sprintf("%d/%d tainted, %d pods left on them", tainted, len(down), left)
	})
	if err != nil {
		return err
	}
	env.Figure("outage: nodes tainted and emptied s", time.Since(start).Seconds())
	if err := env.waitScaleRolledOut(ctx, deployments, nil); err != nil {
		return err
	}
	env.Figure("outage: pods replaced s", time.Since(start).Seconds())
	if err := env.Cluster.ResumeComponent(outage); err != nil {
		return err
	}
	return env.waitFor(ctx, fmt.Sprintf("%d nodes back: Ready, untainted, no pod terminating", len(down)), func() (bool, string) {
		back := 0
		for _, n := range down {
			node, err := env.Nodes.Get(n)
			if err == nil {
				if ok, _ := cluster.NodeSchedulable(node); ok {
					back++
				}
			}
		}
		terminating := 0
		pods, _ := env.scale.pods.List(labels.Everything())
		for _, p := range pods {
			if p.DeletionTimestamp != nil {
				terminating++
			}
		}
		return back == len(down) && terminating == 0, fmt.Sprintf("%d/%d back, %d pods terminating", back, len(down), terminating)
	})
}

func hasTaint(node *corev1.Node, key string, effect corev1.TaintEffect) bool {
	for _, t := range node.Spec.Taints {
		if t.Key == key && t.Effect == effect {
			return true
		}
	}
	return false
}

func deleteScaleNamespaces(ctx context.Context, env *Env) error {
	_, deployments, _ := env.Params.scaleSizes()
	gone := map[string]bool{}
	var doomed []string
	for i := range scaleNamespaces / 2 {
		gone[scaleNamespace(i)] = true
		doomed = append(doomed, scaleNamespace(i))
	}
	err := env.forEach(ctx, len(doomed), func(ctx context.Context, i int) error {
		err := env.Client.CoreV1().Namespaces().Delete(ctx, doomed[i], metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete namespace %s: %w", doomed[i], err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = env.waitFor(ctx, fmt.Sprintf("%d namespaces gone", len(doomed)), func() (bool, string) {
		left := 0
		for _, ns := range doomed {
			if _, err := env.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				left++
			}
		}
		pods, _ := env.scale.pods.List(labels.Everything())
		return left == 0, fmt.Sprintf("%d namespaces left, %d pods in the cluster", left, len(pods))
	})
	if err != nil {
		return err
	}
	// The rest are untouched.
	return env.waitScaleRolledOut(ctx, deployments, gone)
}
