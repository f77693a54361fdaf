package podautoscaler

import (
	"context"
	"fmt"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kcm-dev/kcm/pkg/controller/podautoscaler/metrics"
)

const ns = "test-namespace"

var (
	t0          = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	podLabels   = map[string]string{"name": "test-pod"}
	podSelector = labels.SelectorFromSet(podLabels)
	defaultTol  = Tolerances{0.1, 0.1}
)

// fakeMetrics serves fixed values: per pod name, per container, for
// resources; per pod for custom metrics; one value per object; external
// series. An error set for a kind is returned instead.
type fakeMetrics struct {
	resources map[string]map[string]int64 // pod -> container -> milli CPU
	timestamp time.Time
	window    time.Duration

	pods     map[string]int64
	object   *int64
	external []int64
	err      error

	// calls records the metric names and selectors asked for.
	calls []string
}

func (f *fakeMetrics) GetResourceMetric(_ context.Context, res v1.ResourceName, namespace string, selector labels.Selector, container string) (metrics.PodMetricsInfo, time.Time, error) {
	f.calls = append(f.calls, fmt.Sprintf("resource %s %s %s %s", res, namespace, selector, container))
	if f.err != nil {
		return nil, time.Time{}, f.err
	}
	if len(f.resources) == 0 {
		return nil, time.Time{}, fmt.Errorf("no metrics returned from resource metrics API")
	}
	out := metrics.PodMetricsInfo{}
	for pod, cs := range f.resources {
		var sum int64
		found := false
		for name, v := range cs {
			if container == "" || container == name {
				sum += v
				found = true
			}
		}
		if found {
			out[pod] = metrics.PodMetric{Timestamp: f.timestamp, Window: f.window, Value: sum}
		}
	}
	return out, f.timestamp, nil
}

func (f *fakeMetrics) GetRawMetric(_ context.Context, name, namespace string, selector, metricSelector labels.Selector) (metrics.PodMetricsInfo, time.Time, error) {
	f.calls = append(f.calls, fmt.Sprintf("pods %s %s %s %s", name, namespace, selector, metricSelector))
	if f.err != nil {
		return nil, time.Time{}, f.err
	}
	out := metrics.PodMetricsInfo{}
	for pod, v := range f.pods {
		out[pod] = metrics.PodMetric{Timestamp: f.timestamp, Window: time.Minute, Value: v}
	}
	return out, f.timestamp, nil
}

func (f *fakeMetrics) GetObjectMetric(_ context.Context, name, namespace string, ref *autoscalingv2.CrossVersionObjectReference, metricSelector labels.Selector) (int64, time.Time, error) {
	f.calls = append(f.calls, fmt.Sprintf("object %s %s %s/%s %s", name, namespace, ref.Kind, ref.Name, metricSelector))
	if f.err != nil {
		return 0, time.Time{}, f.err
	}
	return *f.object, f.timestamp, nil
}

func (f *fakeMetrics) GetExternalMetric(_ context.Context, name, namespace string, selector labels.Selector) ([]int64, time.Time, error) {
	f.calls = append(f.calls, fmt.Sprintf("external %s %s %s", name, namespace, selector))
	if f.err != nil {
		return nil, time.Time{}, f.err
	}
	return f.external, f.timestamp, nil
}

// podSpec describes one test pod.
type podSpec struct {
	phase    v1.PodPhase
	ready    v1.ConditionStatus
	started  time.Time // zero: long ago
	readyAt  time.Time // Ready's lastTransitionTime
	deleting bool
	cpu      string // each of the two containers' request
}

func testPods(specs ...podSpec) []*v1.Pod {
	var pods []*v1.Pod
	for i, s := range specs {
		phase, ready := s.phase, s.ready
		if phase == "" {
			phase = v1.PodRunning
		}
		if ready == "" {
			ready = v1.ConditionTrue
		}
		cpu := s.cpu
		if cpu == "" {
			cpu = "1"
		}
		req := v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}}
		p := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("test-pod-%d", i), Labels: podLabels},
			Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "container1", Resources: req}, {Name: "container2", Resources: req}}},
			Status: v1.PodStatus{
				Phase:      phase,
				StartTime:  &metav1.Time{Time: s.started},
				Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: ready, LastTransitionTime: metav1.Time{Time: s.readyAt}}},
			},
		}
		if s.deleting {
			p.DeletionTimestamp = &metav1.Time{Time: t0}
		}
		pods = append(pods, p)
	}
	return pods
}

// nPods returns n running, ready pods.
func nPods(n int) []*v1.Pod { return testPods(make([]podSpec, n)...) }

func podLister(t testing.TB, pods []*v1.Pod) corelisters.PodLister {
	t.Helper()
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, p := range pods {
		if err := idx.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	return corelisters.NewPodLister(idx)
}

// cpuLevels sets each pod's usage: both containers use the level.
func cpuLevels(levels ...int64) map[string]map[string]int64 {
	out := map[string]map[string]int64{}
	for i, l := range levels {
		out[fmt.Sprintf("test-pod-%d", i)] = map[string]int64{"container1": l, "container2": l}
	}
	return out
}

func newCalc(t testing.TB, m metrics.Client, pods []*v1.Pod) *replicaCalculator {
	return &replicaCalculator{
		metrics:                 m,
		pods:                    podLister(t, pods),
		clock:                   testingclock.NewFakeClock(t0),
		cpuInitializationPeriod: 2 * time.Minute,
		initialReadinessDelay:   10 * time.Second,
	}
}

// podInfo returns f.pods as metrics measured at ts over window.
func (f *fakeMetrics) podInfo(ts time.Time, window time.Duration) metrics.PodMetricsInfo {
	out := metrics.PodMetricsInfo{}
	for pod, v := range f.pods {
		out[pod] = metrics.PodMetric{Timestamp: ts, Window: window, Value: v}
	}
	return out
}

func klogFor(f *fixture) klog.Logger { return klog.FromContext(f.ctx) }
