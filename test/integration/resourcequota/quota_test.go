package resourcequota

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

// Quota admission ignores a quota until the controller wrote its status;
// then the controller counts what exists, admission charges creations
// itself and refuses those over the limit, and a deletion frees its share
// at once (the controller's replenishment).
func TestAdmissionAndReplenishment(t *testing.T) {
	e := newEnv(t)
	ns := e.namespace()
	e.createQuota(ns, "compute", rl("pods", "3", "requests.cpu", "1", "limits.memory", "1Gi"))
	e.mustCreatePod(ns, pod("early"))
	q, err := e.client.CoreV1().ResourceQuotas(ns).Get(context.Background(), "compute", metav1.GetOptions{})
	if err != nil || q.Status.Hard != nil || q.Status.Used != nil {
		t.Fatalf("before the controller ran: %v, status %+v", err, q.Status)
	}

	e.start()
	e.waitUsed(ns, "compute", rl("pods", "1", "requests.cpu", "0", "limits.memory", "0"))
	e.mustCreatePod(ns, pod("a", requests("cpu", "500m"), limits("memory", "256Mi")))
	e.mustCreatePod(ns, pod("b", requests("cpu", "400m"), limits("memory", "256Mi")))
	e.waitUsed(ns, "compute", rl("pods", "3", "requests.cpu", "900m", "limits.memory", "512Mi"))
	requireForbidden(t, e.createPod(ns, pod("c", requests("cpu", "100m"), limits("memory", "100Mi"))), "exceeded quota")
	// cpu and memory quotas make every container state them (upstream's
	// old rule).
	requireForbidden(t, e.createPod(ns, pod("d")), "must specify")

	e.deletePod(ns, "a")
	e.waitUsed(ns, "compute", rl("pods", "2", "requests.cpu", "400m", "limits.memory", "256Mi"))
	e.mustCreatePod(ns, pod("c", requests("cpu", "100m"), limits("memory", "100Mi")))

	// Raising a limit is reflected in status.hard at once.
	q, err = e.client.CoreV1().ResourceQuotas(ns).Get(context.Background(), "compute", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q.Spec.Hard["pods"] = resource.MustParse("4")
	if _, err := e.client.CoreV1().ResourceQuotas(ns).Update(context.Background(), q, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitUsed(ns, "compute", rl("pods", "3", "requests.cpu", "500m", "limits.memory", "356Mi"))
}

// Object counts: Services with node ports and load balancers, Secrets and
// ConfigMaps (legacy and count/ names), claims per storage class, a
// custom resource; objects made before the quota are counted by the
// controller, later ones charged by admission, deleted ones replenished.
func TestObjectCounts(t *testing.T) {
	e := newEnv(t)
	widgets := schema.GroupVersionResource{Group: "quota.example.com", Version: "v1", Resource: "widgets"}
	framework.CreateWidgetCRD(t, e.dyn, widgets, timeout)
	ns := e.namespace()
	ctx := context.Background()
	core := e.client.CoreV1()
	mustOK := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	mustOK(core.Secrets(ns).Create(ctx, &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s1"}}, metav1.CreateOptions{}))
	mustOK(core.ConfigMaps(ns).Create(ctx, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c1"}}, metav1.CreateOptions{}))
	mustOK(core.Services(ns).Create(ctx, &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "np"}, Spec: v1.ServiceSpec{
		Type: v1.ServiceTypeNodePort, Ports: []v1.ServicePort{{Name: "a", Port: 80}, {Name: "b", Port: 81}}}}, metav1.CreateOptions{}))
	mustOK(core.PersistentVolumeClaims(ns).Create(ctx, claim("gold-1", "gold", "1Gi"), metav1.CreateOptions{}))
	mustOK(e.dyn.Resource(widgets).Namespace(ns).Create(ctx, widget("w1"), metav1.CreateOptions{}))

	e.start()
	e.createQuota(ns, "objects", rl("services", "3", "count/services", "3", "services.nodeports", "3", "services.loadbalancers", "1",
		"secrets", "3", "count/secrets", "3", "configmaps", "3", "count/configmaps", "3", "resourcequotas", "2",
		"persistentvolumeclaims", "3", "requests.storage", "10Gi",
		"gold.storageclass.storage.k8s.io/persistentvolumeclaims", "2", "gold.storageclass.storage.k8s.io/requests.storage", "3Gi",
		"count/widgets.quota.example.com", "2"))
	e.waitUsed(ns, "objects", rl("services", "1", "count/services", "1", "services.nodeports", "2", "services.loadbalancers", "0",
		"secrets", "1", "count/secrets", "1", "configmaps", "1", "count/configmaps", "1", "resourcequotas", "1",
		"persistentvolumeclaims", "1", "requests.storage", "1Gi",
		"gold.storageclass.storage.k8s.io/persistentvolumeclaims", "1", "gold.storageclass.storage.k8s.io/requests.storage", "1Gi",
		"count/widgets.quota.example.com", "1"))

	mustOK(core.Services(ns).Create(ctx, &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "lb"}, Spec: v1.ServiceSpec{
		Type: v1.ServiceTypeLoadBalancer, Ports: []v1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{}))
	mustOK(core.PersistentVolumeClaims(ns).Create(ctx, claim("plain", "", "5Gi"), metav1.CreateOptions{}))
	mustOK(e.dyn.Resource(widgets).Namespace(ns).Create(ctx, widget("w2"), metav1.CreateOptions{}))
	_, err := e.dyn.Resource(widgets).Namespace(ns).Create(ctx, widget("w3"), metav1.CreateOptions{})
	requireForbidden(t, err, "exceeded quota")
	_, err = core.PersistentVolumeClaims(ns).Create(ctx, claim("gold-2", "gold", "3Gi"), metav1.CreateOptions{})
	requireForbidden(t, err, "exceeded quota")
	e.waitUsed(ns, "objects", rl("services", "2", "count/services", "2", "services.nodeports", "3", "services.loadbalancers", "1",
		"secrets", "1", "count/secrets", "1", "configmaps", "1", "count/configmaps", "1", "resourcequotas", "1",
		"persistentvolumeclaims", "2", "requests.storage", "6Gi",
		"gold.storageclass.storage.k8s.io/persistentvolumeclaims", "1", "gold.storageclass.storage.k8s.io/requests.storage", "1Gi",
		"count/widgets.quota.example.com", "2"))

	for _, del := range []func() error{
		func() error { return core.Services(ns).Delete(ctx, "np", metav1.DeleteOptions{}) },
		func() error { return core.Secrets(ns).Delete(ctx, "s1", metav1.DeleteOptions{}) },
		func() error { return core.ConfigMaps(ns).Delete(ctx, "c1", metav1.DeleteOptions{}) },
		func() error { return core.PersistentVolumeClaims(ns).Delete(ctx, "gold-1", metav1.DeleteOptions{}) },
		func() error { return e.dyn.Resource(widgets).Namespace(ns).Delete(ctx, "w1", metav1.DeleteOptions{}) },
	} {
		if err := del(); err != nil {
			t.Fatal(err)
		}
	}
	// The claim waits on the pvc-protection finalizer (its controller does
	// not run here): still counted while it terminates, freed once gone.
	e.waitUsed(ns, "objects", rl("services", "1", "count/services", "1", "services.nodeports", "1", "services.loadbalancers", "1",
		"secrets", "0", "count/secrets", "0", "configmaps", "0", "count/configmaps", "0", "resourcequotas", "1",
		"persistentvolumeclaims", "2", "requests.storage", "6Gi",
		"gold.storageclass.storage.k8s.io/persistentvolumeclaims", "1", "gold.storageclass.storage.k8s.io/requests.storage", "1Gi",
		"count/widgets.quota.example.com", "1"))
	if _, err := core.PersistentVolumeClaims(ns).Patch(ctx, "gold-1", types.MergePatchType,
		[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitUsed(ns, "objects", rl("services", "1", "count/services", "1", "services.nodeports", "1", "services.loadbalancers", "1",
		"secrets", "0", "count/secrets", "0", "configmaps", "0", "count/configmaps", "0", "resourcequotas", "1",
		"persistentvolumeclaims", "1", "requests.storage", "5Gi",
		"gold.storageclass.storage.k8s.io/persistentvolumeclaims", "0", "gold.storageclass.storage.k8s.io/requests.storage", "0",
		"count/widgets.quota.example.com", "1"))
}

func claim(name, class, storage string) *v1.PersistentVolumeClaim {
	c := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.PersistentVolumeClaimSpec{
		AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
		Resources:   v1.VolumeResourceRequirements{Requests: rl("storage", storage)}}}
	if class != "" {
		c.Spec.StorageClassName = ptr.To(class)
	}
	return c
}

func widget(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "quota.example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": name}}}
}

// Each pod scope counts only its pods.
func TestScopes(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if _, err := e.client.SchedulingV1().PriorityClasses().Create(ctx, &schedulingv1.PriorityClass{
		ObjectMeta: metav1.ObjectMeta{Name: "rq-high"}, Value: 1000}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ns := e.namespace()
	e.mustCreatePod(ns, pod("besteffort"))
	e.mustCreatePod(ns, pod("burstable", requests("cpu", "100m")))
	e.mustCreatePod(ns, pod("deadline", requests("cpu", "200m"), func(p *v1.Pod) { p.Spec.ActiveDeadlineSeconds = ptr.To[int64](3600) }))
	e.mustCreatePod(ns, pod("high", requests("cpu", "300m"), func(p *v1.Pod) { p.Spec.PriorityClassName = "rq-high" }))
	e.mustCreatePod(ns, pod("cross", func(p *v1.Pod) {
		p.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			TopologyKey: "zone", NamespaceSelector: &metav1.LabelSelector{}}}}}
	}))
	e.mustCreatePod(ns, pod("done", requests("cpu", "1")))
	if _, err := e.client.CoreV1().Pods(ns).UpdateStatus(ctx, withStatus(t, e, ns, "done", v1.PodSucceeded), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	scoped := func(s ...v1.ResourceQuotaScope) func(*v1.ResourceQuota) {
		return func(q *v1.ResourceQuota) { q.Spec.Scopes = s }
	}
	e.start()
	e.createQuota(ns, "all", rl("pods", "10", "count/pods", "10", "requests.cpu", "10"))
	e.createQuota(ns, "terminating", rl("pods", "10", "requests.cpu", "10"), scoped(v1.ResourceQuotaScopeTerminating))
	e.createQuota(ns, "not-terminating", rl("pods", "10", "requests.cpu", "10"), scoped(v1.ResourceQuotaScopeNotTerminating))
	e.createQuota(ns, "besteffort", rl("pods", "10"), scoped(v1.ResourceQuotaScopeBestEffort))
	e.createQuota(ns, "not-besteffort", rl("pods", "10", "requests.cpu", "10"), scoped(v1.ResourceQuotaScopeNotBestEffort))
	e.createQuota(ns, "cross-namespace", rl("pods", "10"), scoped(v1.ResourceQuotaScopeCrossNamespacePodAffinity))
	e.createQuota(ns, "priority", rl("pods", "10", "requests.cpu", "10"), func(q *v1.ResourceQuota) {
		q.Spec.ScopeSelector = &v1.ScopeSelector{MatchExpressions: []v1.ScopedResourceSelectorRequirement{{
			ScopeName: v1.ResourceQuotaScopePriorityClass, Operator: v1.ScopeSelectorOpIn, Values: []string{"rq-high"}}}}
	})
	e.waitUsed(ns, "all", rl("pods", "5", "count/pods", "6", "requests.cpu", "600m"))
	e.waitUsed(ns, "terminating", rl("pods", "1", "requests.cpu", "200m"))
	e.waitUsed(ns, "not-terminating", rl("pods", "4", "requests.cpu", "400m"))
	e.waitUsed(ns, "besteffort", rl("pods", "2"))
	e.waitUsed(ns, "not-besteffort", rl("pods", "3", "requests.cpu", "600m"))
	e.waitUsed(ns, "cross-namespace", rl("pods", "1"))
	e.waitUsed(ns, "priority", rl("pods", "1", "requests.cpu", "300m"))

	// A deleted pod frees its share in every quota that counted it.
	e.deletePod(ns, "deadline")
	e.waitUsed(ns, "terminating", rl("pods", "0", "requests.cpu", "0"))
	e.waitUsed(ns, "all", rl("pods", "4", "count/pods", "5", "requests.cpu", "400m"))
}

// withStatus returns the live pod with phase set.
func withStatus(t *testing.T, e *env, ns, name string, phase v1.PodPhase) *v1.Pod {
	t.Helper()
	p, err := e.client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = phase
	return p
}

// A resource that appears after the controller started is counted once
// discovery found it, without waiting for the periodic recalculation.
func TestResourceAddedLater(t *testing.T) {
	e := newEnv(t)
	c, _ := e.start()
	ns := e.namespace()
	gadgets := schema.GroupVersionResource{Group: "later.example.com", Version: "v1", Resource: "widgets"}
	framework.CreateWidgetCRD(t, e.dyn, gadgets, timeout)
	w := widget("g1")
	w.SetAPIVersion("later.example.com/v1")
	if _, err := e.dyn.Resource(gadgets).Namespace(ns).Create(context.Background(), w, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.createQuota(ns, "later", rl("count/widgets.later.example.com", "5", "pods", "1"))
	e.waitUsed(ns, "later", rl("count/widgets.later.example.com", "1", "pods", "0"))
	if err := c.(controllermanager.ReadinessReporter).ReadinessCheck(nil); err != nil {
		t.Errorf("ReadinessCheck = %v", err)
	}
}
