// Package resourcequota tests the resourcequota-controller against a real
// kube-apiserver, whose ResourceQuota admission plugin refuses creations
// while a quota's status is unknown and charges them once the controller
// wrote it. No kubelet runs: pods stay Pending and go at once when deleted.
package resourcequota

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kcm-dev/kcm/pkg/controller/resourcequota"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
)

const timeout = 60 * time.Second

type env struct {
	t      *testing.T
	cfg    *rest.Config
	client kubernetes.Interface
	dyn    dynamic.Interface
}

func newEnv(t *testing.T) *env {
	t.Helper()
	cfg := framework.StartEnv(t)
	return &env{t: t, cfg: cfg, client: kubernetes.NewForConfigOrDie(cfg), dyn: dynamic.NewForConfigOrDie(cfg)}
}

// start runs the controller as kcm would with default flags, and returns
// it and its stop function.
func (e *env) start() (controllermanager.Controller, func()) {
	e.t.Helper()
	cc := framework.NewControllerContext(e.t, e.cfg)
	cc.Config.ResourceQuotaController.ConcurrentResourceQuotaSyncs = 5
	cc.Config.ResourceQuotaController.ResourceQuotaSyncPeriod = metav1.Duration{Duration: 5 * time.Minute}
	c := framework.NewController(e.t, cc, names.ResourceQuota, resourcequota.New)
	return c, framework.StartController(e.t, cc, c)
}

// namespace creates a namespace for the test.
func (e *env) namespace() string {
	e.t.Helper()
	return framework.CreateNamespace(e.t, e.client, "rq-").Name
}

func rl(pairs ...string) v1.ResourceList {
	out := v1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out[v1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

func (e *env) createQuota(ns, name string, hard v1.ResourceList, mutate ...func(*v1.ResourceQuota)) {
	e.t.Helper()
	q := &v1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.ResourceQuotaSpec{Hard: hard}}
	for _, m := range mutate {
		m(q)
	}
	framework.Create(e.t, e.client.CoreV1().ResourceQuotas(ns), q)
}

// waitUsed waits until the quota's status.hard is its spec.hard and
// status.used equals want.
func (e *env) waitUsed(ns, name string, want v1.ResourceList) {
	e.t.Helper()
	framework.WaitFor(e.t, timeout, e.client.CoreV1().ResourceQuotas(ns), name, fmt.Sprintf("%s/%s used %v", ns, name, want),
		func(q *v1.ResourceQuota) bool {
			return quota.Equals(q.Status.Hard, q.Spec.Hard) && quota.Equals(q.Status.Used, want)
		})
}

func pod(name string, mutate ...func(*v1.Pod)) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "busybox"}}}}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func requests(pairs ...string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Spec.Containers[0].Resources.Requests = rl(pairs...)
	}
}

func limits(pairs ...string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Spec.Containers[0].Resources.Limits = rl(pairs...)
	}
}

func (e *env) createPod(ns string, p *v1.Pod) error {
	_, err := e.client.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{})
	return err
}

func (e *env) mustCreatePod(ns string, p *v1.Pod) {
	e.t.Helper()
	if err := e.createPod(ns, p); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) deletePod(ns, name string) {
	e.t.Helper()
	if err := e.client.CoreV1().Pods(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// requireForbidden checks err is quota admission's refusal mentioning want.
func requireForbidden(t *testing.T, err error, want string) {
	t.Helper()
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want a Forbidden error mentioning %q", err, want)
	}
}
