package daemonset

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller/podcontrol"
	"github.com/kcm-dev/kcm/internal/controller/podranking"
)

// newNodeBatch is the least number of nodes needing a pod one sync of a
// settled DaemonSet covers while other DaemonSets wait (newNodesFirst);
// turnSize raises it with the client's QPS.
const newNodeBatch = 20

// turnSize is how many new nodes a turn covers for a client allowed qps
// requests a second: newNodeBatch, or a tenth of a second of the rate
// limit when that is more. A turn costs a round trip and a wait for the
// informer whatever its size; at the default QPS (20) a turn of 20 is a
// second of the limiter, but at a high QPS turns that small leave the API
// server idle between them and the last new node gets its pods later
// than under upstream's burst (500 QPS: 50). A turn is at most the
// creates one sync may send (burst). With noTurns it is 0: no turns.
func turnSize(qps float32, burst int, noTurns bool) int {
	if noTurns {
		return 0
	}
	return min(burst, max(newNodeBatch, int(qps/10)))
}

// Event reasons of the daemonset-controller besides pod control's.
const (
	SelectingAllReason       = "SelectingAll"
	FailedDaemonPodReason    = "FailedDaemonPod"
	SucceededDaemonPodReason = "SucceededDaemonPod"
)

// manage creates a daemon pod on every node that should run one and has
// none, and deletes the pods that must go: on nodes that no longer fit,
// failed (after the node's backoff) or succeeded ones, surplus ones, and
// unscheduled ones pinned to nodes that no longer exist. It reports
// whether it created or deleted anything.
func (c *Controller) manage(ctx context.Context, s *syncState) (acted bool, err error) {
	logger := klog.FromContext(ctx)
	var needing []*v1.Node
	var del []string
	for i, node := range s.nodes {
		needs, gone := c.nodeActions(logger, s, node, s.fits[i])
		if needs {
			needing = append(needing, node)
		}
		del = append(del, gone...)
	}
	del = append(del, unscheduledWithoutNode(s.nodes, s.byNode)...)
	needing = c.newNodesFirst(s, needing)
	create := make([]string, len(needing))
	for i, node := range needing {
		create[i] = node.Name
	}
	return len(del)+len(create) > 0, c.syncNodes(ctx, s, del, create)
}

// newNodesFirst orders the nodes needing a daemon pod oldest first and,
// when they joined after the DaemonSet's pods were placed, its pods are
// all of its current template, and other DaemonSets wait in the queue,
// keeps only the first c.turn: the sync yields (s.yielded), and its
// pod events queue it again behind the others. A yielding sync creates
// its turn in one round, not in slow-start batches: the API server has
// accepted the current template for every pod the DaemonSet has, and a
// turn of several sequential rounds would keep the other DaemonSets
// waiting for nothing. It writes no status either (sync).
//
// When many nodes join at once, every DaemonSet needs a pod on each. A
// DaemonSet covering all of them in one sync, as upstream's do, leaves
// each node waiting for the last DaemonSet to be synced: a node gets its
// networking (kube-proxy, the CNI plugin) only when every new node is
// nearly done. Taking the nodes a few at a time, oldest first, and taking
// turns, every DaemonSet covers the first nodes before any covers the
// last, and nodes become complete one batch after another. A new
// DaemonSet, one rolling out, one alone in the queue and nodes that are
// not new keep upstream's burst.
func (c *Controller) newNodesFirst(s *syncState, nodes []*v1.Node) []*v1.Node {
	slices.SortFunc(nodes, func(a, b *v1.Node) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	if c.turn == 0 || len(nodes) <= c.turn || len(s.pods) == 0 || c.queue.Len() == 0 {
		return nodes
	}
	placed := s.pods[0].CreationTimestamp
	for _, p := range s.pods {
		if !s.rev.updated(p) {
			return nodes
		}
		if p.CreationTimestamp.Before(&placed) {
			placed = p.CreationTimestamp
		}
	}
	// Nodes older than the DaemonSet's oldest pod are not new to it (the
	// rest of a first placement, nodes relabelled to fit).
	if !placed.Before(&nodes[c.turn-1].CreationTimestamp) {
		return nodes
	}
	s.yielded = true
	return nodes[:c.turn]
}

// nodeActions decides, as upstream's podsShouldBeOnNode, whether node
// needs a daemon pod created and which of its daemon pods to delete.
func (c *Controller) nodeActions(logger klog.Logger, s *syncState, node *v1.Node, f fit) (needsPod bool, del []string) {
	pods, exists := s.byNode[node.Name]
	switch {
	case f.shouldRun && !exists:
		return true, nil
	case f.shouldContinueRunning:
		running, del := c.sortOutTerminated(logger, s, node, pods)
		if !allowsSurge(s.ds) {
			// One pod per node: keep the oldest.
			if len(running) > 1 {
				slices.SortStableFunc(running, byAge)
				for _, p := range running[1:] {
					del = append(del, p.Name)
				}
			}
			return false, del
		}
		if len(running) == 0 {
			// Surging needs at least one pod on the node that is not
			// being deleted.
			return f.shouldRun, del
		}
		if len(running) > 1 {
			del = append(del, surplusWhileSurging(logger, s, running)...)
		}
		return false, del
	case exists:
		// The node should not run the pod: delete all it has.
		for _, p := range pods {
			if p.DeletionTimestamp == nil {
				del = append(del, p.Name)
			}
		}
	}
	return false, del
}

// sortOutTerminated returns node's daemon pods that are neither terminated
// nor being deleted, and the terminated ones to delete: succeeded ones at
// once, failed ones unless the node's backoff holds them back (the
// DaemonSet is then synced again when it ends). Each deletion gets an
// Event.
func (c *Controller) sortOutTerminated(logger klog.Logger, s *syncState, node *v1.Node, pods []*v1.Pod) (running []*v1.Pod, del []string) {
	ds := s.ds
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		switch pod.Status.Phase {
		case v1.PodFailed:
			// The kubelet may reject the pod again and again: back off.
			key := failedPodsBackoffKey(ds.UID, ds.Status.ObservedGeneration, node.Name)
			now := c.failedPods.Clock.Now()
			if c.failedPods.IsInBackOffSinceUpdate(key, now) {
				delay := c.failedPods.Get(key)
				logger.V(4).Info("Deleting failed pod on node has been limited by backoff",
					"pod", klog.KObj(pod), "node", klog.KObj(node), "currentDelay", delay)
				c.enqueueAfter(ds, delay)
				continue
			}
			c.failedPods.Next(key, now)
			logger.V(2).Info("Found failed daemon pod on node, will try to kill it", "pod", klog.KObj(pod), "node", klog.KObj(node))
			c.recorder.Eventf(ds, v1.EventTypeWarning, FailedDaemonPodReason,
				"Found failed daemon pod %s/%s on node %s, will try to kill it", pod.Namespace, pod.Name, node.Name)
			del = append(del, pod.Name)
		case v1.PodSucceeded:
			logger.V(2).Info("Found succeeded daemon pod on node, will try to delete it", "pod", klog.KObj(pod), "node", klog.KObj(node))
			c.recorder.Eventf(ds, v1.EventTypeNormal, SucceededDaemonPodReason,
				"Found succeeded daemon pod %s/%s on node %s, will try to delete it", pod.Namespace, pod.Name, node.Name)
			del = append(del, pod.Name)
		default:
			running = append(running, pod)
		}
	}
	return running, del
}

// failedPodsBackoffKey is upstream's key of a node's failed-pod backoff:
// a new generation of the DaemonSet starts afresh.
func failedPodsBackoffKey(uid types.UID, observedGeneration int64, nodeName string) string {
	return fmt.Sprintf("%s/%d/%s", uid, observedGeneration, nodeName)
}

// surplusWhileSurging returns which of a node's several running pods to
// delete while surging: all but the oldest of the current template and
// the oldest other; of those two, the old one too once it is not ready or
// the new one is available.
func surplusWhileSurging(logger klog.Logger, s *syncState, running []*v1.Pod) []string {
	var del []string
	var oldestNew, oldestOld *v1.Pod
	slices.SortStableFunc(running, byAge)
	for _, pod := range running {
		if pod.Labels[hashLabel] == s.rev.hash {
			if oldestNew == nil {
				oldestNew = pod
				continue
			}
		} else if oldestOld == nil {
			oldestOld = pod
			continue
		}
		del = append(del, pod.Name)
	}
	if oldestNew == nil || oldestOld == nil {
		return del
	}
	switch {
	case !podranking.IsReady(oldestOld):
		logger.V(5).Info("Pod from daemonset is no longer ready and will be replaced with newer pod",
			"oldPod", klog.KObj(oldestOld), "daemonset", klog.KObj(s.ds), "newPod", klog.KObj(oldestNew))
		del = append(del, oldestOld.Name)
	case podranking.IsAvailable(oldestNew, s.ds.Spec.MinReadySeconds, s.now):
		logger.V(5).Info("Pod from daemonset is now ready and will replace older pod",
			"newPod", klog.KObj(oldestNew), "daemonset", klog.KObj(s.ds), "oldPod", klog.KObj(oldestOld))
		del = append(del, oldestOld.Name)
	}
	return del
}

// unscheduledWithoutNode returns the pods pinned to nodes that do not
// exist and never bound: nothing else (the pod garbage collector only
// takes bound pods) would ever delete them.
func unscheduledWithoutNode(nodes []*v1.Node, byNode nodePods) []string {
	exists := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		exists[n.Name] = true
	}
	var out []string
	for name, pods := range byNode {
		if exists[name] {
			continue
		}
		for _, p := range pods {
			if p.Spec.NodeName == "" {
				out = append(out, p.Name)
			}
		}
	}
	return out
}

// syncNodes deletes the named pods and creates a pod pinned to each of
// the named nodes, at most burstReplicas of each, expecting them first.
// Creations go in slow-start batches that stop at the first failure;
// deletions all at once. It returns every error.
func (c *Controller) syncNodes(ctx context.Context, s *syncState, del, create []string) error {
	logger := klog.FromContext(ctx)
	del = del[:min(len(del), c.burstReplicas)]
	create = create[:min(len(create), c.burstReplicas)]

	// Expect before acting: the informer may see a pod before the call
	// returns.
	keys := make([]string, len(del))
	for i, name := range del {
		keys[i] = podKey(s.ds.Namespace, name)
	}
	c.expectations.ExpectDeletions(logger, s.key, keys)
	c.expectations.RaiseExpectations(logger, s.key, len(create), 0)

	var mu sync.Mutex
	var errs []error
	fail := func(err error) {
		utilruntime.HandleErrorWithLogger(logger, err, "Failed to sync daemon pods", "daemonset", klog.KObj(s.ds))
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	if len(create) > 0 {
		logger.V(4).Info("Nodes needing daemon pods for daemon set, creating", "daemonset", klog.KObj(s.ds), "needCount", len(create))
		c.createPods(ctx, s, create, fail)
	}
	if len(del) > 0 {
		logger.V(4).Info("Pods to delete for daemon set, deleting", "daemonset", klog.KObj(s.ds), "deleteCount", len(del))
		c.deletePods(ctx, s, del, fail)
	}
	return utilerrors.NewAggregate(errs)
}

// createPods creates one pod per node in slow-start batches; creations
// that fail or are skipped after a failing batch are no longer expected.
func (c *Controller) createPods(ctx context.Context, s *syncState, nodes []string, fail func(error)) {
	logger := klog.FromContext(ctx)
	template := podTemplate(s.ds, s.rev)
	ref := metav1.NewControllerRef(s.ds, controllerKind)
	var next, failed atomic.Int64
	batch := podcontrol.SlowStartInitialBatchSize
	if s.yielded {
		batch = len(nodes)
	}
	created, _ := podcontrol.SlowStartBatch(len(nodes), batch, func() error {
		t := template.DeepCopy()
		t.Spec.Affinity = pinToNode(t.Spec.Affinity, nodes[next.Add(1)-1])
		err := c.podControl.CreatePods(ctx, s.ds.Namespace, t, s.ds, ref)
		switch {
		case err == nil:
			return nil
		case apierrors.HasStatusCause(err, v1.NamespaceTerminatingCause):
			// Every create fails until the namespace is gone; not an error.
			return nil
		}
		logger.V(2).Info("Failed creation, decrementing expectations for daemon set", "daemonset", klog.KObj(s.ds))
		c.expectations.CreationObserved(logger, s.key)
		failed.Add(1)
		fail(err)
		return err
	})
	if skipped := len(nodes) - created - int(failed.Load()); skipped > 0 {
		logger.V(2).Info("Slow-start failure. Skipping creation pods, decrementing expectations for daemon set",
			"skippedPods", skipped, "daemonset", klog.KObj(s.ds))
		c.expectations.LowerExpectations(logger, s.key, skipped, 0)
	}
}

// deletePods deletes the named pods concurrently; a deletion that fails
// is no longer expected, and one of a pod already gone is no error.
func (c *Controller) deletePods(ctx context.Context, s *syncState, names []string, fail func(error)) {
	logger := klog.FromContext(ctx)
	var wg sync.WaitGroup
	for _, name := range names {
		wg.Go(func() {
			err := c.podControl.DeletePod(ctx, s.ds.Namespace, name, s.ds)
			if err == nil {
				return
			}
			// The informer will not see this deletion.
			c.expectations.DeletionObserved(logger, s.key, podKey(s.ds.Namespace, name))
			if !apierrors.IsNotFound(err) {
				logger.V(2).Info("Failed deletion, decremented expectations for daemon set", "daemonset", klog.KObj(s.ds))
				fail(err)
			}
		})
	}
	wg.Wait()
}
