// Package deployment tests the deployment-controller against a real
// kube-apiserver, together with the replicaset-controller that creates the
// pods. There is no scheduler or kubelet: a fake kubelet marks pods Running
// and Ready when a test wants them to be.
package deployment

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/internal/controller/hashing"
	"github.com/kcm-dev/kcm/pkg/controller/deployment"
	"github.com/kcm-dev/kcm/pkg/controller/replicaset"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
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
	// ready makes the fake kubelet mark new pods Running and Ready.
	ready atomic.Bool
	// writes counts the deployment-controller's write requests.
	writes atomic.Int64
}

// pair runs two controllers as one, so that both register their informers
// before the shared factory starts.
type pair [2]controllermanager.Controller

func (p pair) Name() string { return p[0].Name() }
func (p pair) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, c := range p {
		wg.Go(func() { c.Run(ctx) })
	}
	wg.Wait()
}

// setup creates a namespace, starts the deployment-controller and the
// replicaset-controller through their real constructors, and the fake
// kubelet (marking pods ready unless a test turns that off).
func setup(t *testing.T) *env {
	t.Helper()
	cfg, ns := framework.Setup(t, "deploy-")
	e := &env{t: t, ctx: ns.Ctx, client: ns.Client, ns: ns.Name}
	e.ready.Store(true)

	ctrlCfg := framework.Observed(cfg, func(r *http.Request) {
		if r.Method != http.MethodGet && strings.Contains(r.UserAgent(), deployment.ClientName) && !strings.Contains(r.URL.Path, "/events") {
			e.writes.Add(1)
		}
	})
	cc := framework.NewControllerContext(t, ctrlCfg)
	cc.Config.DeploymentController.ConcurrentDeploymentSyncs = 5
	cc.Config.ReplicaSetController.ConcurrentRSSyncs = 5
	framework.StartController(t, cc, pair{
		framework.NewController(t, cc, names.Deployment, deployment.New),
		framework.NewController(t, cc, names.ReplicaSet, replicaset.New),
	})
	// The fake kubelet marks the pods Running and Ready, while e.ready is
	// set and unless they run brokenImage.
	ns.StartKubelet(func(ctx context.Context, p *v1.Pod) {
		if e.ready.Load() && p.DeletionTimestamp == nil && p.Status.Phase != v1.PodRunning && p.Spec.Containers[0].Image != brokenImage {
			_ = ns.MarkRunningReady(ctx, p)
		}
	})
	return e
}

// brokenImage is an image whose pods the fake kubelet never marks ready.
const brokenImage = "registry.example/web:broken"

type dOpt func(*apps.Deployment)

func (e *env) createDeployment(name string, replicas int32, opts ...dOpt) *apps.Deployment {
	e.t.Helper()
	d := &apps.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec: apps.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: podLabels},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "registry.example/web:1"}}},
			},
		},
	}
	for _, o := range opts {
		o(d)
	}
	return framework.Create(e.t, e.client.AppsV1().Deployments(e.ns), d)
}

// updateDeployment applies mutate to the Deployment, retrying on
// conflicts with the controller's status writes.
func (e *env) updateDeployment(name string, mutate func(*apps.Deployment)) *apps.Deployment {
	e.t.Helper()
	return framework.Update(e.t, timeout, e.client.AppsV1().Deployments(e.ns), name, mutate)
}

// waitDeployment waits until cond holds for the Deployment and returns it.
func (e *env) waitDeployment(name, what string, cond func(*apps.Deployment) bool) *apps.Deployment {
	e.t.Helper()
	return framework.WaitFor(e.t, timeout, e.client.AppsV1().Deployments(e.ns), name, what, cond)
}

// waitComplete waits until the rollout of the Deployment's current
// generation is complete.
func (e *env) waitComplete(name string) *apps.Deployment {
	e.t.Helper()
	return e.waitDeployment(name, "rollout complete", func(d *apps.Deployment) bool {
		c := condition(d, apps.DeploymentProgressing)
		return d.Status.ObservedGeneration == d.Generation && d.Status.UpdatedReplicas == *d.Spec.Replicas &&
			d.Status.Replicas == *d.Spec.Replicas && d.Status.AvailableReplicas == *d.Spec.Replicas &&
			c != nil && c.Reason == deployment.ReasonNewRSAvailable
	})
}

func condition(d *apps.Deployment, t apps.DeploymentConditionType) *apps.DeploymentCondition {
	for i := range d.Status.Conditions {
		if d.Status.Conditions[i].Type == t {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}

// replicaSets returns the namespace's ReplicaSets controlled by d, by name.
func (e *env) replicaSets(d *apps.Deployment) map[string]*apps.ReplicaSet {
	e.t.Helper()
	list, err := e.client.AppsV1().ReplicaSets(e.ns).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]*apps.ReplicaSet{}
	for i := range list.Items {
		rs := &list.Items[i]
		if metav1.IsControlledBy(rs, d) {
			out[rs.Name] = rs
		}
	}
	return out
}

// rsName is the name upstream gives the ReplicaSet of d's current
// template.
func rsName(d *apps.Deployment) string {
	return d.Name + "-" + hashing.PodTemplateHash(&d.Spec.Template, d.Status.CollisionCount)
}

// waitRS waits until the named ReplicaSet exists and cond holds for it.
func (e *env) waitRS(name, what string, cond func(*apps.ReplicaSet) bool) *apps.ReplicaSet {
	e.t.Helper()
	return framework.WaitFor(e.t, timeout, e.client.AppsV1().ReplicaSets(e.ns), name, what, cond)
}

// events returns the messages of the Events of reason on the named
// Deployment, from the deployment-controller.
func (e *env) events(name, reason string) []string {
	e.t.Helper()
	var out []string
	for _, ev := range e.namespace().Events("Deployment", name) {
		if ev.Reason != reason {
			continue
		}
		if ev.Source.Component != deployment.ClientName {
			e.t.Errorf("event from %q", ev.Source.Component)
		}
		out = append(out, ev.Message)
	}
	return out
}

func (e *env) namespace() framework.Namespace {
	return framework.Namespace{T: e.t, Ctx: e.ctx, Client: e.client, Name: e.ns}
}

// waitEvent waits for an Event of reason with message on the Deployment.
func (e *env) waitEvent(name, reason, message string) {
	e.t.Helper()
	framework.Eventually(e.t, timeout, func() (bool, error) {
		for _, m := range e.events(name, reason) {
			if m == message {
				return true, nil
			}
		}
		return false, nil
	})
}
