// Package endpointslicemirroring tests the
// endpointslice-mirroring-controller against a real kube-apiserver. There
// is no garbage collector: slices go only when the controller deletes them.
package endpointslicemirroring

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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kcm-dev/kcm/pkg/controller/endpointslicemirroring"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 60 * time.Second

type env struct {
	t      *testing.T
	ctx    context.Context
	client kubernetes.Interface
	ns     string
	// writes counts the controller's slice creates, updates and deletes
	// in the namespace, attempted or not.
	writes atomic.Int64
}

// setup creates a namespace and starts the controller through its real
// constructor with maxPerSubset addresses mirrored per subset.
func setup(t *testing.T, maxPerSubset int32) *env {
	t.Helper()
	cfg, ns := framework.Setup(t, "mirror-")
	e := &env{t: t, ctx: ns.Ctx, client: ns.Client, ns: ns.Name}
	ctrlCfg := framework.Observed(cfg, func(r *http.Request) {
		if r.Method != http.MethodGet && strings.Contains(r.URL.Path, "/namespaces/"+e.ns+"/endpointslices") {
			e.writes.Add(1)
		}
	})
	cc := framework.NewControllerContext(t, ctrlCfg)
	cc.Config.EndpointSliceMirroringController.MirroringConcurrentServiceEndpointSyncs = 5
	cc.Config.EndpointSliceMirroringController.MirroringMaxEndpointsPerSubset = maxPerSubset
	framework.StartController(t, cc, framework.NewController(t, cc, names.EndpointSliceMirroring, endpointslicemirroring.New))
	return e
}

// service creates a Service without a selector.
func (e *env) service(name string) *v1.Service {
	e.t.Helper()
	s := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec:       v1.ServiceSpec{Ports: []v1.ServicePort{{Name: "http", Port: 80, Protocol: v1.ProtocolTCP}}},
	}
	return framework.Create(e.t, e.client.CoreV1().Services(e.ns), s)
}

func (e *env) createEndpoints(ep *v1.Endpoints) *v1.Endpoints {
	e.t.Helper()
	ep.Namespace = e.ns
	return framework.Create(e.t, e.client.CoreV1().Endpoints(e.ns), ep)
}

// updateEndpoints reads the Endpoints, changes it and writes it back.
func (e *env) updateEndpoints(name string, change func(*v1.Endpoints)) {
	e.t.Helper()
	ep, err := e.client.CoreV1().Endpoints(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	change(ep)
	if _, err := e.client.CoreV1().Endpoints(e.ns).Update(e.ctx, ep, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// slices returns the mirrored slices of a Service, by address type.
func (e *env) slices(svc string) ([]discovery.EndpointSlice, error) {
	list, err := e.client.DiscoveryV1().EndpointSlices(e.ns).List(e.ctx, metav1.ListOptions{
		LabelSelector: discovery.LabelServiceName + "=" + svc + "," + discovery.LabelManagedBy + "=" + endpointslicemirroring.ControllerName,
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].AddressType < list.Items[j].AddressType })
	return list.Items, nil
}

// waitSlices waits until the Service's mirrored slices satisfy ok.
func (e *env) waitSlices(svc, what string, ok func([]discovery.EndpointSlice) bool) []discovery.EndpointSlice {
	e.t.Helper()
	var got []discovery.EndpointSlice
	framework.Until(e.t, timeout, what+": slices of "+svc, func() (bool, any) {
		var err error
		if got, err = e.slices(svc); err != nil {
			return false, err
		}
		return ok(got), describe(got)
	})
	return got
}

// settle waits until no slice write has been made for a second and
// returns how many the controller made since the last call.
func (e *env) settle(since *int64) int64 {
	e.t.Helper()
	last := framework.WaitQuiet(e.t, timeout, time.Second, e.writes.Load)
	n := last - *since
	*since = last
	return n
}

// addresses renders a slice's endpoints: addresses, "!" when not ready.
func addresses(s discovery.EndpointSlice) string {
	var out []string
	for _, ep := range s.Endpoints {
		a := strings.Join(ep.Addresses, ",")
		if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
			a += "!"
		}
		out = append(out, a)
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func describe(slices []discovery.EndpointSlice) string {
	var out []string
	for _, s := range slices {
		out = append(out, fmt.Sprintf("%s %s [%s]", s.Name, s.AddressType, addresses(s)))
	}
	return strings.Join(out, "; ")
}

func ips(prefix string, n int) []v1.EndpointAddress {
	out := make([]v1.EndpointAddress, n)
	for i := range out {
		out[i] = v1.EndpointAddress{IP: fmt.Sprintf("%s.%d.%d", prefix, i/250, i%250+1)}
	}
	return out
}

// events returns the "reason: message" of the Events on an object.
func (e *env) events(kind, name string) ([]string, error) {
	list, err := e.client.CoreV1().Events(e.ns).List(e.ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.kind=" + kind + ",involvedObject.name=" + name,
	})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, ev := range list.Items {
		if ev.Source.Component == endpointslicemirroring.EventComponent {
			out = append(out, ev.Reason+": "+ev.Message)
		}
	}
	sort.Strings(out)
	return out, nil
}
