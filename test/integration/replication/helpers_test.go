// Package replication tests the replicationcontroller-controller against a
// real kube-apiserver. There is no scheduler, kubelet or garbage
// collector: tests bind pods, set their status and stand in for the
// garbage collector themselves.
package replication

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controller/replication"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 60 * time.Second

var podLabels = map[string]string{"app": "web"}

type env struct {
	t      *testing.T
	ctx    context.Context
	client kubernetes.Interface
	ns     string
}

// setup creates a namespace and starts the controller through its real
// constructor.
func setup(t *testing.T) *env {
	t.Helper()
	cfg, ns := framework.Setup(t, "rc-")
	cc := framework.NewControllerContext(t, cfg)
	cc.Config.ReplicationController.ConcurrentRCSyncs = 5
	framework.StartController(t, cc, framework.NewController(t, cc, names.ReplicationController, replication.New))
	return &env{t: t, ctx: ns.Ctx, client: ns.Client, ns: ns.Name}
}

func (e *env) createRC(name string, replicas int32, mutate ...func(*v1.ReplicationController)) *v1.ReplicationController {
	e.t.Helper()
	rc := &v1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec: v1.ReplicationControllerSpec{
			Replicas: ptr.To(replicas),
			Selector: podLabels,
			Template: &v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", "tier": "front"}},
				Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "registry.example/web:1"}}},
			},
		},
	}
	for _, m := range mutate {
		m(rc)
	}
	return framework.Create(e.t, e.client.CoreV1().ReplicationControllers(e.ns), rc)
}

func (e *env) scale(name string, replicas int32) {
	e.t.Helper()
	patch := []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas))
	if _, err := e.client.CoreV1().ReplicationControllers(e.ns).Patch(e.ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) waitRC(name, what string, cond func(*v1.ReplicationController) bool) *v1.ReplicationController {
	e.t.Helper()
	return framework.WaitFor(e.t, timeout, e.client.CoreV1().ReplicationControllers(e.ns), name, what, cond)
}

// namespace is the framework's pod and Event helpers on e's namespace.
func (e *env) namespace() framework.Namespace {
	return framework.Namespace{T: e.t, Ctx: e.ctx, Client: e.client, Name: e.ns}
}

// pods returns the selected pods that are not being deleted.
func (e *env) pods() []v1.Pod { e.t.Helper(); return e.namespace().LivePods(podLabels) }

func (e *env) waitPods(n int) []v1.Pod {
	e.t.Helper()
	return e.namespace().WaitLivePods(podLabels, n, timeout)
}

func (e *env) createPod(name string, lbls map[string]string, owners ...metav1.OwnerReference) {
	e.t.Helper()
	e.namespace().CreatePod(name, lbls, owners...)
}

// runReady binds the pod and makes it Running and Ready since now.
func (e *env) runReady(name string) {
	e.t.Helper()
	e.namespace().Bind(name, "node-1")
	e.namespace().SetRunning(name, true)
}

func (e *env) patchPod(name, patch string) { e.t.Helper(); e.namespace().PatchPod(name, patch) }

func (e *env) waitEvents(name, reason string, atLeast int) []v1.Event {
	e.t.Helper()
	return e.namespace().WaitEvents("ReplicationController", name, reason, atLeast, timeout)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	framework.Until(t, timeout, what, func() (bool, any) { return cond(), nil })
}
