package endpoints

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	utilnet "k8s.io/utils/net"

	"github.com/kcm-dev/kcm/internal/controller/endpointutil"
)

// podAddress is the pod's address for the Service: its IP of the
// Service's first family (inferred from the cluster IP, or from the pod's
// IP, when the Service shows no families), with node and pod reference.
func podAddress(svc *v1.Service, pod *v1.Pod) (*v1.EndpointAddress, error) {
	family := v1.IPv4Protocol
	switch {
	case len(svc.Spec.IPFamilies) > 0:
		family = svc.Spec.IPFamilies[0]
	case svc.Spec.ClusterIP != "" && svc.Spec.ClusterIP != v1.ClusterIPNone:
		if utilnet.IsIPv6String(svc.Spec.ClusterIP) {
			family = v1.IPv6Protocol
		}
	case utilnet.IsIPv6String(pod.Status.PodIP):
		family = v1.IPv6Protocol
	}
	wantIPv6 := family == v1.IPv6Protocol
	ip := ""
	for _, podIP := range pod.Status.PodIPs {
		parsed := utilnet.ParseIPSloppy(podIP.IP)
		if wantIPv6 == utilnet.IsIPv6(parsed) {
			ip = parsed.String()
			break
		}
	}
	if ip == "" {
		return nil, fmt.Errorf("failed to find a matching endpoint for service %v", svc.Name)
	}
	nodeName := pod.Spec.NodeName
	return &v1.EndpointAddress{
		IP:       ip,
		NodeName: &nodeName,
		TargetRef: &v1.ObjectReference{
			Kind:      "Pod",
			Namespace: pod.Namespace,
			Name:      pod.Name,
			UID:       pod.UID,
		},
	}, nil
}

// desiredSubsets returns the Service's subsets for pods, repacked: every
// pod that belongs in endpoints, ready or (unless the Service publishes
// not-ready addresses) not ready, on every Service port its targetPort
// resolves to. A headless Service without ports lists addresses without
// ports; any other Service without ports lists nothing.
func desiredSubsets(logger klog.Logger, svc *v1.Service, pods []*v1.Pod) []v1.EndpointSubset {
	tolerateUnready := svc.Spec.PublishNotReadyAddresses
	var subsets []v1.EndpointSubset
	for _, pod := range pods {
		if !endpointutil.ShouldPodBeInEndpoints(pod, tolerateUnready) {
			logger.V(5).Info("Pod is not included on endpoints for Service", "pod", klog.KObj(pod), "service", klog.KObj(svc))
			continue
		}
		addr, err := podAddress(svc, pod)
		if err != nil {
			logger.V(2).Info("Failed to find endpoint for service with ClusterIP on pod with error", "service", klog.KObj(svc), "clusterIP", svc.Spec.ClusterIP, "pod", klog.KObj(pod), "error", err)
			continue
		}
		if endpointutil.ShouldSetHostname(pod, svc) {
			addr.Hostname = pod.Spec.Hostname
		}
		ready := tolerateUnready || endpointutil.IsPodReady(pod)
		if len(svc.Spec.Ports) == 0 {
			if svc.Spec.ClusterIP == v1.ClusterIPNone {
				subsets = append(subsets, subset(*addr, nil, ready))
			}
			continue
		}
		for i := range svc.Spec.Ports {
			sp := &svc.Spec.Ports[i]
			num, err := endpointutil.FindPort(pod, sp)
			if err != nil {
				logger.V(4).Info("Failed to find port for service", "service", klog.KObj(svc), "error", err)
				continue
			}
			port := &v1.EndpointPort{Name: sp.Name, Port: int32(num), Protocol: sp.Protocol, AppProtocol: sp.AppProtocol}
			subsets = append(subsets, subset(*addr, port, ready))
		}
	}
	return repackSubsets(subsets)
}

// subset is one address on at most one port.
func subset(addr v1.EndpointAddress, port *v1.EndpointPort, ready bool) v1.EndpointSubset {
	ports := []v1.EndpointPort{}
	if port != nil {
		ports = append(ports, *port)
	}
	if ready {
		return v1.EndpointSubset{Addresses: []v1.EndpointAddress{addr}, Ports: ports}
	}
	return v1.EndpointSubset{NotReadyAddresses: []v1.EndpointAddress{addr}, Ports: ports}
}
