package cluster

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The annotation that hands a Node to kwok (--manage-nodes-with-annotation-selector).
// Nodes without it are heartbeated by nobody.
const (
	KwokNodeAnnotation      = "kwok.x-k8s.io/node"
	KwokNodeAnnotationValue = "fake"
	// DefaultNodePrefix names nodes as kwok's examples do: kwok-node-0, -1, …
	DefaultNodePrefix = "kwok-node"
)

// NewKwokNode returns kwok's usual fake Node: annotated for kwok, labelled
// type=kwok, 32 CPUs, 256Gi, 110 pods. Unlike kwok's example it carries no
// kwok.x-k8s.io/node:NoSchedule taint, so ordinary pods schedule on it.
// Status is kept on create for Nodes; kwok's node-initialize stage fills in
// conditions and addresses, node-lifecycle-controller then removes the
// node.kubernetes.io/not-ready taint the apiserver adds.
func NewKwokNode(name string) *corev1.Node {
	res := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Annotations: map[string]string{
				"node.alpha.kubernetes.io/ttl": "0",
				KwokNodeAnnotation:             KwokNodeAnnotationValue,
			},
			Labels: map[string]string{
				"beta.kubernetes.io/arch":       "amd64",
				"beta.kubernetes.io/os":         "linux",
				"kubernetes.io/arch":            "amd64",
				"kubernetes.io/hostname":        name,
				"kubernetes.io/os":              "linux",
				"kubernetes.io/role":            "agent",
				"node-role.kubernetes.io/agent": "",
				"type":                          "kwok",
			},
		},
		Status: corev1.NodeStatus{
			Allocatable: res,
			Capacity:    res.DeepCopy(),
			NodeInfo: corev1.NodeSystemInfo{
				Architecture: "amd64",
				//lint:ignore SA1019 kwok's fake nodes report every version field, deprecated or not
				KubeProxyVersion: "fake",
				KubeletVersion:   "fake",
				OperatingSystem:  "linux",
			},
			Phase: corev1.NodeRunning,
		},
	}
}

// CreateNodes creates n kwok Nodes named <prefix>-0 … <prefix>-(n-1); ones
// that already exist are left as they are. It returns the names.
func (c *Cluster) CreateNodes(ctx context.Context, prefix string, n int) ([]string, error) {
	names := make([]string, 0, n)
	for i := range n {
		name := fmt.Sprintf("%s-%d", prefix, i)
		_, err := c.Client.CoreV1().Nodes().Create(ctx, NewKwokNode(name), metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return names, fmt.Errorf("cluster: create node %s: %w", name, err)
		}
		names = append(names, name)
	}
	return names, nil
}

// WaitForNodesReady waits until every named Node is Ready and no longer
// carries the node.kubernetes.io/not-ready taint (which takes kwok and the
// controller manager's node-lifecycle-controller), bounded by ctx and
// Options.StartTimeout.
func (c *Cluster) WaitForNodesReady(ctx context.Context, names ...string) error {
	what := "nodes " + strings.Join(names, ",") + " Ready and untainted"
	return waitFor(ctx, c.opts.StartTimeout, what, nil, func(ctx context.Context) (bool, error) {
		for _, name := range names {
			n, err := c.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if ok, why := NodeSchedulable(n); !ok {
				return false, fmt.Errorf("node %s: %s", name, why)
			}
		}
		return true, nil
	})
}

// NodeSchedulable reports whether a Node is Ready and free of the not-ready
// and unreachable taints, and if not, why.
func NodeSchedulable(n *corev1.Node) (bool, string) {
	ready := false
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			ready = cond.Status == corev1.ConditionTrue
		}
	}
	if !ready {
		return false, "not Ready"
	}
	for _, t := range n.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
			return false, "tainted " + t.Key + ":" + string(t.Effect)
		}
	}
	return true, ""
}
