package podautoscaler

import (
	"strings"
	"testing"

	apps "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/kcm-dev/kcm/test/metricsapi"
)

// A CPU-utilization HPA scales a Deployment up (at most doubling per sync
// without behavior) and, with a zero scale-down window, down again.
func TestScalesOnCPUUpAndDown(t *testing.T) {
	e := setup(t)
	e.deployment(2)
	e.cpu("200m") // 200% of the request, target 50%: 8 replicas wanted
	hpa := cpuHPA("web", 50, 1, 6)
	hpa.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](0)}}
	e.createHPA(hpa)

	e.waitReplicas(6)
	got := e.waitCondition("web", autoscalingv2.AbleToScale, v1.ConditionTrue, "SucceededRescale")
	if c := condition(got, autoscalingv2.ScalingLimited); c.Status != v1.ConditionTrue || c.Reason != "TooManyReplicas" {
		t.Errorf("ScalingLimited %+v", c)
	}
	if got.Status.DesiredReplicas != 6 || got.Status.CurrentReplicas != 2 || got.Status.LastScaleTime == nil {
		t.Errorf("status after scale-up: %+v", got.Status)
	}
	ev := e.WaitEvents("HorizontalPodAutoscaler", "web", "SuccessfulRescale", 1, timeout)
	if ev[0].Message != "New size: 6; reason: cpu resource utilization (percentage of request) above target" || ev[0].Source.Component != "horizontal-pod-autoscaler" {
		t.Errorf("event %q from %q", ev[0].Message, ev[0].Source.Component)
	}
	m := got.Status.CurrentMetrics
	if len(m) != 1 || m[0].Resource == nil || ptr.Deref(m[0].Resource.Current.AverageUtilization, 0) != 200 || m[0].Resource.Current.AverageValue.Cmp(resource.MustParse("200m")) != 0 {
		t.Errorf("currentMetrics %+v", m)
	}

	// The new pods arrive (no deployment controller here), load drops.
	e.pods(2, 6)
	e.cpu("5m") // 5% of 50% on six pods: one replica
	e.waitReplicas(1)
	got = e.waitCondition("web", autoscalingv2.ScalingLimited, v1.ConditionFalse, "DesiredWithinRange")
	if c := condition(got, autoscalingv2.AbleToScale); c.Reason != "SucceededRescale" && c.Reason != "ReadyForNewScale" {
		t.Errorf("AbleToScale %+v", c)
	}
	// The requests came through the aggregator, naming a user.
	for _, r := range e.metrics.Requests() {
		if strings.Contains(r.Path, "/namespaces/"+e.Name+"/pods") && r.User == "" {
			t.Errorf("request %s without X-Remote-User", r.Path)
		}
	}
}

// Pods, Object and External metrics: the highest proposal wins.
func TestCustomAndExternalMetrics(t *testing.T) {
	e := setup(t)
	e.deployment(2)
	e.metrics.Set(metricsapi.Values{
		Custom: []metricsapi.Custom{
			{Namespace: e.Name, Resource: "pods", Selector: "app=web", Metric: "rps", Value: resource.MustParse("30")},
			{Namespace: e.Name, Resource: "services", Name: "front", Metric: "latency", Value: resource.MustParse("100")},
		},
		External: []metricsapi.External{
			{Namespace: e.Name, Metric: "queue", Labels: map[string]string{"q": "jobs"}, Value: resource.MustParse("40")},
			{Namespace: e.Name, Metric: "queue", Labels: map[string]string{"q": "other"}, Value: resource.MustParse("1000")},
		},
	})
	q := func(s string) *resource.Quantity { v := resource.MustParse(s); return &v }
	e.createHPA(&autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			MinReplicas: ptr.To[int32](1), MaxReplicas: 20,
			Metrics: []autoscalingv2.MetricSpec{
				// 30 per pod against 20: 3 replicas.
				{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
					Metric: autoscalingv2.MetricIdentifier{Name: "rps"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: q("20")}}},
				// 100 against 50: twice the ready pods, 4.
				{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
					DescribedObject: autoscalingv2.CrossVersionObjectReference{APIVersion: "v1", Kind: "Service", Name: "front"},
					Metric:          autoscalingv2.MetricIdentifier{Name: "latency"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: q("50")}}},
				// 40 (series q=jobs) at 10 per replica: 4.
				{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
					Metric: autoscalingv2.MetricIdentifier{Name: "queue", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"q": "jobs"}}},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: q("10")}}},
			},
		},
	})
	e.waitReplicas(4)
	got := e.waitCondition("web", autoscalingv2.ScalingActive, v1.ConditionTrue, "ValidMetricFound")
	if len(got.Status.CurrentMetrics) != 3 {
		t.Fatalf("currentMetrics %+v", got.Status.CurrentMetrics)
	}
	m := got.Status.CurrentMetrics
	if m[0].Pods.Current.AverageValue.Cmp(resource.MustParse("30")) != 0 || m[1].Object.Current.Value.Cmp(resource.MustParse("100")) != 0 || m[2].External.Current.AverageValue.Cmp(resource.MustParse("20")) != 0 {
		t.Errorf("currentMetrics pods %v object %v external %v", m[0].Pods.Current.AverageValue, m[1].Object.Current.Value, m[2].External.Current.AverageValue)
	}
}

// Bad input: a target without a scale subresource, a missing target, and
// metrics the API does not have: conditions and Events, and other HPAs
// keep working.
func TestBadTargetsAndMissingMetrics(t *testing.T) {
	e := setup(t)
	e.deployment(2)
	e.cpu("200m")
	// A ControllerRevision has no scale subresource.
	if _, err := e.Client.AppsV1().ControllerRevisions(e.Name).Create(e.Ctx, &apps.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "rev"}, Revision: 1, Data: runtime.RawExtension{Raw: []byte("{}")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	noScale := cpuHPA("noscale", 50, 1, 5)
	noScale.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "ControllerRevision", Name: "rev"}
	e.createHPA(noScale)
	missing := cpuHPA("missing", 50, 1, 5)
	missing.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "nope"}
	e.createHPA(missing)
	e.createHPA(cpuHPA("web", 50, 1, 3))

	got := e.waitCondition("noscale", autoscalingv2.AbleToScale, v1.ConditionFalse, "FailedGetScale")
	if c := condition(got, autoscalingv2.AbleToScale); !strings.HasPrefix(c.Message, "the HPA controller was unable to get the target's current scale: ") {
		t.Errorf("message %q", c.Message)
	}
	t.Logf("no scale subresource: %s", condition(got, autoscalingv2.AbleToScale).Message)
	e.WaitEvents("HorizontalPodAutoscaler", "noscale", "FailedGetScale", 1, timeout)
	got = e.waitCondition("missing", autoscalingv2.AbleToScale, v1.ConditionFalse, "FailedGetScale")
	if c := condition(got, autoscalingv2.AbleToScale); c.Message != `the HPA controller was unable to get the target's current scale: deployments.apps "nope" not found` {
		t.Errorf("message %q", c.Message)
	}
	e.waitReplicas(3)

	// A second HPA on the same pods: both refuse to scale them.
	custom := cpuHPA("custom", 50, 1, 5)
	custom.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
		Metric: autoscalingv2.MetricIdentifier{Name: "unknown"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: resource.NewQuantity(1, resource.DecimalSI)}}}}
	e.createHPA(custom)
	got = e.waitCondition("custom", autoscalingv2.ScalingActive, v1.ConditionFalse, "AmbiguousSelector")
	want := "pods by selector app=web are controlled by more than one HPA (e.g. [" + e.Name + "/custom " + e.Name + "/web])"
	if c := condition(got, autoscalingv2.ScalingActive); c.Message != want {
		t.Errorf("message %q", c.Message)
	}
	e.waitCondition("web", autoscalingv2.ScalingActive, v1.ConditionFalse, "AmbiguousSelector")

	// Without the first, a custom metric nobody serves.
	if err := e.Client.AutoscalingV2().HorizontalPodAutoscalers(e.Name).Delete(e.Ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	got = e.waitCondition("custom", autoscalingv2.ScalingActive, v1.ConditionFalse, "FailedGetPodsMetric")
	if c := condition(got, autoscalingv2.ScalingActive); !strings.HasPrefix(c.Message, "the HPA was unable to compute the replica count: unable to get metric unknown: unable to fetch metrics from custom metrics API: ") {
		t.Errorf("message %q", c.Message)
	}
	e.WaitEvents("HorizontalPodAutoscaler", "custom", "FailedComputeMetricsReplicas", 1, timeout)
}

// The metrics API goes away and comes back.
func TestMetricsAPIDown(t *testing.T) {
	e := setup(t)
	e.deployment(2)
	e.cpu("50m")
	e.createHPA(cpuHPA("web", 50, 1, 5))
	e.waitCondition("web", autoscalingv2.ScalingActive, v1.ConditionTrue, "ValidMetricFound")

	if err := e.metrics.Unregister(e.Ctx, e.cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.metrics.Register(e.Ctx, e.cfg); err != nil {
			t.Error(err)
		}
	})
	got := e.waitCondition("web", autoscalingv2.ScalingActive, v1.ConditionFalse, "FailedGetResourceMetric")
	c := condition(got, autoscalingv2.ScalingActive)
	if !strings.HasPrefix(c.Message, "the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: ") {
		t.Errorf("message %q", c.Message)
	}
	e.WaitEvents("HorizontalPodAutoscaler", "web", "FailedComputeMetricsReplicas", 1, timeout)

	if err := e.metrics.Register(e.Ctx, e.cfg); err != nil {
		t.Fatal(err)
	}
	e.waitCondition("web", autoscalingv2.ScalingActive, v1.ConditionTrue, "ValidMetricFound")

	// Registered but failing: the backend answers 503, and the Status it
	// sends is the message.
	e.metrics.Set(metricsapi.Values{Unavailable: ptr.To(true)})
	t.Cleanup(func() { e.metrics.Set(metricsapi.Values{Unavailable: ptr.To(false)}) })
	got = e.waitCondition("web", autoscalingv2.ScalingActive, v1.ConditionFalse, "FailedGetResourceMetric")
	want := "the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: the metrics source is unavailable"
	if c := condition(got, autoscalingv2.ScalingActive); c.Message != want {
		t.Errorf("message %q", c.Message)
	}
	if c := condition(got, autoscalingv2.AbleToScale); c.Status != v1.ConditionTrue || c.Reason != "SucceededGetScale" {
		t.Errorf("AbleToScale %s %s", c.Status, c.Reason)
	}
	e.metrics.Set(metricsapi.Values{Unavailable: ptr.To(false)})
	e.waitCondition("web", autoscalingv2.ScalingActive, v1.ConditionTrue, "ValidMetricFound")
	e.waitReplicas(2)
}
