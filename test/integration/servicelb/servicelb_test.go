// Package servicelb tests the service-lb-controller with the local cloud
// provider against a real kube-apiserver: addresses from the pool in
// status, kept across a restart of the controller, released when the
// Service goes, an exhausted pool reported by Events with backoff, the
// cleanup finalizer, loadBalancerClass left alone, and node set changes.
package servicelb

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2/ktesting"

	"github.com/kcm-dev/kcm/pkg/cloudcontrollers"
	"github.com/kcm-dev/kcm/pkg/cloudprovider/local"
	"github.com/kcm-dev/kcm/pkg/controller/servicelb"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 60 * time.Second

type env struct {
	t      *testing.T
	ctx    context.Context
	cfg    *rest.Config
	client kubernetes.Interface
	ns     string
	pool   []string
}

func setup(t *testing.T, pool ...string) *env {
	t.Helper()
	cfg := framework.StartEnv(t)
	e := &env{t: t, ctx: context.Background(), cfg: cfg, client: kubernetes.NewForConfigOrDie(cfg), pool: pool}
	ns, err := e.client.CoreV1().Namespaces().Create(e.ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "lb-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.ns = ns.Name
	// The control plane is shared by the package's tests, and every
	// controller sees every Service: leave none behind. This runs after
	// the test's controllers stopped (cleanups run last-in first-out).
	t.Cleanup(func() {
		ctx := context.Background()
		list, err := e.client.CoreV1().Services(e.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Error(err)
			return
		}
		for _, svc := range list.Items {
			if len(svc.Finalizers) > 0 {
				svc.Finalizers = nil
				if _, err := e.client.CoreV1().Services(e.ns).Update(ctx, &svc, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
					t.Error(err)
				}
			}
			if err := e.client.CoreV1().Services(e.ns).Delete(ctx, svc.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Error(err)
			}
		}
	})
	return e
}

// start runs a fresh provider and controller, as a restarted controller
// manager would; the returned function stops them.
func (e *env) start() (stop func()) {
	e.t.Helper()
	cloud, err := local.New(local.Config{LoadBalancerCIDRs: e.pool})
	if err != nil {
		e.t.Fatal(err)
	}
	_, ctx := ktesting.NewTestContext(e.t)
	cc := framework.NewControllerContext(e.t, e.cfg)
	if err := cloudcontrollers.Attach(ctx, cc, cloud); err != nil {
		e.t.Fatal(err)
	}
	c, err := servicelb.New(ctx, cc, cloudcontrollers.ServiceLB)
	if err != nil || c == nil {
		e.t.Fatalf("New: %v, %v", c, err)
	}
	return framework.StartController(e.t, cc, c)
}

func (e *env) createService(name string, mutate ...func(*v1.Service)) *v1.Service {
	e.t.Helper()
	svc := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.ServiceSpec{
			Type:     v1.ServiceTypeLoadBalancer,
			Selector: map[string]string{"app": name},
			Ports:    []v1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: v1.ProtocolTCP}},
		},
	}
	for _, m := range mutate {
		m(svc)
	}
	out, err := e.client.CoreV1().Services(e.ns).Create(e.ctx, svc, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

func (e *env) createNode(name string, labels map[string]string) {
	e.t.Helper()
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if _, err := e.client.CoreV1().Nodes().Create(e.ctx, n, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = e.client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

func (e *env) get(name string) (*v1.Service, error) {
	return e.client.CoreV1().Services(e.ns).Get(e.ctx, name, metav1.GetOptions{})
}

func ingressIPs(svc *v1.Service) string {
	var ips []string
	for _, ing := range svc.Status.LoadBalancer.Ingress {
		ips = append(ips, ing.IP)
	}
	return strings.Join(ips, ",")
}

// waitAddress waits until the Service's status shows exactly want (comma
// separated) and returns the Service.
func (e *env) waitAddress(name, want string) *v1.Service {
	e.t.Helper()
	var svc *v1.Service
	framework.Eventually(e.t, timeout, func() (bool, error) {
		var err error
		svc, err = e.get(name)
		if err != nil {
			return false, err
		}
		return ingressIPs(svc) == want, nil
	})
	return svc
}

func (e *env) waitGone(name string) {
	e.t.Helper()
	framework.Eventually(e.t, timeout, func() (bool, error) {
		_, err := e.get(name)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// events returns reason → count of the Events about the named Service.
func (e *env) events(name string) (map[string]int32, map[string]string) {
	e.t.Helper()
	list, err := e.client.CoreV1().Events(e.ns).List(e.ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		e.t.Fatal(err)
	}
	counts, messages := map[string]int32{}, map[string]string{}
	for _, ev := range list.Items {
		// The apiserver's own controllers record on Services too (the
		// ClusterIP repair loop's ClusterIPNotAllocated when a Service is
		// deleted while it runs): not this controller's.
		if ev.ReportingController != "" && ev.ReportingController != servicelb.EventSource {
			continue
		}
		if ev.Source.Component != servicelb.EventSource {
			e.t.Errorf("Event %s from %q, want %q", ev.Reason, ev.Source.Component, servicelb.EventSource)
		}
		n := ev.Count
		if n == 0 {
			n = 1
		}
		counts[ev.Reason] += n
		messages[ev.Reason] = ev.Message
	}
	return counts, messages
}

func (e *env) waitEvent(name, reason string) string {
	e.t.Helper()
	var msg string
	framework.Eventually(e.t, timeout, func() (bool, error) {
		counts, messages := e.events(name)
		msg = messages[reason]
		return counts[reason] > 0, nil
	})
	return msg
}

func hasFinalizer(svc *v1.Service) bool {
	for _, f := range svc.Finalizers {
		if f == servicelb.Finalizer {
			return true
		}
	}
	return false
}

func TestAddressFromPoolReleasedOnDeletion(t *testing.T) {
	e := setup(t, "10.200.0.0/30")
	e.createNode("lb-node-a", nil)
	e.start()

	e.createService("web")
	svc := e.waitAddress("web", "10.200.0.1")
	if !hasFinalizer(svc) {
		t.Errorf("finalizers = %v, want %s", svc.Finalizers, servicelb.Finalizer)
	}
	if m := svc.Status.LoadBalancer.Ingress[0].IPMode; m == nil || *m != v1.LoadBalancerIPModeVIP {
		t.Errorf("ipMode = %v, want VIP", m)
	}
	e.waitEvent("web", "EnsuredLoadBalancer")
	counts, messages := e.events("web")
	if counts["EnsuringLoadBalancer"] == 0 || messages["EnsuredLoadBalancer"] != "Ensured load balancer" {
		t.Errorf("Events = %v %v", counts, messages)
	}

	// A second Service gets the next address.
	e.createService("api")
	e.waitAddress("api", "10.200.0.2")

	// Deleting the first runs the cleanup and frees its address for a
	// new Service.
	if err := e.client.CoreV1().Services(e.ns).Delete(e.ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitGone("web")
	if got := e.waitEvent("web", "DeletedLoadBalancer"); got != "Deleted load balancer" {
		t.Errorf("DeletedLoadBalancer message %q", got)
	}
	e.createService("next")
	e.waitAddress("next", "10.200.0.1")
}

func TestAddressKeptAcrossRestart(t *testing.T) {
	e := setup(t, "10.201.0.0/29")
	e.createNode("lb-node-b", nil)
	stop := e.start()
	e.createService("first")
	e.createService("second")
	e.waitAddress("first", "10.201.0.1")
	e.waitAddress("second", "10.201.0.2")
	// Delete the first so that the lowest free address is no longer the
	// next one: a restarted provider that forgot what is taken would
	// hand out .2 again.
	if err := e.client.CoreV1().Services(e.ns).Delete(e.ctx, "first", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitGone("first")
	stop()

	// While no controller runs, two new Services appear.
	e.createService("third")
	e.createService("fourth")
	e.start()
	e.waitAddress("second", "10.201.0.2")
	third, fourth := e.waitAny("third"), e.waitAny("fourth")
	got := map[string]bool{third: true, fourth: true}
	if !got["10.201.0.1"] || !got["10.201.0.3"] {
		t.Errorf("after restart: third=%s fourth=%s, want .1 and .3 in some order", third, fourth)
	}
	// The Service that kept its address is not rewritten.
	framework.Consistently(t, 2*time.Second, "second keeps 10.201.0.2", func() bool {
		svc, err := e.get("second")
		return err == nil && ingressIPs(svc) == "10.201.0.2"
	})
}

// waitAny waits until the Service has an address and returns it.
func (e *env) waitAny(name string) string {
	e.t.Helper()
	var ips string
	framework.Eventually(e.t, timeout, func() (bool, error) {
		svc, err := e.get(name)
		if err != nil {
			return false, err
		}
		ips = ingressIPs(svc)
		return ips != "", nil
	})
	return ips
}

func TestExhaustedPool(t *testing.T) {
	e := setup(t, "10.202.0.0/30") // two usable addresses
	e.createNode("lb-node-c", nil)
	e.start()
	e.createService("a")
	e.waitAddress("a", "10.202.0.1")
	e.createService("b")
	e.waitAddress("b", "10.202.0.2")
	e.createService("c")
	msg := e.waitEvent("c", "SyncLoadBalancerFailed")
	want := "Error syncing load balancer: failed to ensure load balancer: local: no free address in load-balancer pool 10.202.0.0/30"
	if msg != want {
		t.Errorf("SyncLoadBalancerFailed message\n %q, want\n %q", msg, want)
	}
	// Retries back off from 5s: within 8s of the first failure, at most
	// two more attempts.
	framework.Consistently(t, 8*time.Second, "at most 3 SyncLoadBalancerFailed Events", func() bool {
		counts, _ := e.events("c")
		return counts["SyncLoadBalancerFailed"] <= 3
	})
	svc, err := e.get("c")
	if err != nil {
		t.Fatal(err)
	}
	if ingressIPs(svc) != "" || !hasFinalizer(svc) {
		t.Errorf("c: ingress %q finalizers %v, want none and the finalizer", ingressIPs(svc), svc.Finalizers)
	}
	// Freeing an address lets the waiting Service have it on a retry.
	if err := e.client.CoreV1().Services(e.ns).Delete(e.ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitAddress("c", "10.202.0.1")
}

func TestClassAndTypeChanges(t *testing.T) {
	e := setup(t, "10.203.0.0/29")
	e.createNode("lb-node-d", nil)
	e.start()
	class := "example.com/other-lb"
	e.createService("classy", func(s *v1.Service) { s.Spec.LoadBalancerClass = &class })
	e.createService("plain", func(s *v1.Service) { s.Spec.Type = v1.ServiceTypeClusterIP })
	e.createService("lb")
	e.waitAddress("lb", "10.203.0.1")
	// Services are handled in any order; by now the others had their
	// chance, and get nothing.
	framework.Consistently(t, 2*time.Second, "classy and plain are left alone", func() bool {
		for _, name := range []string{"classy", "plain"} {
			svc, err := e.get(name)
			if err != nil || hasFinalizer(svc) || ingressIPs(svc) != "" {
				return false
			}
		}
		return true
	})
	if counts, _ := e.events("classy"); len(counts) != 0 {
		t.Errorf("Events on a Service with a loadBalancerClass: %v", counts)
	}

	// Type LoadBalancer → ClusterIP: the load balancer is deleted, the
	// finalizer and the status go, and the address is free again.
	svc, err := e.get("lb")
	if err != nil {
		t.Fatal(err)
	}
	svc.Spec.Type = v1.ServiceTypeClusterIP
	for i := range svc.Spec.Ports {
		svc.Spec.Ports[i].NodePort = 0
	}
	if _, err := e.client.CoreV1().Services(e.ns).Update(e.ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, timeout, func() (bool, error) {
		svc, err := e.get("lb")
		if err != nil {
			return false, err
		}
		return !hasFinalizer(svc) && ingressIPs(svc) == "", nil
	})
	e.waitEvent("lb", "DeletingLoadBalancer")
	e.createService("again")
	e.waitAddress("again", "10.203.0.1")
}

func TestNodeSetChanges(t *testing.T) {
	e := setup(t, "10.204.0.0/29")
	e.start()
	e.createService("svc")
	e.waitAddress("svc", "10.204.0.1")
	// No node at all: upstream warns.
	if got := e.waitEvent("svc", "UnAvailableLoadBalancer"); got != "There are no available nodes for LoadBalancer" {
		t.Errorf("UnAvailableLoadBalancer message %q", got)
	}
	e.createNode("lb-node-e", nil)
	e.waitEvent("svc", "UpdatedLoadBalancer")

	// Excluding the only node empties the set again: a second warning.
	n, err := e.client.CoreV1().Nodes().Get(e.ctx, "lb-node-e", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Labels = map[string]string{v1.LabelNodeExcludeBalancers: "true"}
	if _, err := e.client.CoreV1().Nodes().Update(e.ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, timeout, func() (bool, error) {
		counts, _ := e.events("svc")
		return counts["UnAvailableLoadBalancer"] >= 2, nil
	})
	counts, _ := e.events("svc")
	if counts["UpdatedLoadBalancer"] != 1 {
		t.Errorf("UpdatedLoadBalancer count %d, want 1 (%v)", counts["UpdatedLoadBalancer"], counts)
	}
}
