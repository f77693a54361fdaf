package daemonset

import (
	"fmt"
	"sync"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// placement is what decides, for one DaemonSet object, which nodes should
// run its pod: the template's nodeName, its parsed nodeSelector and
// required node affinity, and the tolerations its pods get (the template's
// plus the defaults every daemon pod has). It depends on the template only,
// so it is built once per DaemonSet object and then evaluated per node.
type placement struct {
	nodeName    string
	affinity    nodeaffinity.RequiredNodeAffinity
	tolerations []v1.Toleration
	// compareOps enables the Lt and Gt toleration operators (gate
	// TaintTolerationComparisonOperators).
	compareOps bool
}

func newPlacement(ds *apps.DaemonSet, compareOps bool) *placement {
	spec := &ds.Spec.Template.Spec
	return &placement{
		nodeName:    spec.NodeName,
		affinity:    nodeaffinity.NewRequiredNodeAffinity(spec.NodeSelector, spec.Affinity),
		tolerations: daemonPodTolerations(spec.Tolerations, spec.HostNetwork),
		compareOps:  compareOps,
	}
}

// fit is placement's verdict for one node.
type fit struct {
	// shouldRun: a daemon pod should be created on the node if it has
	// none.
	shouldRun bool
	// shouldContinueRunning: a daemon pod already on the node may stay.
	shouldContinueRunning bool
}

// on decides for node, as upstream's NodeShouldRunDaemonPod: the template's
// nodeName and required node affinity must match; NoSchedule and NoExecute
// taints must be tolerated to run, and a pod already running stays as long
// as every NoExecute taint is tolerated.
func (p *placement) on(logger klog.Logger, node *v1.Node) fit {
	if p.nodeName != "" && p.nodeName != node.Name {
		return fit{}
	}
	// Parse errors count as no match, as upstream (for compatibility).
	if ok, _ := p.affinity.Match(node); !ok {
		return fit{}
	}
	if !p.untolerated(logger, node.Spec.Taints, v1.TaintEffectNoSchedule, v1.TaintEffectNoExecute) {
		return fit{shouldRun: true, shouldContinueRunning: true}
	}
	return fit{shouldContinueRunning: !p.untolerated(logger, node.Spec.Taints, v1.TaintEffectNoExecute)}
}

// untolerated reports whether a taint with one of effects is tolerated by
// none of the tolerations.
func (p *placement) untolerated(logger klog.Logger, taints []v1.Taint, effects ...v1.TaintEffect) bool {
	for i := range taints {
		t := &taints[i]
		if !hasEffect(t, effects) {
			continue
		}
		tolerated := false
		for j := range p.tolerations {
			if p.tolerations[j].ToleratesTaint(logger, t, p.compareOps) {
				tolerated = true
				break
			}
		}
		if !tolerated {
			return true
		}
	}
	return false
}

func hasEffect(t *v1.Taint, effects []v1.TaintEffect) bool {
	for _, e := range effects {
		if t.Effect == e {
			return true
		}
	}
	return false
}

// defaultTolerations are added to every daemon pod, in this order: the
// node controller must not evict daemon pods from nodes that are not ready
// or unreachable, and they must run on nodes under pressure or cordoned.
var defaultTolerations = []v1.Toleration{
	{Key: v1.TaintNodeNotReady, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute},
	{Key: v1.TaintNodeUnreachable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute},
	{Key: v1.TaintNodeDiskPressure, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule},
	{Key: v1.TaintNodeMemoryPressure, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule},
	{Key: v1.TaintNodePIDPressure, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule},
	{Key: v1.TaintNodeUnschedulable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule},
}

// hostNetworkToleration is added to daemon pods on the host network, which
// can run before the node's network is.
var hostNetworkToleration = v1.Toleration{Key: v1.TaintNodeNetworkUnavailable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}

// daemonPodTolerations returns a new slice: tolerations with the defaults
// added as upstream's AddOrUpdateTolerationInPodSpec adds each, in turn. A
// toleration with a default's key, operator, value and effect is replaced
// by the default (its tolerationSeconds dropped: upstream's comparison of a
// pointer with a value never finds them equal), every such one; a default
// no toleration matches is appended.
func daemonPodTolerations(tolerations []v1.Toleration, hostNetwork bool) []v1.Toleration {
	out := append([]v1.Toleration(nil), tolerations...)
	add := func(def v1.Toleration) {
		replaced := false
		for i := range out {
			if def.MatchToleration(&out[i]) {
				out[i] = def
				replaced = true
			}
		}
		if !replaced {
			out = append(out, def)
		}
	}
	for _, def := range defaultTolerations {
		add(def)
	}
	if hostNetwork {
		add(hostNetworkToleration)
	}
	return out
}

// placements caches the placement of each DaemonSet object, so that
// evaluating every DaemonSet for a node (the node worker) and every node
// for a DaemonSet (a sync) parse the template once per object, not once
// per evaluation. An entry is replaced when the informer hands out a new
// object for the DaemonSet (any update) and dropped when it is deleted.
type placements struct {
	compareOps bool

	mu      sync.Mutex
	entries map[types.UID]placementEntry
}

type placementEntry struct {
	ds *apps.DaemonSet
	p  *placement
}

func newPlacements(compareOps bool) *placements {
	return &placements{compareOps: compareOps, entries: map[types.UID]placementEntry{}}
}

// of returns ds's placement.
func (c *placements) of(ds *apps.DaemonSet) *placement {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[ds.UID]; ok && e.ds == ds {
		return e.p
	}
	p := newPlacement(ds, c.compareOps)
	c.entries[ds.UID] = placementEntry{ds: ds, p: p}
	return p
}

func (c *placements) forget(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, uid)
}

// targetNodeName returns the node a daemon pod is for: spec.nodeName once
// bound, before that the single value of the metadata.name field
// requirement the controller pins it with.
func targetNodeName(pod *v1.Pod) (string, error) {
	if pod.Spec.NodeName != "" {
		return pod.Spec.NodeName, nil
	}
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return "", fmt.Errorf("no spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution for pod %s/%s", pod.Namespace, pod.Name)
	}
	terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) == 0 {
		return "", fmt.Errorf("no nodeSelectorTerms in requiredDuringSchedulingIgnoredDuringExecution of pod %s/%s", pod.Namespace, pod.Name)
	}
	for _, term := range terms {
		for _, req := range term.MatchFields {
			if req.Key == metav1.ObjectNameField && req.Operator == v1.NodeSelectorOpIn {
				if len(req.Values) != 1 {
					return "", fmt.Errorf("the matchFields value of '%s' is not unique for pod %s/%s", metav1.ObjectNameField, pod.Namespace, pod.Name)
				}
				return req.Values[0], nil
			}
		}
	}
	return "", fmt.Errorf("no node name found for pod %s/%s", pod.Namespace, pod.Name)
}

// pinToNode sets affinity's required node affinity to the one term
// selecting nodeName by metadata.name (replacing any other required terms:
// the DaemonSet's own already matched the node), so that the scheduler
// binds the pod there. affinity may be nil; it is modified and returned.
func pinToNode(affinity *v1.Affinity, nodeName string) *v1.Affinity {
	selector := &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
		MatchFields: []v1.NodeSelectorRequirement{{
			Key:      metav1.ObjectNameField,
			Operator: v1.NodeSelectorOpIn,
			Values:   []string{nodeName},
		}},
	}}}
	switch {
	case affinity == nil:
		return &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: selector}}
	case affinity.NodeAffinity == nil:
		affinity.NodeAffinity = &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: selector}
	case affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil:
		affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = selector
	default:
		affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = selector.NodeSelectorTerms
	}
	return affinity
}
