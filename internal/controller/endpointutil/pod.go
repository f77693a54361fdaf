package endpointutil

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// IsPodReady reports whether the pod's Ready condition is True.
func IsPodReady(pod *v1.Pod) bool {
	c := PodReadyCondition(&pod.Status)
	return c != nil && c.Status == v1.ConditionTrue
}

// PodReadyCondition returns the pod's Ready condition, or nil.
func PodReadyCondition(status *v1.PodStatus) *v1.PodCondition {
	for i := range status.Conditions {
		if status.Conditions[i].Type == v1.PodReady {
			return &status.Conditions[i]
		}
	}
	return nil
}

// ShouldPodBeInEndpoints reports whether a pod belongs in an Endpoints or
// EndpointSlice object at all: it is not terminal (Succeeded or Failed),
// it has an IP, and, unless includeTerminating, it is not being deleted.
func ShouldPodBeInEndpoints(pod *v1.Pod, includeTerminating bool) bool {
	if pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
		return false
	}
	if pod.Status.PodIP == "" && len(pod.Status.PodIPs) == 0 {
		return false
	}
	return includeTerminating || pod.DeletionTimestamp == nil
}

// ShouldSetHostname reports whether the endpoint of pod carries its
// hostname: the pod names one and its subdomain is the Service's name in
// the same namespace.
func ShouldSetHostname(pod *v1.Pod, svc *v1.Service) bool {
	return pod.Spec.Hostname != "" && pod.Spec.Subdomain == svc.Name && svc.Namespace == pod.Namespace
}

// FindPort resolves a Service port's targetPort on pod: a number is taken
// as is; a name is looked up among the containers' ports of the same
// protocol, then among those of sidecars (init containers with
// restartPolicy Always). A name no container declares is an error.
func FindPort(pod *v1.Pod, svcPort *v1.ServicePort) (int, error) {
	target := svcPort.TargetPort
	switch target.Type {
	case intstr.Int:
		return target.IntValue(), nil
	case intstr.String:
		if p, ok := namedPort(pod.Spec.Containers, target.StrVal, svcPort.Protocol, false); ok {
			return p, nil
		}
		if p, ok := namedPort(pod.Spec.InitContainers, target.StrVal, svcPort.Protocol, true); ok {
			return p, nil
		}
	}
	return 0, fmt.Errorf("no suitable port for manifest: %s", pod.UID)
}

func namedPort(containers []v1.Container, name string, protocol v1.Protocol, sidecarsOnly bool) (int, bool) {
	for i := range containers {
		c := &containers[i]
		if sidecarsOnly && (c.RestartPolicy == nil || *c.RestartPolicy != v1.ContainerRestartPolicyAlways) {
			continue
		}
		for _, p := range c.Ports {
			if p.Name == name && p.Protocol == protocol {
				return int(p.ContainerPort), true
			}
		}
	}
	return 0, false
}

// podChange says how a pod update may affect endpoints: changed, the pod's
// endpoint may differ (deletion started, readiness, IPs); relabelled, the
// set of Services selecting it may differ (labels, hostname, subdomain).
func podChange(oldPod, newPod *v1.Pod) (changed, relabelled bool) {
	relabelled = !equalStringMaps(oldPod.Labels, newPod.Labels) ||
		oldPod.Spec.Hostname != newPod.Spec.Hostname || oldPod.Spec.Subdomain != newPod.Spec.Subdomain
	// Upstream compares the pointers, which differ on every update of a
	// terminating pod; the value is what the endpoint shows.
	if !oldPod.DeletionTimestamp.Equal(newPod.DeletionTimestamp) {
		return true, relabelled
	}
	if IsPodReady(oldPod) != IsPodReady(newPod) {
		return true, relabelled
	}
	if len(oldPod.Status.PodIPs) != len(newPod.Status.PodIPs) {
		return true, relabelled
	}
	for i := range oldPod.Status.PodIPs {
		if oldPod.Status.PodIPs[i].IP != newPod.Status.PodIPs[i].IP {
			return true, relabelled
		}
	}
	// Name, namespace and UID are immutable; nodeName is set before the
	// pod has an IP.
	return false, relabelled
}

func equalStringMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
