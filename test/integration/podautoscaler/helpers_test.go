// Package podautoscaler tests the horizontal-pod-autoscaler-controller
// against a real kube-apiserver, with the metrics APIs served by
// test/metricsapi through the aggregator. There is no deployment
// controller, scheduler or kubelet: tests create the target's pods and set
// them running themselves; the controller only reads the Deployment's
// scale subresource and writes its spec.replicas.
package podautoscaler

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	apps "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/pkg/controller/podautoscaler"
	"github.com/kcm-dev/kcm/pkg/controllermanager/names"
	"github.com/kcm-dev/kcm/test/integration/framework"
	"github.com/kcm-dev/kcm/test/metricsapi"
)

const (
	timeout    = 60 * time.Second
	syncPeriod = time.Second
)

var webLabels = map[string]string{"app": "web"}

// The package's metrics API: one server registered once for the shared
// control plane (APIServices are cluster-wide).
var shared struct {
	sync.Mutex
	srv *metricsapi.Server
}

// env is one test's namespace, clients and metrics server.
type env struct {
	framework.Namespace
	cfg     *rest.Config
	metrics *metricsapi.Server
}

// setup starts (once) and registers the metrics API, creates a namespace
// and starts the controller through its real constructor.
func setup(t *testing.T) *env {
	t.Helper()
	cfg, ns := framework.Setup(t, "hpa-")
	shared.Lock()
	if shared.srv == nil {
		srv, err := metricsapi.Start(context.Background(), metricsapi.Options{Pods: ns.Client})
		if err != nil {
			shared.Unlock()
			t.Fatal(err)
		}
		if err := srv.Register(ns.Ctx, cfg); err != nil {
			shared.Unlock()
			t.Fatal(err)
		}
		shared.srv = srv
	}
	e := &env{Namespace: ns, cfg: cfg, metrics: shared.srv}
	shared.Unlock()

	cc := framework.NewControllerContext(t, cfg)
	h := &cc.Config.HPAController
	h.ConcurrentHorizontalPodAutoscalerSyncs = 5
	h.HorizontalPodAutoscalerSyncPeriod.Duration = syncPeriod
	h.HorizontalPodAutoscalerDownscaleStabilizationWindow.Duration = 5 * time.Minute
	h.HorizontalPodAutoscalerTolerance = 0.1
	h.HorizontalPodAutoscalerCPUInitializationPeriod.Duration = 5 * time.Minute
	h.HorizontalPodAutoscalerInitialReadinessDelay.Duration = 30 * time.Second
	framework.StartController(t, cc, framework.NewController(t, cc, names.HorizontalPodAutoscaler, podautoscaler.New))
	return e
}

// deployment creates Deployment "web" with replicas and that many running,
// ready pods requesting 100m CPU each.
func (e *env) deployment(replicas int32) {
	e.T.Helper()
	d := &apps.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: apps.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: webLabels},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: webLabels},
				Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "registry.example/web:1"}}},
			},
		},
	}
	created := framework.Create(e.T, e.Client.AppsV1().Deployments(e.Name), d)
	e.pods(0, int(replicas))
	e.deploymentStatus(created, replicas)
}

// deploymentStatus sets status.replicas (the scale's status), as the
// deployment controller would.
func (e *env) deploymentStatus(d *apps.Deployment, replicas int32) {
	e.T.Helper()
	d.Status.Replicas, d.Status.ReadyReplicas = replicas, replicas
	if _, err := e.Client.AppsV1().Deployments(e.Name).UpdateStatus(e.Ctx, d, metav1.UpdateOptions{}); err != nil {
		e.T.Fatal(err)
	}
}

// pods creates running, ready pods web-<from>…web-<to-1>.
func (e *env) pods(from, to int) {
	e.T.Helper()
	for i := from; i < to; i++ {
		name := fmt.Sprintf("web-%d", i)
		p := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: webLabels},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "registry.example/web:1",
				Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}}}}},
		}
		created := framework.Create(e.T, e.Client.CoreV1().Pods(e.Name), p)
		// Running and ready since a minute, as a kubelet reports it.
		since := metav1.NewTime(time.Now().Add(-time.Minute).Truncate(time.Second))
		created.Status.Phase = v1.PodRunning
		created.Status.StartTime = &since
		created.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: since}}
		if _, err := e.Client.CoreV1().Pods(e.Name).UpdateStatus(e.Ctx, created, metav1.UpdateOptions{}); err != nil {
			e.T.Fatal(err)
		}
	}
}

// cpu sets the CPU usage of each of the namespace's web pods.
func (e *env) cpu(usage string) {
	e.metrics.Set(metricsapi.Values{Usage: []metricsapi.Usage{{
		Namespace: e.Name, Selector: "app=web", Resources: v1.ResourceList{v1.ResourceCPU: resource.MustParse(usage)},
	}}})
}

func (e *env) createHPA(h *autoscalingv2.HorizontalPodAutoscaler) {
	e.T.Helper()
	if h.Spec.ScaleTargetRef.Name == "" {
		h.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
	}
	framework.Create(e.T, e.Client.AutoscalingV2().HorizontalPodAutoscalers(e.Name), h)
}

func cpuHPA(name string, target int32, minReplicas, maxReplicas int32) *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			MinReplicas: ptr.To(minReplicas),
			MaxReplicas: maxReplicas,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
				Name: v1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(target)},
			}}},
		},
	}
}

// waitReplicas waits until the Deployment's spec.replicas is want.
func (e *env) waitReplicas(want int32) {
	e.T.Helper()
	framework.WaitFor(e.T, timeout, e.Client.AppsV1().Deployments(e.Name), "web", fmt.Sprintf("%d replicas", want),
		func(d *apps.Deployment) bool { return ptr.Deref(d.Spec.Replicas, 0) == want })
}

// waitCondition waits until the HPA's condition of type t has status and
// reason, and returns the HPA.
func (e *env) waitCondition(name string, t autoscalingv2.HorizontalPodAutoscalerConditionType, status v1.ConditionStatus, reason string) *autoscalingv2.HorizontalPodAutoscaler {
	e.T.Helper()
	return framework.WaitFor(e.T, timeout, e.Client.AutoscalingV2().HorizontalPodAutoscalers(e.Name), name, fmt.Sprintf("condition %s=%s with reason %s", t, status, reason),
		func(hpa *autoscalingv2.HorizontalPodAutoscaler) bool {
			c := condition(hpa, t)
			return c.Type == t && c.Status == status && c.Reason == reason
		})
}

func condition(hpa *autoscalingv2.HorizontalPodAutoscaler, t autoscalingv2.HorizontalPodAutoscalerConditionType) autoscalingv2.HorizontalPodAutoscalerCondition {
	for _, c := range hpa.Status.Conditions {
		if c.Type == t {
			return c
		}
	}
	return autoscalingv2.HorizontalPodAutoscalerCondition{}
}
