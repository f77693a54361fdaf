// Package disruption tests the disruption-controller against a real
// kube-apiserver, whose eviction API reads the budgets' status. There is
// no scheduler, kubelet or workload controller: tests create the pods of
// a workload, bind them and set their status themselves.
package disruption

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controller/disruption"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 30 * time.Second

// env is one test's view of the cluster.
type env struct {
	t      *testing.T
	ctx    context.Context
	client kubernetes.Interface
	dyn    dynamic.Interface
	ns     string
	// statusWrites counts the controller's PodDisruptionBudget status
	// writes, by budget name.
	statusWrites map[string]*atomic.Int64
}

// setup creates a namespace and starts the controller through its real
// constructor; budgets names the budgets whose status writes are counted.
func setup(t *testing.T, budgets ...string) *env {
	t.Helper()
	cfg := framework.StartEnv(t)
	e := &env{t: t, ctx: context.Background(), client: kubernetes.NewForConfigOrDie(cfg),
		dyn: dynamic.NewForConfigOrDie(cfg), statusWrites: map[string]*atomic.Int64{}}
	for _, b := range budgets {
		e.statusWrites[b] = &atomic.Int64{}
	}
	ns, err := e.client.CoreV1().Namespaces().Create(e.ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "pdb-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.ns = ns.Name

	ctrlCfg := framework.Observed(cfg, func(r *http.Request) {
		prefix := "/apis/policy/v1/namespaces/" + e.ns + "/poddisruptionbudgets/"
		if r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, prefix) && strings.HasSuffix(r.URL.Path, "/status") {
			if n, ok := e.statusWrites[strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, prefix), "/status")]; ok {
				n.Add(1)
			}
		}
	})
	cc := framework.NewControllerContext(t, ctrlCfg)
	cc.Config.DisruptionController.ConcurrentDisruptionSyncs = 2
	c, err := disruption.New(context.Background(), cc, names.Disruption)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if c.Name() != names.Disruption {
		t.Errorf("Name() = %q", c.Name())
	}
	framework.StartController(t, cc, c)
	return e
}

func (e *env) namespace() framework.Namespace {
	return framework.Namespace{T: e.t, Ctx: e.ctx, Client: e.client, Name: e.ns}
}

// runningPods creates pods name-0… with labels and a controller, bound
// and Running, Ready if ready.
func (e *env) runningPods(prefix string, n int, lbls map[string]string, ready bool, owner *metav1.OwnerReference) []string {
	e.t.Helper()
	var out []string
	for i := range n {
		name := prefix + "-" + string(rune('a'+i))
		var owners []metav1.OwnerReference
		if owner != nil {
			owners = append(owners, *owner)
		}
		e.namespace().CreatePod(name, lbls, owners...)
		e.namespace().Bind(name, "node-1")
		e.namespace().SetRunning(name, ready)
		out = append(out, name)
	}
	return out
}

func controllerRef(apiVersion, kind string, obj metav1.Object) *metav1.OwnerReference {
	return &metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: obj.GetName(), UID: obj.GetUID(), Controller: ptr.To(true)}
}

func (e *env) createPDB(name string, lbls map[string]string, minAvailable, maxUnavailable *intstr.IntOrString) {
	e.t.Helper()
	_, err := e.client.PolicyV1().PodDisruptionBudgets(e.ns).Create(e.ctx, &policy.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: policy.PodDisruptionBudgetSpec{
			Selector:     &metav1.LabelSelector{MatchLabels: lbls},
			MinAvailable: minAvailable, MaxUnavailable: maxUnavailable,
		},
	}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
}

// budget is the wanted status: counts and the DisruptionAllowed
// condition's reason (its status follows from it).
type budget struct {
	expected, desired, healthy, allowed int32
	reason                              string
}

// waitPDB waits until the budget's status is want, observing its
// generation unless the sync failed (which keeps the last one observed),
// and returns it.
func (e *env) waitPDB(name string, want budget) *policy.PodDisruptionBudget {
	e.t.Helper()
	var pdb *policy.PodDisruptionBudget
	var last budget
	deadline := time.Now().Add(timeout)
	for {
		var err error
		pdb, err = e.client.PolicyV1().PodDisruptionBudgets(e.ns).Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			e.t.Fatal(err)
		}
		s := pdb.Status
		last = budget{s.ExpectedPods, s.DesiredHealthy, s.CurrentHealthy, s.DisruptionsAllowed, ""}
		for _, c := range s.Conditions {
			if c.Type == policy.DisruptionAllowedCondition {
				last.reason = c.Reason
			}
		}
		if last == want && (s.ObservedGeneration == pdb.Generation || want.reason == policy.SyncFailedReason) {
			return pdb
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("PodDisruptionBudget %s: status %+v (generation %d of %d), want %+v", name, last, s.ObservedGeneration, pdb.Generation, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (e *env) evict(pod string) error {
	return e.client.CoreV1().Pods(e.ns).EvictV1(e.ctx, &policy.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: e.ns}})
}

func (e *env) getPod(name string) *v1.Pod {
	e.t.Helper()
	p, err := e.client.CoreV1().Pods(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *env) createReplicaSet(name string, replicas int32, lbls map[string]string, owner *metav1.OwnerReference) *apps.ReplicaSet {
	e.t.Helper()
	rs := &apps.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: apps.ReplicaSetSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: lbls},
			Template: podTemplate(lbls),
		},
	}
	if owner != nil {
		rs.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	rs, err := e.client.AppsV1().ReplicaSets(e.ns).Create(e.ctx, rs, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return rs
}

func podTemplate(lbls map[string]string) v1.PodTemplateSpec {
	return v1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: lbls},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "registry.example/web:1"}}},
	}
}

// createScalableCRD creates a namespaced CRD of kind Gizmo with a scale
// subresource on .spec.replicas, and waits until it is served.
func (e *env) createScalableCRD(gvr schema.GroupVersionResource) {
	e.t.Helper()
	crds := e.dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": gvr.Resource + "." + gvr.Group},
		"spec": map[string]any{
			"group": gvr.Group,
			"scope": "Namespaced",
			"names": map[string]any{"plural": gvr.Resource, "singular": "gizmo", "kind": "Gizmo", "listKind": "GizmoList"},
			"versions": []any{map[string]any{
				"name": gvr.Version, "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object", "x-kubernetes-preserve-unknown-fields": true,
				}},
				"subresources": map[string]any{"scale": map[string]any{
					"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas",
				}},
			}},
		},
	}}
	if _, err := crds.Create(e.ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		e.t.Fatal(err)
	}
	framework.Eventually(e.t, timeout, func() (bool, error) {
		_, err := e.dyn.Resource(gvr).Namespace(e.ns).List(e.ctx, metav1.ListOptions{})
		return err == nil, nil
	})
}
