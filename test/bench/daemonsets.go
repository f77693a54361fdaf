package bench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
)

// ScenarioDaemonSets is the daemonsets phase set: DaemonSets created on
// every node, nodes added, a rolling update, deletion.
const ScenarioDaemonSets = "daemonsets"

const (
	daemonSetNameFormat = "ds-%02d"
	// daemonSetNewNodePrefix names the nodes the add-nodes phase creates.
	daemonSetNewNodePrefix = "bench-ds-node"
	// daemonSetMaxUnavailable is the DaemonSets' rolling update budget: with
	// upstream's default of 1 a roll over 600 nodes takes 600 steps.
	daemonSetMaxUnavailable = "10%"
)

// Default sizes of the daemonsets phases (Params fields left zero).
const (
	defaultDaemonSets        = 20
	defaultDaemonSetNodes    = 500
	defaultDaemonSetNewNodes = 100
)

func daemonSetsScenario() Scenario {
	static := func(n ...string) func([]string) []string { return func([]string) []string { return n } }
	return Scenario{
		Name:          ScenarioDaemonSets,
		SetupRequires: []string{names.ServiceAccount, names.NodeLifecycle},
		Setup:         setupDaemonSets,
		// 600 nodes need more than the 256 /24 pod CIDRs of the cluster
		// CIDR (a /16): node-ipam-controller would fail for the rest.
		ControllerManagerArgs: []string{"--node-cidr-mask-size=26"},
		Phases: []Phase{
			{Name: "create", Description: "create DaemonSets, wait until every node runs an available pod of each",
				Requires: static(names.DaemonSet), Run: createDaemonSets},
			{Name: "add-nodes", Description: "create nodes, wait until each runs an available pod of every DaemonSet; figures: from a node's creation to all its daemon pods existing",
				Requires: static(names.DaemonSet), Run: addDaemonSetNodes},
			{Name: "roll", Description: "new image in every DaemonSet (maxUnavailable " + daemonSetMaxUnavailable + "), wait until every rollout is complete",
				Requires: static(names.DaemonSet), Run: rollDaemonSets},
			{Name: "delete", Description: "delete every DaemonSet (background propagation), wait until no pod remains",
				Requires: static(names.GarbageCollector), Run: deleteDaemonSets},
		},
	}
}

// daemonSetSizes returns the number of DaemonSets, of nodes at the start
// and of nodes the add-nodes phase creates.
func (p Params) daemonSetSizes() (sets, nodes, newNodes int) {
	return orDefault(p.DaemonSets, defaultDaemonSets), orDefault(p.DaemonSetNodes, defaultDaemonSetNodes),
		orDefault(p.DaemonSetNewNodes, defaultDaemonSetNewNodes)
}

func daemonSetName(i int) string { return fmt.Sprintf(daemonSetNameFormat, i) }

// setupDaemonSets is setupDeployments with the daemonsets' node count.
func setupDaemonSets(ctx context.Context, env *Env) error {
	_, nodes, _ := env.Params.daemonSetSizes()
	return setupNamespaceAndNodes(ctx, env, nodes)
}

func newDaemonSet(name, namespace string) *appsv1.DaemonSet {
	lbls := map[string]string{"app": name}
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: lbls},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: lbls},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: lbls},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: containerName, Image: imageBefore}}},
			},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{
				Type:          appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: ptr.To(intstr.FromString(daemonSetMaxUnavailable))},
			},
		},
	}
}

func createDaemonSets(ctx context.Context, env *Env) error {
	sets, nodes, _ := env.Params.daemonSetSizes()
	err := env.forEach(ctx, sets, func(ctx context.Context, i int) error {
		name := daemonSetName(i)
		ds, err := env.Client.AppsV1().DaemonSets(env.Namespace).Create(ctx, newDaemonSet(name, env.Namespace), metav1.CreateOptions{})
		switch {
		case apierrors.IsAlreadyExists(err): // a retried create that had gone through
			env.setGeneration(name, 1)
		case err != nil:
			return fmt.Errorf("create daemonset %s: %w", name, err)
		default:
			env.setGeneration(name, ds.Generation)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return env.waitDaemonSetsDone(ctx, int32(nodes))
}

// addDaemonSetNodes creates the new nodes and waits until every
// DaemonSet runs an available pod on each. It records, from the load
// generator's watch of pods, the time from each node's creation (its
// Create returning) to the last of its daemon pods being seen.
func addDaemonSetNodes(ctx context.Context, env *Env) error {
	sets, nodes, newNodes := env.Params.daemonSetSizes()
	lat := newPodLatency(sets)
	stop, err := lat.watch(ctx, env)
	if err != nil {
		return err
	}
	defer stop()
	err = env.forEach(ctx, newNodes, func(ctx context.Context, i int) error {
		name := fmt.Sprintf("%s-%d", daemonSetNewNodePrefix, i)
		lat.nodeCreating(name)
		return createNode(ctx, env.Client, name)
	})
	if err != nil {
		return err
	}
	if err := env.waitDaemonSetsDone(ctx, int32(nodes+newNodes)); err != nil {
		return err
	}
	lat.record(env, newNodes)
	return nil
}

func rollDaemonSets(ctx context.Context, env *Env) error {
	sets, nodes, newNodes := env.Params.daemonSetSizes()
	patch := fmt.Appendf(nil, `{"spec":{"template":{"spec":{"containers":[{"name":%q,"image":%q}]}}}}`, containerName, imageAfter)
	err := env.forEach(ctx, sets, func(ctx context.Context, i int) error {
		name := daemonSetName(i)
		ds, err := env.Client.AppsV1().DaemonSets(env.Namespace).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
		if err != nil {
			return fmt.Errorf("patch daemonset %s: %w", name, err)
		}
		env.setGeneration(name, ds.Generation)
		return nil
	})
	if err != nil {
		return err
	}
	return env.waitDaemonSetsDone(ctx, int32(nodes+newNodes))
}

// DaemonSetDone reports whether a DaemonSet has observed at least
// generation gen and runs an updated, available pod on each of want
// nodes and on no other: what `kubectl rollout status` waits for.
func DaemonSetDone(ds *appsv1.DaemonSet, gen int64, want int32) bool {
	st := ds.Status
	return ds.Generation >= gen && st.ObservedGeneration >= ds.Generation &&
		st.DesiredNumberScheduled == want && st.CurrentNumberScheduled == want && st.UpdatedNumberScheduled == want &&
		st.NumberAvailable == want && st.NumberMisscheduled == 0
}

func (env *Env) waitDaemonSetsDone(ctx context.Context, want int32) error {
	sets, _, _ := env.Params.daemonSetSizes()
	return env.waitDaemonSetsOn(ctx, sets, want)
}

// waitDaemonSetsOn waits until the bench namespace's sets DaemonSets each
// run an available updated pod on want nodes.
func (env *Env) waitDaemonSetsOn(ctx context.Context, sets int, want int32) error {
	what := fmt.Sprintf("%d DaemonSets with an available updated pod on each of %d nodes", sets, want)
	return env.waitFor(ctx, what, func() (bool, string) {
		// 20 objects a tick; the load generator's requests are not counted.
		list, err := env.Client.AppsV1().DaemonSets(env.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		done := 0
		for i := range list.Items {
			ds := &list.Items[i]
			if DaemonSetDone(ds, env.generation(ds.Name), want) {
				done++
			}
		}
		pods, _ := env.Pods.Pods(env.Namespace).List(labels.Everything())
		return done == sets, fmt.Sprintf("%d/%d done, %d pods", done, sets, len(pods))
	})
}

func deleteDaemonSets(ctx context.Context, env *Env) error {
	sets, _, _ := env.Params.daemonSetSizes()
	err := env.forEach(ctx, sets, func(ctx context.Context, i int) error {
		name := daemonSetName(i)
		err := env.Client.AppsV1().DaemonSets(env.Namespace).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete daemonset %s: %w", name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return env.waitFor(ctx, "no pod left in namespace "+env.Namespace, func() (bool, string) {
		pods, _ := env.Pods.Pods(env.Namespace).List(labels.Everything())
		list, err := env.Client.AppsV1().DaemonSets(env.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(pods) == 0 && len(list.Items) == 0, fmt.Sprintf("%d pods, %d daemonsets left", len(pods), len(list.Items))
	})
}

// podLatency measures, per new node, the time from its creation to the
// last of its daemon pods (one per DaemonSet) appearing in a watch.
type podLatency struct {
	sets int

	mu      sync.Mutex
	created map[string]time.Time
	seen    map[string]map[types.UID]bool // node → pods for it
	done    map[string]time.Duration
}

func newPodLatency(sets int) *podLatency {
	return &podLatency{sets: sets, created: map[string]time.Time{}, seen: map[string]map[types.UID]bool{}, done: map[string]time.Duration{}}
}

// nodeCreating marks the moment just before a node's Create request.
func (l *podLatency) nodeCreating(node string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.created[node] = time.Now()
}

// podSeen counts a daemon pod for the node it is pinned to.
func (l *podLatency) podSeen(pod *corev1.Pod) {
	node := pinnedNodeName(pod)
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	start, ok := l.created[node]
	if !ok {
		return
	}
	if l.seen[node] == nil {
		l.seen[node] = map[types.UID]bool{}
	}
	l.seen[node][pod.UID] = true
	if _, finished := l.done[node]; !finished && len(l.seen[node]) >= l.sets {
		l.done[node] = now.Sub(start)
	}
}

// watch registers podSeen on the load generator's pod informer (so that
// the time a pod was first seen is known) and waits until the pods
// already cached were replayed to it; stop removes it. The informer is
// already synced: an informer of its own, as before, had its LIST of
// every pod (12,000 here) inside the phase's clock, 0.7 to 1.5 s
// depending on the API server's load, delaying the node creations by
// as much.
func (l *podLatency) watch(ctx context.Context, env *Env) (stop func(), err error) {
	reg, err := env.PodInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		if pod, ok := obj.(*corev1.Pod); ok {
			l.podSeen(pod)
		}
	}})
	if err != nil {
		return nil, err
	}
	stop = func() {
		if err := env.PodInformer.RemoveEventHandler(reg); err != nil {
			env.Logf("bench: removing the node-to-pods handler: %v", err)
		}
	}
	// The replayed pods are for no node created yet and count for
	// nothing; waiting for them keeps the replay out of the phase.
	if !cache.WaitForCacheSync(ctx.Done(), reg.HasSynced) {
		stop()
		return nil, fmt.Errorf("bench: pod handler did not sync")
	}
	return stop, nil
}

// record adds the latency figures to the phase: percentiles over the
// nodes, in seconds.
func (l *podLatency) record(env *Env, nodes int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ds := make([]float64, 0, len(l.done))
	for _, d := range l.done {
		ds = append(ds, d.Seconds())
	}
	slices.Sort(ds)
	env.Figure("nodes measured", float64(len(ds)))
	if len(ds) < nodes {
		env.Logf("bench: node-to-pods latency known for %d of %d nodes", len(ds), nodes)
	}
	if len(ds) == 0 {
		return
	}
	var sum float64
	for _, d := range ds {
		sum += d
	}
	pct := func(p float64) float64 { return ds[min(len(ds)-1, int(p*float64(len(ds))))] }
	env.Figure("node-to-pods mean s", sum/float64(len(ds)))
	env.Figure("node-to-pods p50 s", pct(0.5))
	env.Figure("node-to-pods p90 s", pct(0.9))
	env.Figure("node-to-pods max s", ds[len(ds)-1])
}

// pinnedNodeName is the node a daemon pod is bound or pinned to.
func pinnedNodeName(pod *corev1.Pod) string {
	if pod.Spec.NodeName != "" {
		return pod.Spec.NodeName
	}
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range t.MatchFields {
			if f.Key == "metadata.name" && len(f.Values) == 1 {
				return f.Values[0]
			}
		}
	}
	return ""
}
