package evaluator

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/apiserver/pkg/quota/v1/generic"
)

var (
	servicesResource = schema.GroupResource{Resource: "services"}
	serviceCountName = generic.ObjectCountQuotaResourceNameFor(servicesResource)
	serviceResources = []corev1.ResourceName{
		serviceCountName,
		corev1.ResourceServices,
		corev1.ResourceServicesNodePorts,
		corev1.ResourceServicesLoadBalancers,
	}
)

type serviceEvaluator struct{ list ListFunc }

// NewServices returns the evaluator of Services.
func NewServices(list ListFunc) Evaluator { return &serviceEvaluator{list: list} }

func (s *serviceEvaluator) GroupResource() schema.GroupResource { return servicesResource }

func (s *serviceEvaluator) MatchingResources(input []corev1.ResourceName) []corev1.ResourceName {
	return quota.Intersection(input, serviceResources)
}

func (s *serviceEvaluator) UsageStats(options quota.UsageStatsOptions) (quota.UsageStats, error) {
	return generic.CalculateUsageStats(options, s.list, generic.MatchesNoScopeFunc, s.usage)
}

func (s *serviceEvaluator) usage(obj runtime.Object) (corev1.ResourceList, error) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return corev1.ResourceList{}, fmt.Errorf("expect *v1.Service, got %T", obj)
	}
	return ServiceUsage(svc), nil
}

// ServiceUsage: every Service counts once; a NodePort Service uses a node
// port per port, a LoadBalancer one a load balancer and a node port per
// port, or, with allocateLoadBalancerNodePorts false, per port that has
// one.
func ServiceUsage(svc *corev1.Service) corev1.ResourceList {
	ports := int64(len(svc.Spec.Ports))
	result := corev1.ResourceList{
		serviceCountName:                     *resource.NewQuantity(1, resource.DecimalSI),
		corev1.ResourceServices:              *resource.NewQuantity(1, resource.DecimalSI),
		corev1.ResourceServicesLoadBalancers: {Format: resource.DecimalSI},
		corev1.ResourceServicesNodePorts:     {Format: resource.DecimalSI},
	}
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		result[corev1.ResourceServicesNodePorts] = *resource.NewQuantity(ports, resource.DecimalSI)
	case corev1.ServiceTypeLoadBalancer:
		nodePorts := ports
		if svc.Spec.AllocateLoadBalancerNodePorts != nil && !*svc.Spec.AllocateLoadBalancerNodePorts {
			nodePorts = 0
			for _, p := range svc.Spec.Ports {
				if p.NodePort != 0 {
					nodePorts++
				}
			}
		}
		result[corev1.ResourceServicesNodePorts] = *resource.NewQuantity(nodePorts, resource.DecimalSI)
		result[corev1.ResourceServicesLoadBalancers] = *resource.NewQuantity(1, resource.DecimalSI)
	}
	return result
}

// quotaServiceType is the type as far as quota cares: NodePort,
// LoadBalancer or neither.
func quotaServiceType(svc *corev1.Service) corev1.ServiceType {
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer:
		return svc.Spec.Type
	}
	return ""
}
