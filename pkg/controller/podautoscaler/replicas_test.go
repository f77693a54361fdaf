package podautoscaler

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

var (
	hot  = t0                       // started now: within the CPU initialization period
	cool = t0.Add(-3 * time.Minute) // past it
)

func TestResourceReplicas(t *testing.T) {
	F, T := v1.ConditionFalse, v1.ConditionTrue
	tests := []struct {
		name        string
		pods        []*v1.Pod
		levels      map[string]map[string]int64
		container   string
		target      int32
		tol         *Tolerances
		current     int32
		want        int32
		wantUtil    int32
		wantRaw     int64
		wantErrText string
	}{
		{name: "scale up", pods: nPods(3), levels: cpuLevels(300, 500, 700), target: 30, want: 5, wantUtil: 50, wantRaw: 1000},
		{name: "scale up: container metric", pods: nPods(3), container: "container2",
			levels: map[string]map[string]int64{"test-pod-0": {"container1": 1000, "container2": 300}, "test-pod-1": {"container1": 1000, "container2": 500}, "test-pod-2": {"container1": 1000, "container2": 700}},
			target: 30, want: 5, wantUtil: 50, wantRaw: 500},
		{name: "scale up: unready pod scales less", pods: testPods(podSpec{ready: F}, podSpec{}, podSpec{}),
			levels: cpuLevels(300, 500, 700), target: 30, want: 4, wantUtil: 60, wantRaw: 1200},
		{name: "scale up: hot-CPU pod scales less", pods: testPods(podSpec{started: hot}, podSpec{started: cool}, podSpec{started: cool}),
			levels: cpuLevels(300, 500, 700), target: 30, want: 4, wantUtil: 60, wantRaw: 1200},
		{name: "no scale: unready pods ignored", pods: testPods(podSpec{}, podSpec{ready: F}, podSpec{ready: F}),
			levels: cpuLevels(400, 500, 700), target: 30, want: 3, wantUtil: 40, wantRaw: 800},
		{name: "scale up: failed pods ignored", current: 2,
			pods:   testPods(podSpec{}, podSpec{}, podSpec{phase: v1.PodFailed, ready: F}, podSpec{phase: v1.PodFailed, ready: F}),
			levels: cpuLevels(500, 700), target: 30, want: 4, wantUtil: 60, wantRaw: 1200},
		{name: "scale up: pods being deleted ignored", current: 2,
			pods:   testPods(podSpec{}, podSpec{}, podSpec{deleting: true, ready: F}, podSpec{deleting: true, ready: F}),
			levels: cpuLevels(500, 700), target: 30, want: 4, wantUtil: 60, wantRaw: 1200},
		{name: "scale down", pods: nPods(5), levels: cpuLevels(100, 300, 500, 250, 250), target: 50, want: 3, wantUtil: 28, wantRaw: 560},
		{name: "scale down: unready pods excluded", pods: testPods(podSpec{}, podSpec{}, podSpec{}, podSpec{ready: F}, podSpec{ready: F}),
			levels: cpuLevels(100, 300, 500, 250, 250), target: 50, want: 2, wantUtil: 30, wantRaw: 600},
		{name: "scale down: pending pods excluded", current: 5,
			pods:   testPods(podSpec{}, podSpec{phase: v1.PodPending, ready: F}, podSpec{phase: v1.PodPending, ready: F}, podSpec{phase: v1.PodPending, ready: F}, podSpec{phase: v1.PodPending, ready: F}),
			levels: cpuLevels(100), target: 50, want: 1, wantUtil: 10, wantRaw: 200},
		{name: "superfluous metrics counted", current: 4, pods: nPods(4),
			levels: cpuLevels(4000, 9500, 3000, 7000, 3200, 2000), target: 100, want: 24, wantUtil: 587, wantRaw: 11750},
		{name: "missing metrics count as the request on a scale-down", current: 4, pods: nPods(4),
			levels: cpuLevels(400, 95), target: 100, want: 3, wantUtil: 24, wantRaw: 495},
		{name: "missing metrics count as nothing on a scale-up", current: 3, pods: testPods(podSpec{ready: F}, podSpec{}, podSpec{}),
			levels: cpuLevels(100, 2000), target: 50, want: 4, wantUtil: 200, wantRaw: 4000},
		{name: "no change: an unready pod's missing metric would reverse a scale-down", current: 3, pods: testPods(podSpec{ready: F}, podSpec{ready: T}, podSpec{ready: T}),
			levels: cpuLevels(100, 450), target: 50, want: 3, wantUtil: 45, wantRaw: 900},
		{name: "within tolerance", pods: nPods(3), levels: cpuLevels(1050, 1050, 1050), target: 100, want: 3, wantUtil: 105, wantRaw: 2100},
		{name: "outside a configured 1% scale-up tolerance", pods: nPods(3), levels: cpuLevels(1050, 1050, 1050), target: 100,
			tol: &Tolerances{0.1, 0.01}, want: 4, wantUtil: 105, wantRaw: 2100},
		{name: "no pods", pods: nil, levels: cpuLevels(100), target: 50, wantErrText: "no pods returned by selector"},
		{name: "only unready pods", pods: testPods(podSpec{ready: F}), levels: cpuLevels(100), target: 50,
			wantErrText: "did not receive metrics for targeted pods (pods might be unready)"},
		{name: "missing request", pods: testPods(podSpec{cpu: "0"}), levels: cpuLevels(100), target: 50,
			wantErrText: "no metrics returned matched known pods"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			current := tc.current
			if current == 0 {
				current = int32(len(tc.pods))
			}
			tol := defaultTol
			if tc.tol != nil {
				tol = *tc.tol
			}
			m := &fakeMetrics{resources: tc.levels, window: time.Minute}
			c := newCalc(t, m, tc.pods)
			got, util, raw, _, err := c.resourceReplicas(context.Background(), current, tc.target, v1.ResourceCPU, tol, ns, podSelector, tc.container)
			if tc.wantErrText != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrText) {
					t.Fatalf("err = %v, want %q", err, tc.wantErrText)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want || util != tc.wantUtil || raw != tc.wantRaw {
				t.Errorf("got %d replicas, %d%%, raw %d; want %d, %d%%, %d", got, util, raw, tc.want, tc.wantUtil, tc.wantRaw)
			}
		})
	}
}

func TestResourceReplicasMetricsError(t *testing.T) {
	c := newCalc(t, &fakeMetrics{err: errors.New("boom")}, nPods(1))
	_, _, _, _, err := c.resourceReplicas(context.Background(), 1, 50, v1.ResourceCPU, defaultTol, ns, podSelector, "")
	if err == nil || err.Error() != "unable to get metrics for resource cpu: boom" {
		t.Fatalf("err = %v", err)
	}
}

func TestRawResourceReplicas(t *testing.T) {
	// Average usage 1000m per pod (two containers of 500m) against 800m.
	c := newCalc(t, &fakeMetrics{resources: cpuLevels(500, 500, 500)}, nPods(3))
	got, usage, _, err := c.rawResourceReplicas(context.Background(), 3, 800, v1.ResourceCPU, defaultTol, ns, podSelector, "")
	if err != nil || got != 4 || usage != 1000 {
		t.Fatalf("got %d, %d, %v; want 4, 1000", got, usage, err)
	}
}

func TestPodsMetricReplicas(t *testing.T) {
	F := v1.ConditionFalse
	tests := []struct {
		name      string
		pods      []*v1.Pod
		values    []int64
		current   int32
		target    int64
		tol       *Tolerances
		want      int32
		wantUsage int64
	}{
		{name: "scale up", pods: nPods(3), values: []int64{20000, 10000, 30000}, target: 15000, want: 4, wantUsage: 20000},
		{name: "readiness does not matter for non-CPU metrics", pods: testPods(podSpec{}, podSpec{}, podSpec{ready: F}),
			values: []int64{50000, 10000, 30000}, target: 15000, want: 6, wantUsage: 30000},
		{name: "scale down", pods: nPods(5), values: []int64{12000, 12000, 12000, 12000, 12000}, target: 20000, want: 3, wantUsage: 12000},
		{name: "within tolerance", pods: nPods(3), values: []int64{20000, 21000, 21000}, target: 20000, want: 3, wantUsage: 20666},
		{name: "outside a configured 1% tolerance", pods: nPods(3), values: []int64{20000, 21000, 21000}, target: 20000,
			tol: &Tolerances{0.1, 0.01}, want: 4, wantUsage: 20666},
		{name: "surge pod without a metric counts as the target on a scale-down", pods: nPods(3), current: 2,
			values: []int64{10000, 10000}, target: 17000, want: 2, wantUsage: 10000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			current := tc.current
			if current == 0 {
				current = int32(len(tc.pods))
			}
			tol := defaultTol
			if tc.tol != nil {
				tol = *tc.tol
			}
			values := map[string]int64{}
			for i, v := range tc.values {
				values[tc.pods[i].Name] = v
			}
			m := &fakeMetrics{pods: values}
			c := newCalc(t, m, tc.pods)
			got, usage, _, err := c.podsMetricReplicas(context.Background(), current, tc.target, "qps", tol, ns, podSelector, podSelector)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want || usage != tc.wantUsage {
				t.Errorf("got %d, %d; want %d, %d", got, usage, tc.want, tc.wantUsage)
			}
		})
	}
}

func TestObjectReplicas(t *testing.T) {
	F := v1.ConditionFalse
	ref := &autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", APIVersion: "apps/v1", Name: "some-deployment"}
	tests := []struct {
		name      string
		pods      []*v1.Pod
		value     int64
		current   int32
		target    int64
		want      int32
		wantUsage int64
	}{
		{name: "scale up", pods: nPods(3), current: 3, value: 20000, target: 15000, want: 4, wantUsage: 20000},
		{name: "only ready pods multiply", pods: testPods(podSpec{ready: F}, podSpec{}, podSpec{ready: F}), current: 3, value: 50000, target: 10000, want: 5, wantUsage: 50000},
		{name: "scale down", pods: nPods(5), current: 5, value: 12000, target: 20000, want: 3, wantUsage: 12000},
		{name: "within tolerance", pods: nPods(3), current: 3, value: 20666, target: 20000, want: 3, wantUsage: 20666},
		{name: "from zero: the ratio rounded up", pods: nil, current: 0, value: 20000, target: 15000, want: 2, wantUsage: 20000},
		{name: "saturates", pods: nPods(3), current: 3, value: math.MaxInt64, target: 1, want: math.MaxInt32, wantUsage: math.MaxInt64},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCalc(t, &fakeMetrics{object: ptr.To(tc.value)}, tc.pods)
			got, usage, _, err := c.objectReplicas(context.Background(), tc.current, tc.target, "qps", defaultTol, ns, ref, podSelector, podSelector)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want || usage != tc.wantUsage {
				t.Errorf("got %d, %d; want %d, %d", got, usage, tc.want, tc.wantUsage)
			}
		})
	}
}

func TestObjectPerPodReplicas(t *testing.T) {
	ref := &autoscalingv2.CrossVersionObjectReference{Kind: "Service", APIVersion: "v1", Name: "front"}
	for _, tc := range []struct {
		value, target   int64
		status, want    int32
		wantUsagePerPod int64
	}{
		{value: 20000, target: 5000, status: 3, want: 4, wantUsagePerPod: 6667},
		{value: 12000, target: 4000, status: 3, want: 3, wantUsagePerPod: 4000},
		{value: 6000, target: 4000, status: 5, want: 2, wantUsagePerPod: 1200},
	} {
		c := newCalc(t, &fakeMetrics{object: ptr.To(tc.value)}, nil)
		got, usage, _, err := c.objectPerPodReplicas(context.Background(), tc.status, tc.target, "qps", defaultTol, ns, ref, podSelector)
		if err != nil || got != tc.want || usage != tc.wantUsagePerPod {
			t.Errorf("%+v: got %d, %d, %v", tc, got, usage, err)
		}
	}
}

func TestExternalReplicas(t *testing.T) {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"label": "value"}}
	c := newCalc(t, &fakeMetrics{external: []int64{8000, 600}}, nPods(3))
	got, usage, _, err := c.externalReplicas(context.Background(), 3, 4400, "qps", defaultTol, ns, sel, podSelector)
	if err != nil || got != 6 || usage != 8600 {
		t.Errorf("value target: got %d, %d, %v; want 6, 8600", got, usage, err)
	}
	got, usage, _, err = c.externalPerPodReplicas(context.Background(), 3, 2150, "qps", defaultTol, ns, sel)
	if err != nil || got != 4 || usage != 2867 {
		t.Errorf("average target: got %d, %d, %v; want 4, 2867", got, usage, err)
	}
	got, usage, _, err = c.externalPerPodReplicas(context.Background(), 3, 2900, "qps", defaultTol, ns, sel)
	if err != nil || got != 3 || usage != 2867 {
		t.Errorf("average target within tolerance: got %d, %d, %v; want 3, 2867", got, usage, err)
	}
	c = newCalc(t, &fakeMetrics{external: []int64{math.MaxInt64, 1}}, nPods(1))
	got, usage, _, err = c.externalPerPodReplicas(context.Background(), 1, 1, "qps", defaultTol, ns, sel)
	if err != nil || got != math.MaxInt32 || usage != math.MaxInt64 {
		t.Errorf("overflow: got %d, %d, %v", got, usage, err)
	}
	c = newCalc(t, &fakeMetrics{err: errors.New("down")}, nPods(1))
	_, _, _, err = c.externalReplicas(context.Background(), 1, 1, "qps", defaultTol, ns, sel, podSelector)
	if err == nil || err.Error() != "unable to get external metric test-namespace/qps/&LabelSelector{MatchLabels:map[string]string{label: value,},MatchExpressions:[]LabelSelectorRequirement{},}: down" {
		t.Errorf("err = %v", err)
	}
}

func TestGroupPods(t *testing.T) {
	F := v1.ConditionFalse
	pods := testPods(
		podSpec{},                           // 0 ready
		podSpec{phase: v1.PodPending},       // 1 unready (pending)
		podSpec{},                           // 2 missing
		podSpec{phase: v1.PodFailed},        // 3 ignored
		podSpec{deleting: true},             // 4 ignored
		podSpec{started: hot, readyAt: hot}, // 5 unready: metric window began before it became ready
		podSpec{started: hot, ready: F},     // 6 unready
		podSpec{started: cool, ready: F, readyAt: cool.Add(5 * time.Second)}, // 7 unready: never ready
		podSpec{started: cool, ready: F, readyAt: cool.Add(time.Minute)},     // 8 ready: was ready once
		podSpec{started: hot, readyAt: hot.Add(-2 * time.Minute)},            // 9 ready: measured since ready
	)
	m := map[string]int64{}
	for _, i := range []int{0, 1, 3, 4, 5, 6, 7, 8, 9} {
		m[pods[i].Name] = 100
	}
	info := (&fakeMetrics{pods: m}).podInfo(t0, time.Minute)
	g := groupPods(pods, info, v1.ResourceCPU, 2*time.Minute, 10*time.Second, t0)
	if g.ready != 3 {
		t.Errorf("ready = %d, want 3 (pods 0, 8, 9)", g.ready)
	}
	for set, want := range map[string][]string{"unready": {"test-pod-1", "test-pod-5", "test-pod-6", "test-pod-7"}, "missing": {"test-pod-2"}, "ignored": {"test-pod-3", "test-pod-4"}} {
		got := map[string]interface{ UnsortedList() []string }{"unready": g.unready, "missing": g.missing, "ignored": g.ignored}[set]
		if len(got.UnsortedList()) != len(want) {
			t.Errorf("%s = %v, want %v", set, got.UnsortedList(), want)
		}
	}
	// For other resources readiness does not matter.
	g = groupPods(pods, info, v1.ResourceMemory, 2*time.Minute, 10*time.Second, t0)
	if g.ready != 6 || g.unready.Len() != 1 {
		t.Errorf("memory: ready %d unready %v", g.ready, g.unready.UnsortedList())
	}
}

func TestPodRequests(t *testing.T) {
	pods := nPods(1)
	pods[0].Spec.InitContainers = []v1.Container{
		{Name: "init", Resources: pods[0].Spec.Containers[0].Resources},
		{Name: "sidecar", RestartPolicy: ptr.To(v1.ContainerRestartPolicyAlways), Resources: pods[0].Spec.Containers[0].Resources},
	}
	got, err := podRequests(pods, "", v1.ResourceCPU, true)
	if err != nil || got["test-pod-0"] != 3000 {
		t.Errorf("containers and sidecars: %v, %v", got, err)
	}
	got, err = podRequests(pods, "container2", v1.ResourceCPU, true)
	if err != nil || got["test-pod-0"] != 1000 {
		t.Errorf("one container: %v, %v", got, err)
	}
	if _, err := podRequests(pods, "nope", v1.ResourceCPU, true); err == nil || err.Error() != "container nope not found in Pod test-pod-0" {
		t.Errorf("missing container: %v", err)
	}
	if _, err := podRequests(pods, "", v1.ResourceMemory, true); err == nil || err.Error() != "missing request for memory in container container1 of Pod test-pod-0" {
		t.Errorf("missing request: %v", err)
	}
	pods[0].Spec.Resources = &v1.ResourceRequirements{Requests: pods[0].Spec.Containers[0].Resources.Requests}
	if got, _ := podRequests(pods, "", v1.ResourceCPU, true); got["test-pod-0"] != 1000 {
		t.Errorf("pod-level request: %v", got)
	}
	if got, _ := podRequests(pods, "", v1.ResourceCPU, false); got["test-pod-0"] != 3000 {
		t.Errorf("pod-level request with PodLevelResources off: %v", got)
	}
}
