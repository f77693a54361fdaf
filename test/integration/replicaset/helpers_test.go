// Package replicaset tests the replicaset-controller against a real
// kube-apiserver. There is no scheduler, kubelet or garbage collector:
// tests bind pods, set their status and stand in for the garbage collector
// themselves.
package replicaset

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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controller/replicaset"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 60 * time.Second

var podLabels = map[string]string{"app": "web"}

// env is one test's view of the cluster.
type env struct {
	t      *testing.T
	ctx    context.Context
	client kubernetes.Interface
	ns     string
	// podCreates counts the controller's pod creation requests.
	podCreates atomic.Int64
	// createsBeforeStatus is podCreates when the controller first wrote a
	// status, -1 before.
	createsBeforeStatus atomic.Int64
}

// setup creates a namespace and starts the controller through its real
// constructor.
func setup(t *testing.T) *env {
	t.Helper()
	cfg, ns := framework.Setup(t, "rs-")
	e := &env{t: t, ctx: ns.Ctx, client: ns.Client, ns: ns.Name}
	e.createsBeforeStatus.Store(-1)

	ctrlCfg := framework.Observed(cfg, func(r *http.Request) {
		switch {
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/namespaces/"+e.ns+"/pods"):
			e.podCreates.Add(1)
		case r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/namespaces/"+e.ns+"/") && strings.HasSuffix(r.URL.Path, "/status"):
			e.createsBeforeStatus.CompareAndSwap(-1, e.podCreates.Load())
		}
	})
	cc := framework.NewControllerContext(t, ctrlCfg)
	cc.Config.ReplicaSetController.ConcurrentRSSyncs = 5
	framework.StartController(t, cc, framework.NewController(t, cc, names.ReplicaSet, replicaset.New))
	return e
}

func (e *env) createRS(name string, replicas int32, mutate ...func(*apps.ReplicaSet)) *apps.ReplicaSet {
	e.t.Helper()
	rs := &apps.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec: apps.ReplicaSetSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: podLabels},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      map[string]string{"app": "web", "tier": "front"},
					Annotations: map[string]string{"example.com/note": "copied"},
				},
				Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "registry.example/web:1"}}},
			},
		},
	}
	for _, m := range mutate {
		m(rs)
	}
	return framework.Create(e.t, e.client.AppsV1().ReplicaSets(e.ns), rs)
}

func (e *env) getRS(name string) *apps.ReplicaSet {
	e.t.Helper()
	return framework.Get(e.t, e.client.AppsV1().ReplicaSets(e.ns), name)
}

func (e *env) scale(name string, replicas int32) {
	e.t.Helper()
	framework.Update(e.t, timeout, e.client.AppsV1().ReplicaSets(e.ns), name, func(rs *apps.ReplicaSet) { rs.Spec.Replicas = ptr.To(replicas) })
}

// waitRS waits until cond holds for the ReplicaSet.
func (e *env) waitRS(name string, what string, cond func(*apps.ReplicaSet) bool) *apps.ReplicaSet {
	e.t.Helper()
	return framework.WaitFor(e.t, timeout, e.client.AppsV1().ReplicaSets(e.ns), name, what, cond)
}

// namespace is the framework's pod and Event helpers on e's namespace.
func (e *env) namespace() framework.Namespace {
	return framework.Namespace{T: e.t, Ctx: e.ctx, Client: e.client, Name: e.ns}
}

// pods returns the selected pods that are not being deleted.
func (e *env) pods() []v1.Pod { e.t.Helper(); return e.namespace().LivePods(podLabels) }

// waitPods waits until exactly n selected pods exist that are not being
// deleted, and returns them.
func (e *env) waitPods(n int) []v1.Pod {
	e.t.Helper()
	return e.namespace().WaitLivePods(podLabels, n, timeout)
}

func (e *env) createPod(name string, lbls map[string]string, owners ...metav1.OwnerReference) *v1.Pod {
	e.t.Helper()
	return e.namespace().CreatePod(name, lbls, owners...)
}

func (e *env) bind(pod, node string) { e.t.Helper(); e.namespace().Bind(pod, node) }
func (e *env) setRunning(name string, ready bool) {
	e.t.Helper()
	e.namespace().SetRunning(name, ready)
}
func (e *env) patchPod(name, patch string) { e.t.Helper(); e.namespace().PatchPod(name, patch) }

// waitEvents waits for Events of reason on the named object.
func (e *env) waitEvents(kind, name, reason string, atLeast int) []v1.Event {
	e.t.Helper()
	return e.namespace().WaitEvents(kind, name, reason, atLeast, timeout)
}

func controllerRefOf(p *v1.Pod) string {
	if ref := metav1.GetControllerOf(p); ref != nil {
		return fmt.Sprintf("%s/%s/%s", ref.Kind, ref.Name, ref.UID)
	}
	return ""
}
