package cloudnode

import (
	"context"
	"fmt"
	"regexp"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/kcm-dev/kcm/internal/controller/nodeutil"
)

// updateBackoff is upstream's backoff for the initializing update: 20
// tries from 50ms with full jitter.
var updateBackoff = wait.Backoff{Steps: 20, Duration: 50 * time.Millisecond, Jitter: 1.0}

// kubernetesNamespace matches label keys in the kubernetes.io and k8s.io
// namespaces, which a provider's additional labels may not use.
var kubernetesNamespace = regexp.MustCompile(`(^|\.)(kubernetes|k8s)\.io/`)

// labelPairs are the labels set under a beta key and a GA key: the beta
// one is the source of truth and the GA one must exist (upstream's rule).
var labelPairs = []struct{ beta, ga string }{
	{v1.LabelFailureDomainBetaZone, v1.LabelTopologyZone},
	{v1.LabelFailureDomainBetaRegion, v1.LabelTopologyRegion},
	{v1.LabelInstanceType, v1.LabelInstanceTypeStable},
}

func hasCloudTaint(node *v1.Node) bool {
	for _, t := range node.Spec.Taints {
		if t.Key == TaintUninitialized {
			return true
		}
	}
	return false
}

// sync initializes a tainted node, or reconciles an initialized one's
// labels.
func (c *Controller) sync(ctx context.Context, name string) error {
	node, err := c.nodes.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !hasCloudTaint(node) {
		return c.reconcileLabels(ctx, node)
	}
	if err := c.initialize(ctx, node); err != nil {
		// One Event per failure streak: retries back off as upstream's
		// (5ms doubling to 1000s) and are logged by the worker.
		if c.queue.NumRequeues(name) == 0 {
			c.recorder.Eventf(node, v1.EventTypeWarning, "FailedToInitializeNode", "Failed to initialize node %s with the cloud provider: %v", node.Name, err)
		}
		return err
	}
	return nil
}

// reconcileLabels adds or corrects the GA twin of each beta label.
func (c *Controller) reconcileLabels(ctx context.Context, node *v1.Node) error {
	want := map[string]string{}
	for _, p := range labelPairs {
		beta, ok := node.Labels[p.beta]
		if !ok {
			continue
		}
		if ga, ok := node.Labels[p.ga]; !ok || ga != beta {
			want[p.ga] = beta
		}
	}
	if len(want) == 0 {
		return nil
	}
	_, err := nodeutil.PatchNode(ctx, c.client, node, func(n *v1.Node) {
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		for k, v := range want {
			n.Labels[k] = v
		}
	})
	return err
}

// initialize asks the provider about the node, writes what it says and
// removes the taint in one update, then patches the addresses.
func (c *Controller) initialize(ctx context.Context, node *v1.Node) error {
	logger := klog.FromContext(ctx)
	logger.Info("Initializing node with cloud provider", "node", klog.KObj(node))
	md, err := c.instanceMetadata(ctx, node)
	if err != nil {
		return fmt.Errorf("failed to get instance metadata for node %s: %w", node.Name, err)
	}
	if md == nil {
		logger.Info("Skip sync node because cloud provided nil metadata", "node", klog.KObj(node))
		return nil
	}
	// A node IP the kubelet was given must be among the provider's
	// addresses before the taint goes.
	if _, err := withProvidedNodeIP(node, md.NodeAddresses); err != nil {
		return fmt.Errorf("provided node ip for node %q is not valid: %w", node.Name, err)
	}
	apply := func(n *v1.Node) {
		c.applyMetadata(ctx, n, md)
		n.Spec.Taints = withoutCloudTaint(n.Spec.Taints)
	}

	current := node
	var updated *v1.Node
	err = retry.RetryOnConflict(updateBackoff, func() error {
		if current == nil {
			fresh, err := c.client.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			current = fresh
		}
		desired := current.DeepCopy()
		apply(desired)
		updated, err = c.client.CoreV1().Nodes().Update(ctx, desired, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			current = nil
		}
		return err
	})
	if err != nil {
		return err
	}
	// Right away, so that the node's addresses do not wait a period.
	c.updateAddresses(ctx, updated, md)
	logger.Info("Successfully initialized node with cloud provider", "node", klog.KObj(node))
	c.recorder.Event(node, v1.EventTypeNormal, "Synced", "Node synced successfully")
	return nil
}

// applyMetadata sets what the provider knows about the node: the provider
// ID if it has none, the instance type, zone and region under their beta
// and GA keys, and the provider's additional labels that neither use a
// Kubernetes namespace nor replace an existing label.
func (c *Controller) applyMetadata(ctx context.Context, n *v1.Node, md *cloudprovider.InstanceMetadata) {
	logger := klog.FromContext(ctx)
	if n.Spec.ProviderID == "" && md.ProviderID != "" {
		n.Spec.ProviderID = md.ProviderID
	}
	set := func(value string, keys ...string) {
		if value == "" {
			return
		}
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		for _, k := range keys {
			logger.V(2).Info("Adding node label from cloud provider", "node", klog.KObj(n), "label", k, "value", value)
			n.Labels[k] = value
		}
	}
	set(md.InstanceType, v1.LabelInstanceType, v1.LabelInstanceTypeStable)
	set(md.Zone, v1.LabelFailureDomainBetaZone, v1.LabelTopologyZone)
	set(md.Region, v1.LabelFailureDomainBetaRegion, v1.LabelTopologyRegion)
	for k, v := range md.AdditionalLabels {
		if kubernetesNamespace.MatchString(k) {
			logger.Info("Discarding node label with kubernetes namespace", "node", klog.KObj(n), "label", k)
			continue
		}
		if old, ok := n.Labels[k]; ok {
			if old != v {
				logger.Info("Discarding node label that is already present", "node", klog.KObj(n), "label", k)
			}
			continue
		}
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		n.Labels[k] = v
	}
}

func withoutCloudTaint(taints []v1.Taint) []v1.Taint {
	var kept []v1.Taint
	for _, t := range taints {
		if t.Key != TaintUninitialized {
			kept = append(kept, t)
		}
	}
	return kept
}
