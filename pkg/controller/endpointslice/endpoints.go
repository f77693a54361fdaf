package endpointslice

import (
	"sort"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	utilnet "k8s.io/utils/net"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/internal/controller/endpointutil"
	"github.com/kcm-dev/kcm/internal/controller/podcontrol"
)

// podToEndpoint is the endpoint of pod in a slice of addressType. Ready is
// never true for a terminating pod unless the Service publishes not-ready
// addresses; serving follows the pod's Ready condition.
func podToEndpoint(pod *v1.Pod, node *v1.Node, svc *v1.Service, addressType discovery.AddressType) discovery.Endpoint {
	serving := endpointutil.IsPodReady(pod)
	terminating := pod.DeletionTimestamp != nil
	ready := svc.Spec.PublishNotReadyAddresses || (serving && !terminating)
	ep := discovery.Endpoint{
		Addresses: podAddresses(pod, addressType),
		Conditions: discovery.EndpointConditions{
			Ready:       &ready,
			Serving:     &serving,
			Terminating: &terminating,
		},
		TargetRef: &v1.ObjectReference{
			Kind:      "Pod",
			Namespace: pod.Namespace,
			Name:      pod.Name,
			UID:       pod.UID,
		},
	}
	if pod.Spec.NodeName != "" {
		ep.NodeName = ptr.To(pod.Spec.NodeName)
	}
	if node != nil && node.Labels[v1.LabelTopologyZone] != "" {
		ep.Zone = ptr.To(node.Labels[v1.LabelTopologyZone])
	}
	if endpointutil.ShouldSetHostname(pod, svc) {
		ep.Hostname = ptr.To(pod.Spec.Hostname)
	}
	return ep
}

// podAddresses returns the pod's IPs of addressType, re-formatted
// canonically (an irregular form such as a zero-padded IPv4 is accepted).
func podAddresses(pod *v1.Pod, addressType discovery.AddressType) []string {
	out := []string{}
	for _, podIP := range pod.Status.PodIPs {
		ip := utilnet.ParseIPSloppy(podIP.IP)
		if utilnet.IsIPv6(ip) == (addressType == discovery.AddressTypeIPv6) {
			out = append(out, ip.String())
		}
	}
	return out
}

// endpointPorts resolves the Service's ports on pod. A port whose named
// targetPort the pod does not declare is left out (logged at V(4)); a
// headless Service may have no ports at all.
func endpointPorts(logger klog.Logger, svc *v1.Service, pod *v1.Pod) []discovery.EndpointPort {
	ports := []discovery.EndpointPort{}
	if len(svc.Spec.Ports) == 0 && svc.Spec.ClusterIP == v1.ClusterIPNone {
		return ports
	}
	for i := range svc.Spec.Ports {
		sp := &svc.Spec.Ports[i]
		num, err := endpointutil.FindPort(pod, sp)
		if err != nil {
			logger.V(4).Info("Failed to find port for service", "service", klog.KObj(svc), "err", err)
			continue
		}
		ports = append(ports, discovery.EndpointPort{
			Name:        ptr.To(sp.Name),
			Port:        ptr.To(int32(num)),
			Protocol:    ptr.To(sp.Protocol),
			AppProtocol: sp.AppProtocol,
		})
	}
	return ports
}

// portsKey identifies a set of ports whatever their order: slices are
// grouped by it (upstream hashes the ports sorted by their hashes; any
// injective canonical form groups the same way).
func portsKey(ports []discovery.EndpointPort) string {
	parts := make([]string, len(ports))
	for i, p := range ports {
		parts[i] = optString(p.Name) + "\x00" + optString((*string)(p.Protocol)) + "\x00" + optInt(p.Port) + "\x00" + optString(p.AppProtocol)
	}
	sort.Strings(parts)
	return strings.Join(parts, "\x01")
}

func optString(s *string) string {
	if s == nil {
		return "-"
	}
	return "=" + *s
}

func optInt(i *int32) string {
	if i == nil {
		return "-"
	}
	return strconv.Itoa(int(*i))
}

// sortPortsByHash orders ports as upstream leaves them in a slice it
// creates: by the deep hash of each port.
func sortPortsByHash(ports []discovery.EndpointPort) []discovery.EndpointPort {
	type hashed struct {
		hash string
		port discovery.EndpointPort
	}
	hs := make([]hashed, len(ports))
	for i, p := range ports {
		hs[i] = hashed{endpointutil.DeepHashString(p), p}
	}
	sort.SliceStable(hs, func(i, j int) bool { return hs[i].hash < hs[j].hash })
	out := make([]discovery.EndpointPort, len(ports))
	for i, h := range hs {
		out[i] = h.port
	}
	return out
}

// newSlice returns a slice to create for the Service: generateName
// "<service>-", the Service's labels, and a controller reference to it.
func newSlice(logger klog.Logger, svc *v1.Service, ports []discovery.EndpointPort, addressType discovery.AddressType, manager string) *discovery.EndpointSlice {
	ref := metav1.NewControllerRef(svc, v1.SchemeGroupVersion.WithKind("Service"))
	s := &discovery.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    podcontrol.GenerateNamePrefix(svc.Name),
			Namespace:       svc.Namespace,
			OwnerReferences: []metav1.OwnerReference{*ref},
		},
		Ports:       ports,
		AddressType: addressType,
		Endpoints:   []discovery.Endpoint{},
	}
	s.Labels, _ = sliceLabels(logger, s, svc, manager)
	return s
}

// reservedLabels are the slice labels the controller owns; a Service's own
// labels of these keys are not copied.
var reservedLabels = sets.New(discovery.LabelServiceName, discovery.LabelManagedBy, v1.IsHeadlessService)

// sliceLabels returns the labels the slice should carry, the Service's
// labels plus the reserved ones, and whether the non-reserved ones differ
// from the slice's current ones.
func sliceLabels(logger klog.Logger, slice *discovery.EndpointSlice, svc *v1.Service, manager string) (map[string]string, bool) {
	have := map[string]string{}
	for k, v := range slice.Labels {
		if !reservedLabels.Has(k) {
			have[k] = v
		}
	}
	want := map[string]string{}
	for k, v := range svc.Labels {
		if reservedLabels.Has(k) {
			logger.Info("Service using reserved endpoint slices label", "service", klog.KObj(svc), "skipping", k, "label", v)
			continue
		}
		want[k] = v
	}
	changed := !equalLabels(have, want)
	if !serviceIPSet(svc) {
		want[v1.IsHeadlessService] = ""
	}
	want[discovery.LabelServiceName] = svc.Name
	want[discovery.LabelManagedBy] = manager
	return want, changed
}

func equalLabels(a, b map[string]string) bool {
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

// serviceIPSet reports whether the Service has a cluster IP (is not
// headless).
func serviceIPSet(svc *v1.Service) bool {
	return svc.Spec.ClusterIP != v1.ClusterIPNone && svc.Spec.ClusterIP != ""
}

// ownedBy reports whether the slice's owner references name the Service.
func ownedBy(slice *discovery.EndpointSlice, svc *v1.Service) bool {
	for _, o := range slice.OwnerReferences {
		if o.UID == svc.UID && o.Kind == "Service" && o.APIVersion == "v1" {
			return true
		}
	}
	return false
}

// addressTypes returns the address types of the Service's slices, in the
// order of its IP families. A Service without families (written through an
// apiserver older than dual-stack) gets its cluster IP's family, or both
// when headless.
func addressTypes(logger klog.Logger, svc *v1.Service) []discovery.AddressType {
	var out []discovery.AddressType
	for _, f := range svc.Spec.IPFamilies {
		t := discovery.AddressTypeIPv4
		if f == v1.IPv6Protocol {
			t = discovery.AddressTypeIPv6
		} else if f != v1.IPv4Protocol {
			continue
		}
		if !containsType(out, t) {
			out = append(out, t)
		}
	}
	if len(out) > 0 {
		return out
	}
	if serviceIPSet(svc) {
		t := discovery.AddressTypeIPv4
		if utilnet.IsIPv6String(svc.Spec.ClusterIP) {
			t = discovery.AddressTypeIPv6
		}
		logger.V(2).Info("Couldn't find ipfamilies for service. This could happen if controller manager is connected to an old apiserver that does not support ip families yet. EndpointSlices for this Service will use addressType as the IP Family based on familyOf(ClusterIP).", "service", klog.KObj(svc), "addressType", t, "clusterIP", svc.Spec.ClusterIP)
		return []discovery.AddressType{t}
	}
	logger.V(2).Info("Couldn't find ipfamilies for headless service, likely because controller manager is likely connected to an old apiserver that does not support ip families yet. The service endpoint slice will use dual stack families until api-server default it correctly", "service", klog.KObj(svc))
	return []discovery.AddressType{discovery.AddressTypeIPv4, discovery.AddressTypeIPv6}
}

func containsType(ts []discovery.AddressType, t discovery.AddressType) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}
