// Package podautoscaler tests the horizontal-pod-autoscaler-controller
// against a real kube-apiserver, with the metrics APIs served by
// test/metricsapi through the aggregator. There is no deployment
// controller, scheduler or kubelet: tests create the target's pods and set
// them running themselves; the controller only reads the Deployment's
// scale subresource and writes its spec.replicas.
package podautoscaler

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	apps "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
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
	cfg := framework.StartEnv(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	shared.Lock()
	if shared.srv == nil {
		srv, err := metricsapi.Start(context.Background(), metricsapi.Options{Pods: client})
		if err != nil {
			shared.Unlock()
			t.Fatal(err)
		}
		if err := srv.Register(ctx, cfg); err != nil {
			shared.Unlock()
			t.Fatal(err)
		}
		shared.srv = srv
	}
	srv := shared.srv
	shared.Unlock()

	ns, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "hpa-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{Namespace: framework.Namespace{T: t, Ctx: ctx, Client: client, Name: ns.Name}, cfg: cfg, metrics: srv}

	cc := framework.NewControllerContext(t, cfg)
	h := &cc.Config.HPAController
	h.ConcurrentHorizontalPodAutoscalerSyncs = 5
	h.HorizontalPodAutoscalerSyncPeriod.Duration = syncPeriod
	h.HorizontalPodAutoscalerDownscaleStabilizationWindow.Duration = 5 * time.Minute
	h.HorizontalPodAutoscalerTolerance = 0.1
	h.HorizontalPodAutoscalerCPUInitializationPeriod.Duration = 5 * time.Minute
	h.HorizontalPodAutoscalerInitialReadinessDelay.Duration = 30 * time.Second
	c, err := podautoscaler.New(ctx, cc, names.HorizontalPodAutoscaler)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	framework.StartController(t, cc, c)
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
	created, err := e.Client.AppsV1().Deployments(e.Name).Create(e.Ctx, d, metav1.CreateOptions{})
	if err != nil {
		e.T.Fatal(err)
	}
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
		created, err := e.Client.CoreV1().Pods(e.Name).Create(e.Ctx, p, metav1.CreateOptions{})
		if err != nil {
			e.T.Fatal(err)
		}
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
	if _, err := e.Client.AutoscalingV2().HorizontalPodAutoscalers(e.Name).Create(e.Ctx, h, metav1.CreateOptions{}); err != nil {
		e.T.Fatal(err)
	}
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
	framework.Eventually(e.T, timeout, func() (bool, error) {
		d, err := e.Client.AppsV1().Deployments(e.Name).Get(e.Ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return ptr.Deref(d.Spec.Replicas, 0) == want, nil
	})
}

// waitCondition waits until the HPA's condition of type t has status and
// reason, and returns the HPA.
func (e *env) waitCondition(name string, t autoscalingv2.HorizontalPodAutoscalerConditionType, status v1.ConditionStatus, reason string) *autoscalingv2.HorizontalPodAutoscaler {
	e.T.Helper()
	var hpa *autoscalingv2.HorizontalPodAutoscaler
	err := wait.PollUntilContextTimeout(e.Ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		var err error
		hpa, err = e.Client.AutoscalingV2().HorizontalPodAutoscalers(e.Name).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range hpa.Status.Conditions {
			if c.Type == t {
				return c.Status == status && c.Reason == reason, nil
			}
		}
		return false, nil
	})
	if err != nil {
		e.T.Fatalf("HPA %s: no condition %s=%s with reason %s within %v (%v); status: %s", name, t, status, reason, timeout, err, dump(hpa.Status))
	}
	return hpa
}

func dump(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

func condition(hpa *autoscalingv2.HorizontalPodAutoscaler, t autoscalingv2.HorizontalPodAutoscalerConditionType) autoscalingv2.HorizontalPodAutoscalerCondition {
	for _, c := range hpa.Status.Conditions {
		if c.Type == t {
			return c
		}
	}
	return autoscalingv2.HorizontalPodAutoscalerCondition{}
}
