// Package endpoints tests the endpoints-controller against a real
// kube-apiserver. There is no scheduler or kubelet: tests create pods on a
// node name and write the pod status (IPs, readiness) themselves.
package endpoints

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controller/endpoints"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 60 * time.Second

type env struct {
	t      *testing.T
	ctx    context.Context
	client kubernetes.Interface
	ns     string
}

func setup(t *testing.T) *env {
	t.Helper()
	cfg := framework.StartEnv(t)
	e := &env{t: t, ctx: context.Background(), client: kubernetes.NewForConfigOrDie(cfg)}
	ns, err := e.client.CoreV1().Namespaces().Create(e.ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "ep-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.ns = ns.Name
	cc := framework.NewControllerContext(t, cfg)
	cc.Config.EndpointController.ConcurrentEndpointSyncs = 5
	c, err := endpoints.New(context.Background(), cc, names.Endpoints)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	framework.StartController(t, cc, c)
	return e
}

func (e *env) service(name string, mutate ...func(*v1.Service)) {
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
	if _, err := e.client.CoreV1().Services(e.ns).Create(e.ctx, s, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// pod creates a pod bound to node-a with ip and the readiness given.
func (e *env) pod(name, app, ip string, ready bool, mutate ...func(*v1.Pod)) {
	e.t.Helper()
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns, Labels: map[string]string{"app": app}},
		Spec:       v1.PodSpec{NodeName: "node-a", Containers: []v1.Container{{Name: "c", Image: "registry.example/web:1"}}},
	}
	for _, m := range mutate {
		m(p)
	}
	p, err := e.client.CoreV1().Pods(e.ns).Create(e.ctx, p, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	status := v1.ConditionFalse
	if ready {
		status = v1.ConditionTrue
	}
	p.Status = v1.PodStatus{
		Phase: v1.PodRunning, PodIP: ip, PodIPs: []v1.PodIP{{IP: ip}},
		Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: status, LastTransitionTime: metav1.Now()}},
	}
	if _, err := e.client.CoreV1().Pods(e.ns).UpdateStatus(e.ctx, p, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) waitEndpoints(name, what string, cond func(*v1.Endpoints) bool) *v1.Endpoints {
	e.t.Helper()
	var got *v1.Endpoints
	framework.Eventually(e.t, timeout, func() (bool, error) {
		ep, err := e.client.CoreV1().Endpoints(e.ns).Get(e.ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		got = ep
		return cond(ep), nil
	})
	if got == nil {
		e.t.Fatalf("Endpoints %s: %s", name, what)
	}
	return got
}

func podNames(addrs []v1.EndpointAddress) []string {
	var out []string
	for _, a := range addrs {
		out = append(out, a.TargetRef.Name)
	}
	sort.Strings(out)
	return out
}

func TestEndpointsFollowPods(t *testing.T) {
	e := setup(t)
	e.service("web", func(s *v1.Service) { s.Labels = map[string]string{"team": "a"} })
	e.pod("a", "web", "10.0.0.1", true)
	e.pod("b", "web", "10.0.0.2", false)
	ep := e.waitEndpoints("web", "a ready, b not", func(ep *v1.Endpoints) bool {
		return len(ep.Subsets) == 1 && reflect.DeepEqual(podNames(ep.Subsets[0].Addresses), []string{"a"}) &&
			reflect.DeepEqual(podNames(ep.Subsets[0].NotReadyAddresses), []string{"b"})
	})
	if want := map[string]string{"team": "a", endpoints.LabelManagedBy: endpoints.ControllerName}; !reflect.DeepEqual(ep.Labels, want) {
		t.Errorf("labels %v", ep.Labels)
	}
	if _, ok := ep.Annotations[v1.EndpointsLastChangeTriggerTime]; !ok {
		t.Errorf("annotations %v", ep.Annotations)
	}
	if p := ep.Subsets[0].Ports; len(p) != 1 || p[0].Port != 8080 || p[0].Name != "http" {
		t.Errorf("ports %+v", p)
	}

	// Deleted behind the controller's back: recreated.
	if err := e.client.CoreV1().Endpoints(e.ns).Delete(e.ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitEndpoints("web", "recreated", func(got *v1.Endpoints) bool { return got.UID != ep.UID && len(got.Subsets) == 1 })

	// The Service goes, and so does its Endpoints object.
	if err := e.client.CoreV1().Services(e.ns).Delete(e.ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, timeout, func() (bool, error) {
		_, err := e.client.CoreV1().Endpoints(e.ns).Get(e.ctx, "web", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

func TestHeadlessPublishNotReady(t *testing.T) {
	e := setup(t)
	e.service("db", func(s *v1.Service) {
		s.Spec.ClusterIP = v1.ClusterIPNone
		s.Spec.Ports = nil
		s.Spec.PublishNotReadyAddresses = true
	})
	e.pod("db-0", "db", "10.0.0.1", false, func(p *v1.Pod) { p.Spec.Hostname, p.Spec.Subdomain = "db-0", "db" })
	ep := e.waitEndpoints("db", "db-0 ready (tolerated)", func(ep *v1.Endpoints) bool {
		return len(ep.Subsets) == 1 && len(ep.Subsets[0].Addresses) == 1
	})
	if a := ep.Subsets[0].Addresses[0]; a.Hostname != "db-0" || ep.Subsets[0].Ports != nil {
		t.Errorf("subset %+v", ep.Subsets[0])
	}
	if _, ok := ep.Labels[v1.IsHeadlessService]; !ok {
		t.Errorf("labels %v", ep.Labels)
	}
}

func TestOverCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("1,001 pods")
	}
	e := setup(t)
	e.service("big")
	const n = 1001
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			e.pod(fmt.Sprintf("p%04d", i), "big", fmt.Sprintf("10.1.%d.%d", i/250, i%250+1), true)
		}()
	}
	wg.Wait()
	ep := e.waitEndpoints("big", "truncated", func(ep *v1.Endpoints) bool {
		return ep.Annotations[v1.EndpointsOverCapacity] == "truncated"
	})
	if got := len(ep.Subsets[0].Addresses); got != 1000 {
		t.Errorf("%d addresses", got)
	}
	for _, name := range []string{"p0000", "p0001"} {
		if err := e.client.CoreV1().Pods(e.ns).Delete(e.ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
			t.Fatal(err)
		}
	}
	e.waitEndpoints("big", "back under capacity", func(ep *v1.Endpoints) bool {
		_, over := ep.Annotations[v1.EndpointsOverCapacity]
		return !over && len(ep.Subsets) == 1 && len(ep.Subsets[0].Addresses) == 999
	})
}
