package podautoscaler

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	scalefake "k8s.io/client-go/scale/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

// fixture runs reconciliations of HPAs on a Deployment "web" whose scale
// it keeps in memory, with fake metrics and a fake clock.
type fixture struct {
	t        *testing.T
	ctx      context.Context
	client   *fake.Clientset
	scales   *scalefake.FakeScaleClient
	metrics  *fakeMetrics
	clock    *testingclock.FakeClock
	recorder *record.FakeRecorder
	factory  informers.SharedInformerFactory
	c        *Controller

	replicas  int32  // the target's spec.replicas
	selector  string // the target's scale status selector
	updateErr error  // returned by scale updates
	// hpa is the HPA as last written (status included).
	hpa *autoscalingv2.HorizontalPodAutoscaler
}

func newFixture(t *testing.T, replicas int32, pods []*v1.Pod) *fixture {
	_, ctx := ktesting.NewTestContext(t)
	f := &fixture{
		t: t, ctx: ctx, client: fake.NewClientset(), scales: &scalefake.FakeScaleClient{},
		metrics: &fakeMetrics{window: time.Minute}, clock: testingclock.NewFakeClock(t0),
		recorder: record.NewFakeRecorder(100), replicas: replicas, selector: "name=test-pod",
	}
	f.scales.AddReactor("get", "deployments", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, f.scale(), nil
	})
	f.scales.AddReactor("update", "deployments", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if f.updateErr != nil {
			return true, nil, f.updateErr
		}
		s := a.(clienttesting.UpdateAction).GetObject().(*autoscalingv1.Scale)
		f.replicas = s.Spec.Replicas
		return true, f.scale(), nil
	})
	mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{{Group: "apps", Version: "v1"}})
	mapper.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, meta.RESTScopeNamespace)
	f.factory = informers.NewSharedInformerFactory(f.client, 0)
	c, err := NewController(ctx, Config{
		Name: "horizontal-pod-autoscaler-controller", Client: f.client, Scales: f.scales, Mapper: mapper,
		Metrics: f.metrics, HPAs: f.factory.Autoscaling().V2().HorizontalPodAutoscalers(),
		Pods: f.factory.Core().V1().Pods(), Clock: f.clock, Recorder: f.recorder,
		Workers: 1, SyncPeriod: 15 * time.Second, DownscaleStabilization: 5 * time.Minute, Tolerance: 0.1,
		CPUInitializationPeriod: 5 * time.Minute, InitialReadinessDelay: 30 * time.Second,
		ConfigurableTolerance: true, ScaleToZero: true, ObservedGeneration: true, PodLevelResources: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	f.c = c
	f.setPods(pods)
	return f
}

func (f *fixture) scale() *autoscalingv1.Scale {
	return &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec:       autoscalingv1.ScaleSpec{Replicas: f.replicas},
		Status:     autoscalingv1.ScaleStatus{Replicas: f.replicas, Selector: f.selector},
	}
}

func (f *fixture) setPods(pods []*v1.Pod) {
	store := f.factory.Core().V1().Pods().Informer().GetStore()
	for _, old := range store.List() {
		_ = store.Delete(old)
	}
	for _, p := range pods {
		if err := store.Add(p); err != nil {
			f.t.Fatal(err)
		}
	}
}

type hpaOpt func(*autoscalingv2.HorizontalPodAutoscaler)

func newHPA(name string, opts ...hpaOpt) *autoscalingv2.HorizontalPodAutoscaler {
	h := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: "uid-" + "name", Generation: 1},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr.To[int32](1),
			MaxReplicas:    10,
			Metrics:        []autoscalingv2.MetricSpec{cpuUtilization(50)},
		},
	}
	for _, o := range opts {
		o(h)
	}
	return h
}

func cpuUtilization(target int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: v1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(target)},
	}}
}

func withMinMax(lo, hi int32) hpaOpt {
	return func(h *autoscalingv2.HorizontalPodAutoscaler) {
		h.Spec.MinReplicas, h.Spec.MaxReplicas = ptr.To(lo), hi
	}
}

func withMetrics(m ...autoscalingv2.MetricSpec) hpaOpt {
	return func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.Metrics = m }
}

func withBehavior(up, down *autoscalingv2.HPAScalingRules) hpaOpt {
	return func(h *autoscalingv2.HorizontalPodAutoscaler) {
		h.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: up, ScaleDown: down}
	}
}

func rules(window int32, sel autoscalingv2.ScalingPolicySelect, policies ...autoscalingv2.HPAScalingPolicy) *autoscalingv2.HPAScalingRules {
	return &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To(window), SelectPolicy: ptr.To(sel), Policies: policies}
}

func pods(n, period int32) autoscalingv2.HPAScalingPolicy {
	return autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PodsScalingPolicy, Value: n, PeriodSeconds: period}
}

func percent(n, period int32) autoscalingv2.HPAScalingPolicy {
	return autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PercentScalingPolicy, Value: n, PeriodSeconds: period}
}

// create stores the HPA in the client and the informer, as a watch would
// deliver it, and registers it as the add handler does.
func (f *fixture) create(h *autoscalingv2.HorizontalPodAutoscaler) {
	f.t.Helper()
	created, err := f.client.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(f.ctx, h, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	f.hpa = created
	if err := f.factory.Autoscaling().V2().HorizontalPodAutoscalers().Informer().GetStore().Add(created); err != nil {
		f.t.Fatal(err)
	}
	f.c.addHPA(klogFor(f), created)
}

// sync reconciles the HPA once as the informer last saw it (its status as
// last written) and returns the error.
func (f *fixture) sync(name string) error {
	f.t.Helper()
	store := f.factory.Autoscaling().V2().HorizontalPodAutoscalers().Informer().GetStore()
	latest, err := f.client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(f.ctx, name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	if err := store.Update(latest); err != nil {
		f.t.Fatal(err)
	}
	_, err = f.c.syncKey(f.ctx, ns+"/"+name)
	f.hpa, _ = f.client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(f.ctx, name, metav1.GetOptions{})
	return err
}

// events drains the recorded Events.
func (f *fixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// condition renders the HPA's condition of type t as "Status Reason: message".
func (f *fixture) condition(t autoscalingv2.HorizontalPodAutoscalerConditionType) string {
	for _, c := range f.hpa.Status.Conditions {
		if c.Type == t {
			return fmt.Sprintf("%s %s: %s", c.Status, c.Reason, c.Message)
		}
	}
	return "absent"
}

func (f *fixture) wantCondition(t autoscalingv2.HorizontalPodAutoscalerConditionType, want string) {
	f.t.Helper()
	if got := f.condition(t); got != want {
		f.t.Errorf("%s = %q, want %q", t, got, want)
	}
}

func (f *fixture) wantEvents(want ...string) {
	f.t.Helper()
	got := f.events()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		f.t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func (f *fixture) wantReplicas(want int32) {
	f.t.Helper()
	if f.replicas != want {
		f.t.Errorf("target replicas = %d, want %d", f.replicas, want)
	}
}
