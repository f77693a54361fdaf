// Package disruption tests the disruption-controller against a real
// kube-apiserver, whose eviction API reads the budgets' status. There is
// no scheduler, kubelet or workload controller: tests create the pods of
// a workload, bind them and set their status themselves.
package disruption

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	cfg, ns := framework.Setup(t, "pdb-")
	e := &env{t: t, ctx: ns.Ctx, client: ns.Client, dyn: dynamic.NewForConfigOrDie(cfg), ns: ns.Name,
		statusWrites: map[string]*atomic.Int64{}}
	for _, b := range budgets {
		e.statusWrites[b] = &atomic.Int64{}
	}

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
	framework.StartController(t, cc, framework.NewController(t, cc, names.Disruption, disruption.New))
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
	framework.Create(e.t, e.client.PolicyV1().PodDisruptionBudgets(e.ns), &policy.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: policy.PodDisruptionBudgetSpec{
			Selector:     &metav1.LabelSelector{MatchLabels: lbls},
			MinAvailable: minAvailable, MaxUnavailable: maxUnavailable,
		},
	})
}

// budget is the wanted status: counts and the DisruptionAllowed
// condition's reason (its status follows from it).
type budget struct {
	expected, desired, healthy, allowed int32
	reason                              string
}

// budgetOf is the budget a status reports.
func budgetOf(pdb *policy.PodDisruptionBudget) budget {
	s := pdb.Status
	b := budget{s.ExpectedPods, s.DesiredHealthy, s.CurrentHealthy, s.DisruptionsAllowed, ""}
	for _, c := range s.Conditions {
		if c.Type == policy.DisruptionAllowedCondition {
			b.reason = c.Reason
		}
	}
	return b
}

// waitPDB waits until the budget's status is want, observing its
// generation unless the sync failed (which keeps the last one observed),
// and returns it.
func (e *env) waitPDB(name string, want budget) *policy.PodDisruptionBudget {
	e.t.Helper()
	return framework.WaitFor(e.t, timeout, e.client.PolicyV1().PodDisruptionBudgets(e.ns), name, fmt.Sprintf("budget %+v", want),
		func(pdb *policy.PodDisruptionBudget) bool {
			return budgetOf(pdb) == want && (pdb.Status.ObservedGeneration == pdb.Generation || want.reason == policy.SyncFailedReason)
		})
}

func (e *env) evict(pod string) error {
	return e.client.CoreV1().Pods(e.ns).EvictV1(e.ctx, &policy.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: e.ns}})
}

func (e *env) getPod(name string) *v1.Pod {
	e.t.Helper()
	return framework.Get(e.t, e.client.CoreV1().Pods(e.ns), name)
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
	return framework.Create(e.t, e.client.AppsV1().ReplicaSets(e.ns), rs)
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
	framework.CreateCRD(e.t, e.dyn, gvr, "Gizmo", true, timeout)
}
