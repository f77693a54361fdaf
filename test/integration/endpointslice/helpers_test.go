// Package endpointslice tests the endpointslice-controller against a real
// kube-apiserver. There is no scheduler, kubelet or garbage collector:
// tests create pods on nodes and write the pod status (IPs, readiness)
// themselves.
package endpointslice

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/kcm-dev/kcm/pkg/controller/endpointslice"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 60 * time.Second

type env struct {
	t      *testing.T
	ctx    context.Context
	client kubernetes.Interface
	ns     string
	// sliceWrites counts the controller's slice creates, updates and
	// deletes in the namespace.
	sliceWrites atomic.Int64
}

// setup creates a namespace and starts the controller through its real
// constructor with maxPerSlice endpoints per slice.
func setup(t *testing.T, maxPerSlice int32) *env {
	t.Helper()
	cfg, ns := framework.Setup(t, "eps-")
	e := &env{t: t, ctx: ns.Ctx, client: ns.Client, ns: ns.Name}
	ctrlCfg := framework.Observed(cfg, func(r *http.Request) {
		if r.Method != http.MethodGet && strings.Contains(r.URL.Path, "/namespaces/"+e.ns+"/endpointslices") {
			e.sliceWrites.Add(1)
		}
	})
	cc := framework.NewControllerContext(t, ctrlCfg)
	cc.Config.EndpointSliceController.ConcurrentServiceEndpointSyncs = 5
	cc.Config.EndpointSliceController.MaxEndpointsPerSlice = maxPerSlice
	framework.StartController(t, cc, framework.NewController(t, cc, names.EndpointSlice, endpointslice.New))
	return e
}

// node creates (or keeps) a ready node in zone with cpu allocatable.
func (e *env) node(name, zone, cpu string) {
	e.t.Helper()
	createNode(e.t, e.client, name, zone, cpu)
}

// createNode creates (or keeps) a ready node in zone with cpu allocatable,
// with or without a controller running.
func createNode(t *testing.T, client kubernetes.Interface, name, zone, cpu string) {
	t.Helper()
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	if zone != "" {
		n.Labels[v1.LabelTopologyZone] = zone
	}
	n.Status.Allocatable = v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}
	n.Status.Capacity = v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}
	framework.CreateNode(t, client, n)
}

func (e *env) service(name string, mutate ...func(*v1.Service)) *v1.Service {
	e.t.Helper()
	s := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec: v1.ServiceSpec{
			Selector: map[string]string{"app": name},
			Ports:    []v1.ServicePort{{Name: "http", Port: 80, Protocol: v1.ProtocolTCP, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	for _, m := range mutate {
		m(s)
	}
	return framework.Create(e.t, e.client.CoreV1().Services(e.ns), s)
}

// pod creates a pod on node and, if ip is set, writes its status: Running
// with that IP, Ready as given.
func (e *env) pod(name, app, node, ip string, ready bool, mutate ...func(*v1.Pod)) *v1.Pod {
	e.t.Helper()
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns, Labels: map[string]string{"app": app}},
		Spec:       v1.PodSpec{NodeName: node, Containers: []v1.Container{{Name: "c", Image: "registry.example/web:1"}}},
	}
	for _, m := range mutate {
		m(p)
	}
	p = framework.Create(e.t, e.client.CoreV1().Pods(e.ns), p)
	if ip != "" {
		p = e.setStatus(p, ip, ready)
	}
	return p
}

func (e *env) setStatus(p *v1.Pod, ip string, ready bool) *v1.Pod {
	e.t.Helper()
	status := v1.ConditionFalse
	if ready {
		status = v1.ConditionTrue
	}
	p.Status.Phase = v1.PodRunning
	p.Status.PodIP = ip
	p.Status.PodIPs = []v1.PodIP{{IP: ip}}
	p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: status, LastTransitionTime: metav1.Now()}}
	p, err := e.client.CoreV1().Pods(e.ns).UpdateStatus(e.ctx, p, metav1.UpdateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

func withNamedPort(name string, port int32) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports, v1.ContainerPort{Name: name, ContainerPort: port, Protocol: v1.ProtocolTCP})
	}
}

// slices returns the Service's slices managed by the controller.
func (e *env) slices(svc string) []discovery.EndpointSlice {
	e.t.Helper()
	list, err := e.client.DiscoveryV1().EndpointSlices(e.ns).List(e.ctx, metav1.ListOptions{
		LabelSelector: discovery.LabelServiceName + "=" + svc + "," + discovery.LabelManagedBy + "=" + endpointslice.ManagedBy,
	})
	if err != nil {
		e.t.Fatal(err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	return list.Items
}

// waitSlices waits until cond holds for the Service's slices.
func (e *env) waitSlices(svc, what string, cond func([]discovery.EndpointSlice) bool) []discovery.EndpointSlice {
	e.t.Helper()
	var got []discovery.EndpointSlice
	framework.Until(e.t, timeout, "slices of "+svc+": "+what, func() (bool, any) {
		got = e.slices(svc)
		return cond(got), describe(got)
	})
	return got
}

// endpointsByName returns every endpoint of the slices by pod name.
func endpointsByName(slices []discovery.EndpointSlice) map[string]discovery.Endpoint {
	out := map[string]discovery.Endpoint{}
	for _, s := range slices {
		for _, ep := range s.Endpoints {
			if ep.TargetRef != nil {
				out[ep.TargetRef.Name] = ep
			}
		}
	}
	return out
}

func describe(slices []discovery.EndpointSlice) string {
	var parts []string
	for _, s := range slices {
		var names []string
		for _, ep := range s.Endpoints {
			n := strings.Join(ep.Addresses, ",")
			if ep.TargetRef != nil {
				n = ep.TargetRef.Name
			}
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				n += "(unready)"
			}
			names = append(names, n)
		}
		var ports []string
		for _, p := range s.Ports {
			ports = append(ports, fmt.Sprint(*p.Port))
		}
		parts = append(parts, fmt.Sprintf("%s[%s ports=%s: %s]", s.Name, s.AddressType, strings.Join(ports, ","), strings.Join(names, " ")))
	}
	return strings.Join(parts, "; ")
}
