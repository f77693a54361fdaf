// Package servicecidr tests the service-cidr-controller against a real
// kube-apiserver, whose allocators create the IPAddresses of Services and
// the default ServiceCIDR "kubernetes".
package servicecidr

import (
	"context"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	networking "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kcm-dev/kcm/pkg/controller/servicecidr"
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
	ns, err := e.client.CoreV1().Namespaces().Create(e.ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "cidr-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.ns = ns.Name
	cc := framework.NewControllerContext(t, cfg)
	c, err := servicecidr.New(context.Background(), cc, names.ServiceCIDR)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if c.Name() != names.ServiceCIDR {
		t.Errorf("Name() = %q", c.Name())
	}
	framework.StartController(t, cc, c)
	return e
}

func (e *env) createCIDR(name string, cidrs ...string) {
	e.t.Helper()
	cidr := &networking.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: networking.ServiceCIDRSpec{CIDRs: cidrs}}
	if _, err := e.client.NetworkingV1().ServiceCIDRs().Create(e.ctx, cidr, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// waitCIDR waits until the ServiceCIDR satisfies ok.
func (e *env) waitCIDR(name, what string, ok func(*networking.ServiceCIDR) bool) {
	e.t.Helper()
	framework.Eventually(e.t, timeout, func() (bool, error) {
		cidr, err := e.client.NetworkingV1().ServiceCIDRs().Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return ok(cidr), nil
	})
}

func (e *env) waitGone(name string) {
	e.t.Helper()
	framework.Eventually(e.t, timeout, func() (bool, error) {
		_, err := e.client.NetworkingV1().ServiceCIDRs().Get(e.ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

func (e *env) deleteCIDR(name string) {
	e.t.Helper()
	if err := e.client.NetworkingV1().ServiceCIDRs().Delete(e.ctx, name, metav1.DeleteOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// service creates a ClusterIP Service with the given IP.
func (e *env) service(name, ip string) {
	e.t.Helper()
	svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns}, Spec: v1.ServiceSpec{
		ClusterIP: ip, Ports: []v1.ServicePort{{Port: 80, Protocol: v1.ProtocolTCP}},
	}}
	// The allocator takes the new range once it has seen it Ready.
	framework.Eventually(e.t, timeout, func() (bool, error) {
		_, err := e.client.CoreV1().Services(e.ns).Create(e.ctx, svc, metav1.CreateOptions{})
		return err == nil, nil
	})
}

func ready(cidr *networking.ServiceCIDR) bool {
	c := apimeta.FindStatusCondition(cidr.Status.Conditions, networking.ServiceCIDRConditionReady)
	return slices.Contains(cidr.Finalizers, servicecidr.Finalizer) && c != nil &&
		c.Status == metav1.ConditionTrue && c.Message == "Kubernetes Service CIDR is ready"
}

func blocked(cidr *networking.ServiceCIDR) bool {
	c := apimeta.FindStatusCondition(cidr.Status.Conditions, networking.ServiceCIDRConditionReady)
	return cidr.DeletionTimestamp != nil && slices.Contains(cidr.Finalizers, servicecidr.Finalizer) && c != nil &&
		c.Status == metav1.ConditionFalse && c.Reason == networking.ServiceCIDRReasonTerminating &&
		c.Message == "There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new ServiceCIDR"
}

// TestDefaultServiceCIDR: the kube-apiserver's default ServiceCIDR gets the
// finalizer and the controller's Ready message.
func TestDefaultServiceCIDR(t *testing.T) {
	e := setup(t)
	e.waitCIDR("kubernetes", "finalizer and Ready", ready)
}

// TestDeletionBlockedByAddress: a ServiceCIDR holding a Service's address
// stays, Ready=False Terminating, until the Service goes; then it goes,
// no sooner than ten seconds after its deletion.
func TestDeletionBlockedByAddress(t *testing.T) {
	e := setup(t)
	e.createCIDR("extra", "10.100.0.0/24")
	e.waitCIDR("extra", "ready", ready)
	e.service("web", "10.100.0.10")
	framework.Eventually(t, timeout, func() (bool, error) {
		_, err := e.client.NetworkingV1().IPAddresses().Get(e.ctx, "10.100.0.10", metav1.GetOptions{})
		return err == nil, nil
	})

	e.deleteCIDR("extra")
	e.waitCIDR("extra", "blocked", blocked)
	framework.Consistently(t, 3*time.Second, "still blocked", func() bool {
		cidr, err := e.client.NetworkingV1().ServiceCIDRs().Get(e.ctx, "extra", metav1.GetOptions{})
		return err == nil && blocked(cidr)
	})

	if err := e.client.CoreV1().Services(e.ns).Delete(e.ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitGone("extra")
}

// TestDeletionWithoutAddresses: an unused ServiceCIDR goes after the grace
// period; so does one whose addresses another ServiceCIDR contains.
func TestDeletionWithoutAddresses(t *testing.T) {
	e := setup(t)
	e.createCIDR("empty", "10.101.0.0/24")
	e.createCIDR("parent", "10.102.0.0/16")
	e.createCIDR("child", "10.102.1.0/24")
	e.waitCIDR("empty", "ready", ready)
	e.waitCIDR("parent", "ready", ready)
	e.waitCIDR("child", "ready", ready)
	e.service("in-child", "10.102.1.5")

	start := time.Now()
	e.deleteCIDR("empty")
	e.deleteCIDR("child")
	e.waitGone("empty")
	e.waitGone("child")
	// Whole seconds: the deletion timestamp is truncated to the second.
	if d := time.Since(start); d < 9*time.Second {
		t.Errorf("gone after %v, want the 10s grace period", d)
	}
	e.waitCIDR("parent", "still ready", ready)
}
