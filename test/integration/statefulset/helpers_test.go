// Package statefulset tests the statefulset-controller against a real
// kube-apiserver. There is no scheduler, kubelet or garbage collector:
// pods stay unbound (so they are deleted at once), and the test's kubelet
// stand-in marks them Running and Ready.
package statefulset

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controller/statefulset"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 60 * time.Second

var podLabels = map[string]string{"app": "web"}

// env is one test's view of the cluster.
type env struct {
	t      *testing.T
	ctx    context.Context
	cfg    *rest.Config
	client kubernetes.Interface
	ns     string
	// podCreates counts the controller's pod creation requests.
	podCreates atomic.Int64
	// kubeletOn makes the kubelet stand-in run pending pods.
	kubeletOn atomic.Bool
	stop      func()
}

// setup creates a namespace, starts the kubelet stand-in (off) and the
// controller through its real constructor.
func setup(t *testing.T) *env {
	t.Helper()
	cfg, ns := framework.Setup(t, "sts-")
	e := &env{t: t, ctx: ns.Ctx, cfg: cfg, client: ns.Client, ns: ns.Name}
	e.startController()
	ns.StartKubelet(func(ctx context.Context, p *v1.Pod) {
		if e.kubeletOn.Load() && p.Status.Phase == v1.PodPending && p.DeletionTimestamp == nil {
			_ = ns.MarkRunningReady(ctx, p)
		}
	})
	return e
}

// startController runs a new controller (with fresh informers).
func (e *env) startController() {
	e.t.Helper()
	ctrlCfg := framework.Observed(e.cfg, func(r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/namespaces/"+e.ns+"/pods") {
			e.podCreates.Add(1)
		}
	})
	cc := framework.NewControllerContext(e.t, ctrlCfg)
	cc.Config.StatefulSetController.ConcurrentStatefulSetSyncs = 5
	e.stop = framework.StartController(e.t, cc, framework.NewController(e.t, cc, names.StatefulSet, statefulset.New))
}

func (e *env) createSet(name string, replicas int32, mutate ...func(*apps.StatefulSet)) *apps.StatefulSet {
	e.t.Helper()
	set := &apps.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec: apps.StatefulSetSpec{
			Replicas:    ptr.To(replicas),
			Selector:    &metav1.LabelSelector{MatchLabels: podLabels},
			ServiceName: "web",
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
				Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "registry.example/web:1"}}},
			},
		},
	}
	for _, m := range mutate {
		m(set)
	}
	return framework.Create(e.t, e.client.AppsV1().StatefulSets(e.ns), set)
}

func withClaim(set *apps.StatefulSet) {
	set.Spec.VolumeClaimTemplates = []v1.PersistentVolumeClaim{{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:   v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}}
}

func parallel(set *apps.StatefulSet) { set.Spec.PodManagementPolicy = apps.ParallelPodManagement }

// updateSet applies mutate to the set, retrying conflicts.
func (e *env) updateSet(name string, mutate func(*apps.StatefulSet)) {
	e.t.Helper()
	framework.Update(e.t, timeout, e.client.AppsV1().StatefulSets(e.ns), name, mutate)
}

// waitSet waits until cond holds for the set.
func (e *env) waitSet(name, what string, cond func(*apps.StatefulSet) bool) *apps.StatefulSet {
	e.t.Helper()
	return framework.WaitFor(e.t, timeout, e.client.AppsV1().StatefulSets(e.ns), name, what, cond)
}

func (e *env) namespace() framework.Namespace {
	return framework.Namespace{T: e.t, Ctx: e.ctx, Client: e.client, Name: e.ns}
}

// pods returns the live pods by name, in name order.
func (e *env) pods() []v1.Pod {
	e.t.Helper()
	pods := e.namespace().LivePods(podLabels)
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	return pods
}

func (e *env) podNames() string {
	var names []string
	for _, p := range e.pods() {
		names = append(names, p.Name)
	}
	return strings.Join(names, ",")
}

// waitPodNames waits until the live pods are exactly want (comma-separated).
func (e *env) waitPodNames(want string) {
	e.t.Helper()
	framework.Until(e.t, timeout, "pods "+want, func() (bool, any) {
		got := e.podNames()
		return got == want, got
	})
}

func (e *env) revisions() []apps.ControllerRevision {
	e.t.Helper()
	list, err := e.client.AppsV1().ControllerRevisions(e.ns).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Revision < list.Items[j].Revision })
	return list.Items
}

func (e *env) claims() []v1.PersistentVolumeClaim {
	e.t.Helper()
	list, err := e.client.CoreV1().PersistentVolumeClaims(e.ns).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	return list.Items
}

func (e *env) waitEvents(name, reason string, atLeast int) []v1.Event {
	e.t.Helper()
	return e.namespace().WaitEvents("StatefulSet", name, reason, atLeast, timeout)
}
