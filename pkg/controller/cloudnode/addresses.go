package cloudnode

import (
	"context"
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	cloudprovider "k8s.io/cloud-provider"
	nodehelpers "k8s.io/component-helpers/node/util"
	"k8s.io/klog/v2"
	netutils "k8s.io/utils/net"
)

// updateAddresses writes the provider's addresses into an initialized
// node's status when they differ from what it has. A provider that names
// no hostname keeps the kubelet's; a provided node IP is put first.
func (c *Controller) updateAddresses(ctx context.Context, node *v1.Node, md *cloudprovider.InstanceMetadata) {
	logger := klog.FromContext(ctx)
	if node == nil || md == nil || hasCloudTaint(node) {
		return
	}
	if len(md.NodeAddresses) == 0 {
		logger.V(5).Info("Skipping node address update: the cloud provider returned none", "node", klog.KObj(node))
		return
	}
	addrs := append([]v1.NodeAddress(nil), md.NodeAddresses...)
	if !hasType(addrs, v1.NodeHostName) {
		for _, a := range node.Status.Addresses {
			if a.Type == v1.NodeHostName {
				addrs = append(addrs, a)
			}
		}
	}
	addrs, err := withProvidedNodeIP(node, addrs)
	if err != nil {
		logger.Error(err, "Failed to update node addresses", "node", klog.KObj(node))
		return
	}
	if !addressesChanged(node.Status.Addresses, addrs) {
		return
	}
	if err := patchAddresses(ctx, c.client.CoreV1().Nodes(), node.Name, addrs); err != nil {
		logger.Error(err, "Error patching node with cloud ip addresses", "node", klog.KObj(node))
	}
}

func hasType(addrs []v1.NodeAddress, t v1.NodeAddressType) bool {
	for _, a := range addrs {
		if a.Type == t {
			return true
		}
	}
	return false
}

// addressesChanged is upstream's comparison: a different count, or an
// address of b whose type maps to another address in a (the last of each
// type in a counts).
func addressesChanged(a, b []v1.NodeAddress) bool {
	if len(a) != len(b) {
		return true
	}
	byType := map[v1.NodeAddressType]string{}
	for _, x := range a {
		byType[x.Type] = x.Address
	}
	for _, x := range b {
		if byType[x.Type] != x.Address {
			return true
		}
	}
	return false
}

// withProvidedNodeIP applies the node IP the kubelet was given, if any:
// every provider address equal to one of its IPs comes first and is the
// only address of its type; the others follow. A node IP the provider does
// not list is an error.
func withProvidedNodeIP(node *v1.Node, addrs []v1.NodeAddress) ([]v1.NodeAddress, error) {
	provided, ok := node.Annotations[AnnotationProvidedNodeIP]
	if !ok {
		return addrs, nil
	}
	ips, err := nodehelpers.ParseNodeIPAnnotation(provided)
	if err != nil {
		return nil, fmt.Errorf("failed to parse node IP %q: %w", provided, err)
	}
	out := []v1.NodeAddress{}
	enforced := map[v1.NodeAddressType]bool{}
	for _, ip := range ips {
		matched := false
		for _, a := range addrs {
			if netutils.ParseIPSloppy(a.Address).Equal(ip) {
				out = append(out, v1.NodeAddress{Type: a.Type, Address: a.Address})
				enforced[a.Type] = true
				matched = true
			}
		}
		if !matched {
			return nil, fmt.Errorf("failed to get node address from cloud provider that matches ip: %v", ip)
		}
	}
	for _, a := range addrs {
		if !enforced[a.Type] {
			out = append(out, v1.NodeAddress{Type: a.Type, Address: a.Address})
		}
	}
	return out, nil
}

// nodeStatusPatcher is the part of the Nodes client patchAddresses uses.
type nodeStatusPatcher interface {
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*v1.Node, error)
}

// patchAddresses replaces the node's status addresses. The field is
// declared as merged by type, which would keep stale entries of a type;
// the "$patch: replace" directive makes the list exactly addrs.
func patchAddresses(ctx context.Context, nodes nodeStatusPatcher, name string, addrs []v1.NodeAddress) error {
	list := make([]any, 0, len(addrs)+1)
	for _, a := range addrs {
		list = append(list, a)
	}
	list = append(list, map[string]string{"$patch": "replace"})
	body, err := json.Marshal(map[string]any{"status": map[string]any{"addresses": list}})
	if err != nil {
		return err
	}
	_, err = nodes.Patch(ctx, name, types.StrategicMergePatchType, body, metav1.PatchOptions{}, "status")
	if err != nil {
		return fmt.Errorf("failed to patch status %q for node %q: %w", body, name, err)
	}
	return nil
}
