package podautoscaler

import (
	"errors"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

const cpuDesc = "cpu resource utilization (percentage of request)"

func TestSyncScalesUpOnCPU(t *testing.T) {
	f := newFixture(t, 3, nPods(3))
	f.metrics.resources = cpuLevels(1000, 1000, 1000) // 100% of the requests
	f.create(newHPA("web"))
	if err := f.sync("web"); err != nil {
		t.Fatal(err)
	}
	f.wantReplicas(6)
	f.wantEvents("Normal SuccessfulRescale New size: 6; reason: " + cpuDesc + " above target")
	f.wantCondition(autoscalingv2.AbleToScale, "True SucceededRescale: the HPA controller was able to update the target scale to 6")
	f.wantCondition(autoscalingv2.ScalingActive, "True ValidMetricFound: the HPA was able to successfully calculate a replica count from "+cpuDesc)
	f.wantCondition(autoscalingv2.ScalingLimited, "False DesiredWithinRange: the desired count is within the acceptable range")
	f.wantCondition(autoscalingv2.ScaledToZero, "False NotScaledToZero: the HPA controller did not scale the workload to zero")
	st := f.hpa.Status
	if st.CurrentReplicas != 3 || st.DesiredReplicas != 6 || st.LastScaleTime == nil || !st.LastScaleTime.Time.Equal(t0) || ptr.Deref(st.ObservedGeneration, 0) != 1 {
		t.Errorf("status = %+v", st)
	}
	var types []string
	for _, c := range st.Conditions {
		types = append(types, string(c.Type))
	}
	if got := strings.Join(types, ","); got != "AbleToScale,ScalingActive,ScalingLimited,ScaledToZero" {
		t.Errorf("condition order %s", got)
	}
	m := st.CurrentMetrics
	if len(m) != 1 || m[0].Resource == nil || *m[0].Resource.Current.AverageUtilization != 100 || m[0].Resource.Current.AverageValue.Cmp(resource.MustParse("2")) != 0 {
		t.Errorf("currentMetrics = %+v", m)
	}
}

func TestSyncScaleUpLimitWithoutBehavior(t *testing.T) {
	f := newFixture(t, 2, nPods(2))
	f.metrics.resources = cpuLevels(5000, 5000) // 500%
	f.create(newHPA("web", withMinMax(1, 20)))
	if err := f.sync("web"); err != nil {
		t.Fatal(err)
	}
	f.wantReplicas(4)
	f.wantCondition(autoscalingv2.ScalingLimited, "True ScaleUpLimit: the desired replica count is increasing faster than the maximum scale rate")
}

func TestSyncDownscaleStabilizationFlag(t *testing.T) {
	f := newFixture(t, 5, nPods(5))
	f.metrics.resources = cpuLevels(200, 200, 200, 200, 200) // 20% of 50%: 2 replicas
	f.create(newHPA("web"))
	if err := f.sync("web"); err != nil {
		t.Fatal(err)
	}
	f.wantReplicas(5)
	f.wantEvents()
	f.wantCondition(autoscalingv2.AbleToScale, "True ScaleDownStabilized: recent recommendations were higher than current one, applying the highest recent recommendation")
	if f.hpa.Status.DesiredReplicas != 5 || f.hpa.Status.LastScaleTime != nil {
		t.Errorf("status %+v", f.hpa.Status)
	}
	f.clock.Step(5*time.Minute + time.Second)
	if err := f.sync("web"); err != nil {
		t.Fatal(err)
	}
	f.wantReplicas(2)
	f.wantEvents("Normal SuccessfulRescale New size: 2; reason: All metrics below target")
	f.wantCondition(autoscalingv2.AbleToScale, "True SucceededRescale: the HPA controller was able to update the target scale to 2")
}

func TestSyncScaleUpPolicyPeriod(t *testing.T) {
	f := newFixture(t, 2, nPods(2))
	f.metrics.resources = cpuLevels(2500, 2500) // 250% of 50%: five times
	f.create(newHPA("web", withBehavior(rules(0, autoscalingv2.MaxChangePolicySelect, pods(2, 60)), rules(300, autoscalingv2.MaxChangePolicySelect, percent(100, 15)))))
	if err := f.sync("web"); err != nil {
		t.Fatal(err)
	}
	f.wantReplicas(4)
	f.wantCondition(autoscalingv2.AbleToScale, "True SucceededRescale: the HPA controller was able to update the target scale to 4")
	f.wantCondition(autoscalingv2.ScalingLimited, "True ScaleUpLimit: the desired replica count is increasing faster than the maximum scale rate")
	f.wantEvents("Normal SuccessfulRescale New size: 4; reason: " + cpuDesc + " above target")

	// Within the policy's period nothing more may be added.
	f.clock.Step(30 * time.Second)
	f.setPods(nPods(4))
	f.metrics.resources = cpuLevels(2500, 2500, 2500, 2500)
	if err := f.sync("web"); err != nil {
		t.Fatal(err)
	}
	f.wantReplicas(4)
	f.wantEvents()
	f.wantCondition(autoscalingv2.AbleToScale, "True ReadyForNewScale: recommended size matches current size")
	f.wantCondition(autoscalingv2.ScalingLimited, "True ScaleUpLimit: the desired replica count is increasing faster than the maximum scale rate")
	if f.hpa.Status.DesiredReplicas != 4 {
		t.Errorf("desiredReplicas %d", f.hpa.Status.DesiredReplicas)
	}

	// After it, two more.
	f.clock.Step(31 * time.Second)
	if err := f.sync("web"); err != nil {
		t.Fatal(err)
	}
	f.wantReplicas(6)
}

func TestSyncSelectPolicy(t *testing.T) {
	for _, tc := range []struct {
		sel  autoscalingv2.ScalingPolicySelect
		want int32
	}{
		{autoscalingv2.MaxChangePolicySelect, 6},
		{autoscalingv2.MinChangePolicySelect, 4},
		{autoscalingv2.DisabledPolicySelect, 2},
	} {
		t.Run(string(tc.sel), func(t *testing.T) {
			f := newFixture(t, 2, nPods(2))
			f.metrics.resources = cpuLevels(2500, 2500)
			f.create(newHPA("web", withBehavior(rules(0, tc.sel, pods(4, 60), percent(100, 60)), nil)))
			if err := f.sync("web"); err != nil {
				t.Fatal(err)
			}
			f.wantReplicas(tc.want)
			f.wantCondition(autoscalingv2.ScalingLimited, "True ScaleUpLimit: the desired replica count is increasing faster than the maximum scale rate")
		})
	}
}

func TestSyncScaleDownWindowAndPolicy(t *testing.T) {
	f := newFixture(t, 8, nPods(8))
	f.metrics.resources = cpuLevels(100, 100, 100, 100, 100, 100, 100, 100) // 10% of 50%: 2
	f.create(newHPA("web", withBehavior(nil, rules(60, autoscalingv2.MaxChangePolicySelect, percent(50, 15)))))
	if err := f.sync("web"); err != nil {
		t.Fatal(err)
	}
	f.wantReplicas(8)
	f.wantCondition(autoscalingv2.AbleToScale, "True ScaleDownStabilized: recent recommendations were higher than current one, applying the highest recent recommendation")
	f.wantCondition(autoscalingv2.ScalingLimited, "False DesiredWithinRange: the desired count is within the acceptable range")

	f.clock.Step(61 * time.Second)
	if err := f.sync("web"); err != nil {
		t.Fatal(err)
	}
	f.wantReplicas(4)
	f.wantCondition(autoscalingv2.ScalingLimited, "True ScaleDownLimit: the desired replica count is decreasing faster than the maximum scale rate")
	f.wantEvents("Normal SuccessfulRescale New size: 4; reason: All metrics below target")

	// The window now holds only lower recommendations; the policy's
	// period has passed: down to 2 (half of 4).
	f.clock.Step(16 * time.Second)
	f.setPods(nPods(4))
	f.metrics.resources = cpuLevels(100, 100, 100, 100)
	if err := f.sync("web"); err != nil {
		t.Fatal(err)
	}
	f.wantReplicas(2)
	f.wantCondition(autoscalingv2.ScalingLimited, "False DesiredWithinRange: the desired count is within the acceptable range")
}

func TestSyncOutsideMinMax(t *testing.T) {
	f := newFixture(t, 12, nPods(12))
	f.create(newHPA("web"))
	if err := f.sync("web"); err != nil {
		t.Fatal(err)
	}
	f.wantReplicas(10)
	f.wantEvents("Normal SuccessfulRescale New size: 10; reason: Current number of replicas above Spec.MaxReplicas")
	if len(f.metrics.calls) != 0 || f.hpa.Status.CurrentMetrics != nil {
		t.Errorf("metrics read: %v, status %v", f.metrics.calls, f.hpa.Status.CurrentMetrics)
	}
	f.wantCondition(autoscalingv2.ScalingActive, "absent")

	f = newFixture(t, 1, nPods(1))
	f.create(newHPA("web", withMinMax(3, 10)))
	if err := f.sync("web"); err != nil {
		t.Fatal(err)
	}
	f.wantReplicas(3)
	f.wantEvents("Normal SuccessfulRescale New size: 3; reason: Current number of replicas below Spec.MinReplicas")
}

func TestSyncScalingDisabledAtZero(t *testing.T) {
	f := newFixture(t, 0, nil)
	f.create(newHPA("web"))
	if err := f.sync("web"); err != nil {
		t.Fatal(err)
	}
	f.wantReplicas(0)
	f.wantEvents()
	f.wantCondition(autoscalingv2.ScalingActive, "False ScalingDisabled: scaling is disabled since the replica count of the target is zero")
	f.wantCondition(autoscalingv2.AbleToScale, "True SucceededGetScale: the HPA controller was able to get the target's current scale")
}

func TestSyncMetricsUnavailable(t *testing.T) {
	f := newFixture(t, 3, nPods(3))
	f.metrics.err = errors.New("the server is currently unable to handle the request (get pods.metrics.k8s.io)")
	f.create(newHPA("web"))
	err := f.sync("web")
	cause := "failed to get cpu utilization: unable to get metrics for resource cpu: the server is currently unable to handle the request (get pods.metrics.k8s.io)"
	want := "failed to compute desired number of replicas based on listed metrics for Deployment/test-namespace/web: invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: " + cause
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v", err)
	}
	f.wantReplicas(3)
	f.wantEvents("Warning FailedGetResourceMetric "+cause,
		"Warning FailedComputeMetricsReplicas invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: "+cause)
	f.wantCondition(autoscalingv2.ScalingActive, "False FailedGetResourceMetric: the HPA was unable to compute the replica count: "+cause)
	f.wantCondition(autoscalingv2.AbleToScale, "True SucceededGetScale: the HPA controller was able to get the target's current scale")
	if st := f.hpa.Status; st.CurrentReplicas != 3 || len(st.CurrentMetrics) != 1 || st.CurrentMetrics[0].Type != "" {
		t.Errorf("status %+v", st)
	}
}

func TestSyncOneMetricFailsOtherScalesUp(t *testing.T) {
	f := newFixture(t, 3, nPods(3))
	f.metrics.resources = cpuLevels(1000, 1000, 1000)
	f.create(newHPA("web", withMetrics(cpuUtilization(50), autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
		Metric: autoscalingv2.MetricIdentifier{Name: "qps"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: resource.NewQuantity(10, resource.DecimalSI)},
	}})))
	f.metrics.pods = nil // the custom metric returns nothing for the pods
	err := f.sync("web")
	if err == nil || !strings.HasPrefix(err.Error(), "invalid metrics (1 invalid out of 2), first error is: failed to get pods metric value: ") {
		t.Fatalf("err = %v", err)
	}
	f.wantReplicas(6)
	f.wantCondition(autoscalingv2.ScalingActive, "True ValidMetricFound: the HPA was able to successfully calculate a replica count from "+cpuDesc)
}

func TestSyncFailedGetScale(t *testing.T) {
	f := newFixture(t, 3, nPods(3))
	f.create(newHPA("web", func(h *autoscalingv2.HorizontalPodAutoscaler) {
		h.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: "example.com/v1", Kind: "Widget", Name: "w"}
	}))
	err := f.sync("web")
	if err == nil || !strings.HasPrefix(err.Error(), "unable to determine resource for scale target reference: ") {
		t.Fatalf("err = %v", err)
	}
	msg := `no matches for kind "Widget" in group "example.com"`
	f.wantEvents("Warning FailedGetScale " + msg)
	f.wantCondition(autoscalingv2.AbleToScale, "False FailedGetScale: the HPA controller was unable to get the target's current scale: "+msg)
}

func TestSyncAmbiguousSelector(t *testing.T) {
	f := newFixture(t, 3, nPods(3))
	f.metrics.resources = cpuLevels(500, 500, 500)
	f.create(newHPA("a"))
	f.create(newHPA("b"))
	if err := f.sync("a"); err != nil {
		t.Fatal(err)
	}
	f.events()
	err := f.sync("b")
	msg := "pods by selector name=test-pod are controlled by more than one HPA (e.g. [test-namespace/a test-namespace/b])"
	if err == nil || !strings.HasSuffix(err.Error(), msg) {
		t.Fatalf("err = %v", err)
	}
	f.wantEvents("Warning AmbiguousSelector "+msg, "Warning FailedComputeMetricsReplicas "+msg)
}

func TestSyncFailedRescale(t *testing.T) {
	f := newFixture(t, 3, nPods(3))
	f.metrics.resources = cpuLevels(1000, 1000, 1000)
	f.updateErr = errors.New("nope")
	f.create(newHPA("web"))
	if err := f.sync("web"); err == nil || err.Error() != "failed to rescale Deployment/test-namespace/web: nope" {
		t.Fatalf("err = %v", err)
	}
	f.wantEvents("Warning FailedRescale New size: 6; reason: " + cpuDesc + " above target; error: nope")
	f.wantCondition(autoscalingv2.AbleToScale, "False FailedUpdateScale: the HPA controller was unable to update the target scale: nope")
	if f.hpa.Status.DesiredReplicas != 0 || f.hpa.Status.CurrentReplicas != 3 {
		t.Errorf("status %+v", f.hpa.Status)
	}
}

func TestSyncScaleToZeroAndBack(t *testing.T) {
	external := autoscalingv2.MetricSpec{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
		Metric: autoscalingv2.MetricIdentifier{Name: "queue"},
		Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: resource.NewQuantity(10, resource.DecimalSI)},
	}}
	f := newFixture(t, 2, nPods(2))
	f.metrics.external = []int64{0}
	f.create(newHPA("web", withMinMax(0, 10), withMetrics(external),
		withBehavior(rules(0, autoscalingv2.MaxChangePolicySelect, pods(4, 15), percent(100, 15)), rules(0, autoscalingv2.MaxChangePolicySelect, percent(100, 15)))))
	if err := f.sync("web"); err != nil {
		t.Fatal(err)
	}
	f.wantReplicas(0)
	f.wantCondition(autoscalingv2.ScaledToZero, "True ScaledToZero: the HPA controller scaled the workload to zero")
	f.wantEvents("Normal SuccessfulRescale New size: 0; reason: All metrics below target")

	f.clock.Step(20 * time.Second)
	f.setPods(nil)
	f.metrics.external = []int64{25000}
	if err := f.sync("web"); err != nil {
		t.Fatal(err)
	}
	f.wantReplicas(3)
	f.wantEvents("Normal SuccessfulRescale New size: 3; reason: external metric queue(nil) above target")
	f.wantCondition(autoscalingv2.ScaledToZero, "False NotScaledToZero: the HPA controller did not scale the workload to zero")
}

func TestSyncDeletedForgetsHistory(t *testing.T) {
	f := newFixture(t, 3, nPods(3))
	f.metrics.resources = cpuLevels(500, 500, 500)
	f.create(newHPA("web"))
	if err := f.sync("web"); err != nil {
		t.Fatal(err)
	}
	store := f.factory.Autoscaling().V2().HorizontalPodAutoscalers().Informer().GetStore()
	if err := store.Delete(f.hpa); err != nil {
		t.Fatal(err)
	}
	deleted, err := f.c.syncKey(f.ctx, ns+"/web")
	if !deleted || err != nil {
		t.Fatalf("deleted %v, err %v", deleted, err)
	}
	if f.c.history.recommendations[ns+"/web"] != nil {
		t.Error("recommendations kept after deletion")
	}
}

// Bad input is retried once per sync period, not at once and not with a
// growing backoff: an HPA whose target has no scale gets the same Event
// each period while the queue holds nothing in between.
func TestFailingSyncRetriedEverySyncPeriod(t *testing.T) {
	f := newFixture(t, 3, nPods(3))
	t.Cleanup(f.c.queue.ShutDown)
	f.create(newHPA("web", func(h *autoscalingv2.HorizontalPodAutoscaler) {
		h.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: "example.com/v1", Kind: "Widget", Name: "w"}
	}))
	for i := 0; i < 3; i++ {
		if n := f.c.queue.Len(); n != 1 {
			t.Fatalf("sync %d: queue length %d, want 1", i, n)
		}
		// One worker step, as controller.Workers takes it: an error puts
		// the key back rate-limited too.
		key, _ := f.c.queue.Get()
		if err := f.c.sync(f.ctx, key); err == nil {
			t.Fatalf("sync %d: no error", i)
		}
		f.c.queue.AddRateLimited(key)
		f.c.queue.Done(key)
		f.wantEvents(`Warning FailedGetScale no matches for kind "Widget" in group "example.com"`)
		if n := f.c.queue.Len(); n != 0 {
			t.Fatalf("sync %d: queue length %d right after a failed sync, want 0", i, n)
		}
		f.clock.Step(f.c.syncPeriod - time.Second)
		if n := f.c.queue.Len(); n != 0 {
			t.Fatalf("sync %d: queue length %d before the sync period passed, want 0", i, n)
		}
		f.clock.Step(time.Second)
		deadline := time.Now().Add(10 * time.Second)
		for f.c.queue.Len() == 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
}
