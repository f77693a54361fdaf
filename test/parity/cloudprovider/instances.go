package cloudprovider

import (
	"context"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"
)

type instances struct{}

var _ cloudprovider.InstancesV2 = instances{}

func (instances) InstanceExists(_ context.Context, node *v1.Node) (bool, error) {
	_, gone := node.Annotations[AnnotationInstanceGone]
	return !gone, nil
}

func (instances) InstanceShutdown(_ context.Context, node *v1.Node) (bool, error) {
	_, down := node.Annotations[AnnotationInstanceShutdn]
	return down, nil
}

func (instances) InstanceMetadata(_ context.Context, node *v1.Node) (*cloudprovider.InstanceMetadata, error) {
	if _, gone := node.Annotations[AnnotationInstanceGone]; gone {
		return nil, cloudprovider.InstanceNotFound
	}
	id := node.Spec.ProviderID
	if id == "" {
		id = Name + "://" + node.Name
	}
	md := &cloudprovider.InstanceMetadata{
		ProviderID:   id,
		InstanceType: or(node.Annotations[AnnotationInstanceType], "parity.small"),
		Zone:         or(node.Annotations[AnnotationZone], "zone-a"),
		Region:       or(node.Annotations[AnnotationRegion], "region-1"),
	}
	for _, kv := range strings.Split(node.Annotations[AnnotationLabels], ",") {
		if k, v, ok := strings.Cut(strings.TrimSpace(kv), "="); ok {
			if md.AdditionalLabels == nil {
				md.AdditionalLabels = map[string]string{}
			}
			md.AdditionalLabels[k] = v
		}
	}
	if s, ok := node.Annotations[AnnotationAddresses]; ok {
		for _, kv := range strings.Split(s, ",") {
			kv = strings.TrimSpace(kv)
			if kv == "" {
				continue
			}
			t, a, found := strings.Cut(kv, "=")
			if !found {
				return nil, fmt.Errorf("%s: %q is not Type=address", AnnotationAddresses, kv)
			}
			md.NodeAddresses = append(md.NodeAddresses, v1.NodeAddress{Type: v1.NodeAddressType(t), Address: a})
		}
	} else {
		md.NodeAddresses = append([]v1.NodeAddress(nil), node.Status.Addresses...)
	}
	return md, nil
}

func or(v, def string) string {
	if v != "" {
		return v
	}
	return def
}
