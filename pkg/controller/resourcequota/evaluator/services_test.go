package evaluator

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/utils/ptr"
)

func service(t corev1.ServiceType, nodePorts ...int32) *corev1.Service {
	svc := &corev1.Service{Spec: corev1.ServiceSpec{Type: t}}
	for _, p := range nodePorts {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Port: 80, NodePort: p})
	}
	return svc
}

func TestServiceUsage(t *testing.T) {
	noNodePorts := service(corev1.ServiceTypeLoadBalancer, 0, 30001)
	noNodePorts.Spec.AllocateLoadBalancerNodePorts = ptr.To(false)
	for _, tc := range []struct {
		name string
		svc  *corev1.Service
		want corev1.ResourceList
	}{
		{"ClusterIP", service(corev1.ServiceTypeClusterIP, 0),
			rl("count/services", "1", "services", "1", "services.nodeports", "0", "services.loadbalancers", "0")},
		{"NodePort, two ports", service(corev1.ServiceTypeNodePort, 30000, 30001),
			rl("count/services", "1", "services", "1", "services.nodeports", "2", "services.loadbalancers", "0")},
		{"LoadBalancer", service(corev1.ServiceTypeLoadBalancer, 30000),
			rl("count/services", "1", "services", "1", "services.nodeports", "1", "services.loadbalancers", "1")},
		{"LoadBalancer without node port allocation", noNodePorts,
			rl("count/services", "1", "services", "1", "services.nodeports", "1", "services.loadbalancers", "1")},
		{"ExternalName", service(corev1.ServiceTypeExternalName),
			rl("count/services", "1", "services", "1", "services.nodeports", "0", "services.loadbalancers", "0")},
	} {
		requireUsage(t, tc.name, ServiceUsage(tc.svc), tc.want)
	}
}

func TestServiceUsageStatsIgnoresScopes(t *testing.T) {
	e := NewServices(list(service(corev1.ServiceTypeNodePort, 30000), service(corev1.ServiceTypeClusterIP)))
	names := e.MatchingResources([]corev1.ResourceName{"services", "services.nodeports", "pods", "count/services"})
	if len(names) != 3 {
		t.Fatalf("MatchingResources = %v", names)
	}
	stats, err := e.UsageStats(quota.UsageStatsOptions{Resources: names})
	if err != nil {
		t.Fatal(err)
	}
	requireUsage(t, "no scopes", quota.Mask(stats.Used, names), rl("services", "2", "services.nodeports", "1", "count/services", "2"))
	stats, _ = e.UsageStats(quota.UsageStatsOptions{Resources: names, Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}})
	requireUsage(t, "a scope matches no Service", quota.Mask(stats.Used, names), rl("services", "0", "services.nodeports", "0", "count/services", "0"))
}
