package daemonset

import (
	"context"
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller/podranking"
)

// rollingUpdate deletes old pods, or creates new ones beside them, as far
// as maxUnavailable and maxSurge allow; manage does the rest on the next
// syncs (it replaces deleted pods and removes surplus ones). Nodes are
// considered in name order (upstream's is a map's, random).
func (c *Controller) rollingUpdate(ctx context.Context, s *syncState) error {
	if !s.hasOldPods() {
		// Nothing to replace: both ways below would do nothing.
		return nil
	}
	byNode := maps.Clone(s.byNode)
	maxSurge, maxUnavailable, desired, err := c.updateBudget(klog.FromContext(ctx), s, byNode)
	if err != nil {
		return fmt.Errorf("couldn't get unavailable numbers: %v", err)
	}
	names := slices.Sorted(maps.Keys(byNode))
	if maxSurge == 0 {
		return c.syncNodes(ctx, s, c.replaceUnavailable(ctx, s, byNode, names, maxUnavailable), nil)
	}
	del, create, err := c.surge(ctx, s, byNode, names, maxSurge, desired)
	if err != nil {
		return err
	}
	return c.syncNodes(ctx, s, del, create)
}

// updateBudget returns maxSurge and maxUnavailable as numbers of nodes,
// and how many nodes should run the pod; it adds an empty entry to byNode
// for each of those that has none. A DaemonSet allowing neither surge nor
// unavailability gets maxUnavailable 1.
func (c *Controller) updateBudget(logger klog.Logger, s *syncState, byNode nodePods) (maxSurge, maxUnavailable, desired int, err error) {
	for i, node := range s.nodes {
		if !s.fits[i].shouldRun {
			continue
		}
		desired++
		if _, ok := byNode[node.Name]; !ok {
			byNode[node.Name] = nil
		}
	}
	if maxUnavailable, err = unavailableCount(s.ds, desired); err != nil {
		return -1, -1, -1, fmt.Errorf("invalid value for MaxUnavailable: %v", err)
	}
	if maxSurge, err = surgeCount(s.ds, desired); err != nil {
		return -1, -1, -1, fmt.Errorf("invalid value for MaxSurge: %v", err)
	}
	if desired > 0 && maxUnavailable == 0 && maxSurge == 0 {
		logger.Info("DaemonSet is not configured for surge or unavailability, defaulting to accepting unavailability", "daemonset", klog.KObj(s.ds))
		maxUnavailable = 1
	}
	logger.V(5).Info("DaemonSet with maxSurge and maxUnavailable", "daemonset", klog.KObj(s.ds), "maxSurge", maxSurge, "maxUnavailable", maxUnavailable)
	return maxSurge, maxUnavailable, desired, nil
}

// replaceUnavailable returns the old pods to delete without surging:
// every old pod that is not available, and available old pods as long as
// fewer than maxUnavailable nodes are without an available pod of the
// current template. Nodes with several pods of one kind, or with none or
// both kinds, are left to manage and count as unavailable.
func (c *Controller) replaceUnavailable(ctx context.Context, s *syncState, byNode nodePods, names []string, maxUnavailable int) []string {
	logger := klog.FromContext(ctx)
	minReady := s.ds.Spec.MinReadySeconds
	unavailable := 0
	var replacements, candidates []string
	for _, nodeName := range names {
		newPod, oldPod, ok := s.updatedPodsOnNode(byNode[nodeName])
		switch {
		case !ok:
			logger.V(3).Info("DaemonSet has excess pods on node, skipping to allow the core loop to process", "daemonset", klog.KObj(s.ds), "node", klog.KRef("", nodeName))
			unavailable++
		case (oldPod == nil) == (newPod == nil):
			// manage creates or deletes one: unavailable meanwhile.
			unavailable++
		case newPod != nil:
			if !podranking.IsAvailable(newPod, minReady, s.now) {
				unavailable++
			}
		case !podranking.IsAvailable(oldPod, minReady, s.now):
			logger.V(5).Info("DaemonSet pod on node is out of date and not available, allowing replacement", "daemonset", klog.KObj(s.ds), "pod", klog.KObj(oldPod), "node", klog.KRef("", nodeName))
			replacements = append(replacements, oldPod.Name)
			unavailable++
		case unavailable >= maxUnavailable:
			// No point considering further candidates.
		default:
			logger.V(5).Info("DaemonSet pod on node is out of date, this is a candidate to replace", "daemonset", klog.KObj(s.ds), "pod", klog.KObj(oldPod), "node", klog.KRef("", nodeName))
			candidates = append(candidates, oldPod.Name)
		}
	}
	logger.V(5).Info("DaemonSet allowing replacements", "daemonset", klog.KObj(s.ds), "replacements", len(replacements), "maxUnavailable", maxUnavailable, "numUnavailable", unavailable, "candidates", len(candidates))
	remaining := min(max(maxUnavailable-unavailable, 0), len(candidates))
	return append(replacements, candidates[:remaining]...)
}

// surge returns, while surging, the old pods to delete (those whose new
// pod is available, those not available on nodes that no longer fit, and
// those on nodes that no longer fit as far as availability above the
// desired count allows) and the nodes to create new pods on (those whose
// old pod is not available, and up to maxSurge others).
func (c *Controller) surge(ctx context.Context, s *syncState, byNode nodePods, names []string, maxSurge, desired int) (del, create []string, err error) {
	logger := klog.FromContext(ctx)
	minReady := s.ds.Spec.MinReadySeconds
	var shouldNotRun, candidates []string
	surged, available := 0, 0
	for _, nodeName := range names {
		newPod, oldPod, ok := s.updatedPodsOnNode(byNode[nodeName])
		if !ok {
			logger.V(3).Info("DaemonSet has excess pods on node, skipping to allow the core loop to process", "daemonset", klog.KObj(s.ds), "node", klog.KRef("", nodeName))
			surged++
			continue
		}
		// Availability counts on every node, those being left included.
		if p := oldPod; p != nil || newPod != nil {
			if p == nil {
				p = newPod
			}
			if podranking.IsAvailable(p, minReady, s.now) {
				available++
			}
		}
		switch {
		case oldPod == nil:
			// Nothing to replace; manage creates a pod if needed.
		case newPod == nil:
			fits, err := c.nodeShouldRun(logger, s, nodeName)
			if err != nil {
				return nil, nil, err
			}
			oldAvailable := podranking.IsAvailable(oldPod, minReady, s.now)
			switch {
			case !oldAvailable && !fits:
				logger.V(5).Info("DaemonSet pod on node is not available and does not match scheduling constraints, remove old pod", "daemonset", klog.KObj(s.ds), "node", nodeName, "oldPod", klog.KObj(oldPod))
				del = append(del, oldPod.Name)
			case !oldAvailable:
				logger.V(5).Info("Pod on node is out of date and not available, allowing replacement", "daemonset", klog.KObj(s.ds), "pod", klog.KObj(oldPod), "node", klog.KRef("", nodeName))
				create = append(create, nodeName)
			case !fits:
				shouldNotRun = append(shouldNotRun, oldPod.Name)
			case surged >= maxSurge:
				// No point considering further candidates.
			default:
				logger.V(5).Info("DaemonSet pod on node is out of date, this is a surge candidate", "daemonset", klog.KObj(s.ds), "pod", klog.KObj(oldPod), "node", klog.KRef("", nodeName))
				candidates = append(candidates, nodeName)
			}
		case !podranking.IsAvailable(newPod, minReady, s.now):
			// Surged here; waiting for the new pod.
			surged++
		default:
			logger.V(5).Info("DaemonSet pod on node is available, remove old pod", "daemonset", klog.KObj(s.ds), "newPod", klog.KObj(newPod), "node", nodeName, "oldPod", klog.KObj(oldPod))
			del = append(del, oldPod.Name)
		}
	}
	logger.V(5).Info("DaemonSet allowing replacements", "daemonset", klog.KObj(s.ds), "replacements", len(create), "maxSurge", maxSurge, "numSurge", surged, "candidates", len(candidates))
	// With maxSurge the owner expects full availability: a pod on a node
	// that no longer fits goes only while more pods are available than
	// desired.
	if deletable := min(available-desired, len(shouldNotRun)); deletable > 0 {
		for _, name := range shouldNotRun[:deletable] {
			if _, err := c.podLister.Pods(s.ds.Namespace).Get(name); err != nil {
				continue
			}
			del = append(del, name)
		}
	}
	remaining := min(max(maxSurge-surged, 0), len(candidates))
	return del, append(create, candidates[:remaining]...), nil
}

// nodeShouldRun evaluates the named node, which must exist.
func (c *Controller) nodeShouldRun(logger klog.Logger, s *syncState, nodeName string) (bool, error) {
	node, err := c.nodeLister.Get(nodeName)
	if err != nil {
		return false, fmt.Errorf("couldn't get node for nodeName %q: %v", nodeName, err)
	}
	return s.place.on(logger, node).shouldRun, nil
}

// hasOldPods reports whether a pod not being deleted is of an old template.
func (s *syncState) hasOldPods() bool {
	for _, pods := range s.byNode {
		for _, pod := range pods {
			if pod.DeletionTimestamp == nil && !s.rev.updated(pod) {
				return true
			}
		}
	}
	return false
}

// updatedPodsOnNode returns a node's pod of the current template and its
// old one, ignoring pods being deleted, or false if it has several of
// either (manage prunes them first).
func (s *syncState) updatedPodsOnNode(pods []*v1.Pod) (newPod, oldPod *v1.Pod, ok bool) {
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		if s.rev.updated(pod) {
			if newPod != nil {
				return nil, nil, false
			}
			newPod = pod
		} else {
			if oldPod != nil {
				return nil, nil, false
			}
			oldPod = pod
		}
	}
	return newPod, oldPod, true
}
