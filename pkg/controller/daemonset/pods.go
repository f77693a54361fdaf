package daemonset

import (
	"context"
	"fmt"
	"strconv"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	extensions "k8s.io/api/extensions/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller/controllerref"
)

// Labels a daemon pod carries besides its template's: the hash of the
// DaemonSet's current ControllerRevision, and (from the API server's
// deprecated.daemonset.template.generation annotation on the DaemonSet)
// the template generation it was created from.
const (
	hashLabel       = apps.DefaultDaemonSetUniqueLabelKey       // controller-revision-hash
	generationLabel = extensions.DaemonSetTemplateGenerationKey // pod-template-generation
)

// templateGeneration returns the DaemonSet's template generation from its
// deprecated annotation, or nil if the annotation is absent or not a
// number (the hash then decides alone).
func templateGeneration(ds *apps.DaemonSet) *int64 {
	s, ok := ds.Annotations[apps.DeprecatedTemplateGeneration]
	if !ok {
		return nil
	}
	g, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil
	}
	return &g
}

// revisionState is what tells a pod of the current template from an old
// one: the current revision's hash and the template generation.
type revisionState struct {
	hash       string
	generation *int64
	// generationLabel is the generation rendered as the label holds it.
	generationLabel string
}

func newRevisionState(ds *apps.DaemonSet, hash string) revisionState {
	r := revisionState{hash: hash, generation: templateGeneration(ds)}
	if r.generation != nil {
		r.generationLabel = strconv.FormatInt(*r.generation, 10)
	}
	return r
}

// updated reports whether pod is of the current template: its hash label
// matches, or (for pods from before revisions had hashes) its template
// generation does.
func (r revisionState) updated(pod *v1.Pod) bool {
	if r.hash != "" && pod.Labels[hashLabel] == r.hash {
		return true
	}
	return r.generation != nil && pod.Labels[generationLabel] == r.generationLabel
}

// podTemplate returns the template daemon pods are created from: a copy
// of the DaemonSet's with the default tolerations and the generation and
// hash labels. Each pod is then pinned to its node (pinToNode).
func podTemplate(ds *apps.DaemonSet, rev revisionState) *v1.PodTemplateSpec {
	t := ds.Spec.Template.DeepCopy()
	t.Spec.Tolerations = daemonPodTolerations(t.Spec.Tolerations, t.Spec.HostNetwork)
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	if rev.generation != nil {
		t.Labels[generationLabel] = fmt.Sprint(*rev.generation)
	}
	if rev.hash != "" {
		t.Labels[hashLabel] = rev.hash
	}
	return t
}

// byAge orders a node's daemon pods as upstream's
// podByCreationTimestampAndPhase: bound pods first, then oldest first,
// then by name.
func byAge(a, b *v1.Pod) int {
	aBound, bBound := a.Spec.NodeName != "", b.Spec.NodeName != ""
	switch {
	case aBound && !bBound:
		return -1
	case !aBound && bBound:
		return 1
	}
	if a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	}
	if a.CreationTimestamp.Before(&b.CreationTimestamp) {
		return -1
	}
	return 1
}

// claimPods returns ds's pods: its own that still match the selector and
// matching orphans it adopted (after an uncached GET confirmed ds is not
// being deleted); own pods no longer matching are released. The pods are
// the cache's: do not modify them.
func (c *Controller) claimPods(ctx context.Context, ds *apps.DaemonSet, selector labels.Selector) ([]*v1.Pod, error) {
	candidates, err := controllerref.PodsByOwner(c.podIndexer, ds, controllerKind.Kind, true)
	if err != nil {
		return nil, err
	}
	m := controllerref.NewPodManager(c.podControl.PatchPod, ds, controllerKind, selector, c.canAdopt(ds))
	return m.Claim(ctx, candidates)
}

// canAdopt is the check before ds adopts anything: a fresh read that it is
// still the same object and not being deleted.
func (c *Controller) canAdopt(ds *apps.DaemonSet) func(ctx context.Context) error {
	return controllerref.RecheckDeletionTimestamp(func(ctx context.Context) (metav1.Object, error) {
		fresh, err := c.client.AppsV1().DaemonSets(ds.Namespace).Get(ctx, ds.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		if fresh.UID != ds.UID {
			return nil, fmt.Errorf("original DaemonSet %v/%v is gone: got uid %v, wanted %v", ds.Namespace, ds.Name, fresh.UID, ds.UID)
		}
		return fresh, nil
	})
}

// nodePods maps node names to the daemon pods for them.
type nodePods map[string][]*v1.Pod

// groupByNode groups pods by the node they are for. Unless
// includeDeletedTerminal, pods that are both terminal and being deleted
// are left out: the kubelet or the pod garbage collector finishes them.
// Pods whose node cannot be told are left out.
func groupByNode(logger klog.Logger, ds *apps.DaemonSet, pods []*v1.Pod, includeDeletedTerminal bool) nodePods {
	out := make(nodePods, len(pods))
	// Most nodes have one pod: their slices share one array, each capped
	// at its element, so that an append for a second pod copies.
	one := make([]*v1.Pod, len(pods))
	for i, pod := range pods {
		if !includeDeletedTerminal && isTerminal(pod) && pod.DeletionTimestamp != nil {
			continue
		}
		node, err := targetNodeName(pod)
		if err != nil {
			logger.V(4).Info("Failed to get target node name of Pod in DaemonSet", "pod", klog.KObj(pod), "daemonset", klog.KObj(ds))
			continue
		}
		if have, ok := out[node]; ok {
			out[node] = append(have, pod)
			continue
		}
		one[i] = pod
		out[node] = one[i : i+1 : i+1]
	}
	return out
}

func isTerminal(pod *v1.Pod) bool {
	return pod.Status.Phase == v1.PodFailed || pod.Status.Phase == v1.PodSucceeded
}
