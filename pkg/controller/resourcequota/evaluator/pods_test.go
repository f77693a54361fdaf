package evaluator

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	quota "k8s.io/apiserver/pkg/quota/v1"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

func container(requests, limits corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits}}
}

func podWith(containers ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: corev1.PodSpec{Containers: containers}}
}

func TestPodUsage(t *testing.T) {
	now := time.Now()
	grace := int64(30)
	sidecar := container(rl("cpu", "1", "memory", "50M"), nil)
	sidecar.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	cases := []struct {
		name string
		pod  *corev1.Pod
		want corev1.ResourceList
	}{
		{"cpu", podWith(container(rl("cpu", "1m"), rl("cpu", "2m"))),
			rl("count/pods", "1", "pods", "1", "cpu", "1m", "requests.cpu", "1m", "limits.cpu", "2m")},
		{"memory", podWith(container(rl("memory", "1m"), rl("memory", "2m"))),
			rl("count/pods", "1", "pods", "1", "memory", "1m", "requests.memory", "1m", "limits.memory", "2m")},
		{"ephemeral storage", podWith(container(rl("ephemeral-storage", "32Mi"), rl("ephemeral-storage", "64Mi"))),
			rl("count/pods", "1", "pods", "1", "ephemeral-storage", "32Mi", "requests.ephemeral-storage", "32Mi", "limits.ephemeral-storage", "64Mi")},
		{"hugepages", podWith(container(rl("hugepages-2Mi", "100Mi"), nil)),
			rl("count/pods", "1", "pods", "1", "hugepages-2Mi", "100Mi", "requests.hugepages-2Mi", "100Mi")},
		{"extended resource counts as requests only", podWith(container(rl("example.com/dongle", "3"), rl("example.com/dongle", "3"))),
			rl("count/pods", "1", "pods", "1", "requests.example.com/dongle", "3")},
		{"device class resource", podWith(container(rl("deviceclass.resource.kubernetes.io/dongle", "3"), nil)),
			rl("count/pods", "1", "pods", "1", "requests.deviceclass.resource.kubernetes.io/dongle", "3")},
		{"succeeded pod counts only as an object", func() *corev1.Pod {
			p := podWith(container(rl("cpu", "1"), nil))
			p.Status.Phase = corev1.PodSucceeded
			return p
		}(), rl("count/pods", "1")},
		{"failed pod", func() *corev1.Pod {
			p := podWith(container(rl("cpu", "1"), nil))
			p.Status.Phase = corev1.PodFailed
			return p
		}(), rl("count/pods", "1")},
		{"past its grace period", func() *corev1.Pod {
			p := podWith(container(rl("cpu", "1"), nil))
			p.DeletionTimestamp = &metav1.Time{Time: now.Add(-61 * time.Second)}
			p.DeletionGracePeriodSeconds = &grace
			return p
		}(), rl("count/pods", "1")},
		{"terminating within its grace period", func() *corev1.Pod {
			p := podWith(container(rl("cpu", "1"), nil))
			p.DeletionTimestamp = &metav1.Time{Time: now}
			p.DeletionGracePeriodSeconds = &grace
			return p
		}(), rl("count/pods", "1", "pods", "1", "cpu", "1", "requests.cpu", "1")},
		{"init containers define the minimum, sidecars add up", func() *corev1.Pod {
			p := podWith(container(rl("cpu", "1", "memory", "50M"), nil), container(rl("cpu", "1", "memory", "50M"), nil))
			p.Spec.InitContainers = []corev1.Container{sidecar, container(rl("cpu", "4", "memory", "100M"), nil)}
			return p
		}(), rl("count/pods", "1", "pods", "1", "cpu", "5", "requests.cpu", "5", "memory", "150M", "requests.memory", "150M")},
		{"overhead", func() *corev1.Pod {
			p := podWith(container(rl("cpu", "1"), rl("cpu", "2")))
			p.Spec.Overhead = rl("cpu", "250m", "memory", "10Mi")
			return p
		}(), rl("count/pods", "1", "pods", "1", "cpu", "1250m", "requests.cpu", "1250m", "limits.cpu", "2250m",
			"memory", "10Mi", "requests.memory", "10Mi")},
		{"pod-level resources", func() *corev1.Pod {
			p := podWith(container(rl("cpu", "1"), nil))
			p.Spec.Resources = &corev1.ResourceRequirements{Requests: rl("cpu", "3", "memory", "1Gi"), Limits: rl("cpu", "4")}
			return p
		}(), rl("count/pods", "1", "pods", "1", "cpu", "3", "requests.cpu", "3", "limits.cpu", "4",
			"memory", "1Gi", "requests.memory", "1Gi")},
		{"resized: the larger of spec and status", func() *corev1.Pod {
			p := podWith(container(rl("cpu", "1"), nil))
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c",
				AllocatedResources: rl("cpu", "2"), Resources: &corev1.ResourceRequirements{Requests: rl("cpu", "2")}}}
			return p
		}(), rl("count/pods", "1", "pods", "1", "cpu", "2", "requests.cpu", "2")},
	}
	for _, tc := range cases {
		requireUsage(t, tc.name, PodUsage(tc.pod, now, allFeatures), tc.want)
	}
}

func TestPodUsageWithoutPodLevelResources(t *testing.T) {
	p := podWith(container(rl("cpu", "1"), nil))
	p.Spec.Resources = &corev1.ResourceRequirements{Requests: rl("cpu", "3")}
	requireUsage(t, "gate off", PodUsage(p, time.Now(), Features{}), rl("count/pods", "1", "pods", "1", "cpu", "1", "requests.cpu", "1"))
}

func TestPodMatchingResources(t *testing.T) {
	e := NewPods(list(), testingclock.NewFakePassiveClock(time.Now()), allFeatures)
	in := []corev1.ResourceName{"count/pods", "pods", "cpu", "requests.memory", "limits.ephemeral-storage",
		"hugepages-1Gi", "requests.hugepages-2Mi", "requests.example.com/gpu", "example.com/gpu",
		"requests.deviceclass.resource.kubernetes.io/gpu", "services", "count/secrets", "requests.storage"}
	want := []corev1.ResourceName{"count/pods", "pods", "cpu", "requests.memory", "limits.ephemeral-storage",
		"hugepages-1Gi", "requests.hugepages-2Mi", "requests.example.com/gpu", "requests.deviceclass.resource.kubernetes.io/gpu"}
	got := e.MatchingResources(in)
	if !quota.ToSet(got).Equal(quota.ToSet(want)) || len(got) != len(want) {
		t.Errorf("MatchingResources = %v, want %v", got, want)
	}
}

func TestPodScopes(t *testing.T) {
	bestEffort := podWith(container(nil, nil))
	burstable := podWith(container(rl("cpu", "1"), nil))
	terminating := podWith(container(nil, nil))
	terminating.Spec.ActiveDeadlineSeconds = ptr.To[int64](60)
	guaranteedByStatus := podWith(container(nil, nil))
	guaranteedByStatus.Status.QOSClass = corev1.PodQOSGuaranteed
	high := podWith(container(nil, nil))
	high.Spec.PriorityClassName = "high"
	cross := podWith(container(nil, nil))
	cross.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
			PodAffinityTerm: corev1.PodAffinityTerm{NamespaceSelector: &metav1.LabelSelector{}}}}}}
	sameNamespace := podWith(container(nil, nil))
	sameNamespace.Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: "zone"}}}}

	exists := func(s corev1.ResourceQuotaScope) corev1.ScopedResourceSelectorRequirement {
		return corev1.ScopedResourceSelectorRequirement{ScopeName: s, Operator: corev1.ScopeSelectorOpExists}
	}
	priorityIn := corev1.ScopedResourceSelectorRequirement{ScopeName: corev1.ResourceQuotaScopePriorityClass,
		Operator: corev1.ScopeSelectorOpIn, Values: []string{"high"}}
	priorityNotIn := corev1.ScopedResourceSelectorRequirement{ScopeName: corev1.ResourceQuotaScopePriorityClass,
		Operator: corev1.ScopeSelectorOpNotIn, Values: []string{"high"}}
	priorityAbsent := corev1.ScopedResourceSelectorRequirement{ScopeName: corev1.ResourceQuotaScopePriorityClass,
		Operator: corev1.ScopeSelectorOpDoesNotExist}
	cases := []struct {
		pod   *corev1.Pod
		scope corev1.ScopedResourceSelectorRequirement
		want  bool
	}{
		{bestEffort, exists(corev1.ResourceQuotaScopeBestEffort), true},
		{bestEffort, exists(corev1.ResourceQuotaScopeNotBestEffort), false},
		{burstable, exists(corev1.ResourceQuotaScopeBestEffort), false},
		{burstable, exists(corev1.ResourceQuotaScopeNotBestEffort), true},
		{guaranteedByStatus, exists(corev1.ResourceQuotaScopeBestEffort), false},
		{terminating, exists(corev1.ResourceQuotaScopeTerminating), true},
		{terminating, exists(corev1.ResourceQuotaScopeNotTerminating), false},
		{bestEffort, exists(corev1.ResourceQuotaScopeNotTerminating), true},
		{high, exists(corev1.ResourceQuotaScopePriorityClass), true},
		{bestEffort, exists(corev1.ResourceQuotaScopePriorityClass), false},
		{high, priorityIn, true},
		{bestEffort, priorityIn, false},
		{high, priorityNotIn, false},
		{bestEffort, priorityNotIn, true},
		{bestEffort, priorityAbsent, true},
		{high, priorityAbsent, false},
		{cross, exists(corev1.ResourceQuotaScopeCrossNamespacePodAffinity), true},
		{sameNamespace, exists(corev1.ResourceQuotaScopeCrossNamespacePodAffinity), false},
		{bestEffort, exists(corev1.ResourceQuotaScopeVolumeAttributesClass), false},
	}
	for i, tc := range cases {
		got, err := PodMatchesScope(tc.pod, tc.scope, allFeatures)
		if err != nil || got != tc.want {
			t.Errorf("case %d (%s %s): %v, %v; want %v", i, tc.scope.ScopeName, tc.scope.Operator, got, err, tc.want)
		}
	}
	if _, err := PodMatchesScope(high, corev1.ScopedResourceSelectorRequirement{
		ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: "Bogus"}, allFeatures); err == nil {
		t.Error("invalid operator: want an error")
	}
}

func TestComputeQOS(t *testing.T) {
	guaranteed := podWith(container(rl("cpu", "1", "memory", "1Gi"), rl("cpu", "1", "memory", "1Gi")))
	mixed := podWith(container(rl("cpu", "1", "memory", "1Gi"), rl("cpu", "1", "memory", "1Gi")), container(nil, nil))
	podLevel := podWith(container(nil, nil))
	podLevel.Spec.Resources = &corev1.ResourceRequirements{Requests: rl("cpu", "1", "memory", "1Gi"), Limits: rl("cpu", "1", "memory", "1Gi")}
	emptyPodLevel := podWith(container(rl("cpu", "1"), nil))
	emptyPodLevel.Spec.Resources = &corev1.ResourceRequirements{}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		f    Features
		want corev1.PodQOSClass
	}{
		{"guaranteed", guaranteed, allFeatures, corev1.PodQOSGuaranteed},
		{"guaranteed and best effort containers", mixed, allFeatures, corev1.PodQOSBurstable},
		{"pod-level resources", podLevel, allFeatures, corev1.PodQOSGuaranteed},
		{"pod-level resources, gate off", podLevel, Features{}, corev1.PodQOSBestEffort},
		{"empty pod-level resources, fixed", emptyPodLevel, allFeatures, corev1.PodQOSBurstable},
		{"empty pod-level resources, unfixed", emptyPodLevel, Features{PodLevelResources: true}, corev1.PodQOSBestEffort},
	} {
		if got := computeQOS(tc.pod, tc.f); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// UsageStats sums the pods that match the quota's scopes and selector.
func TestPodUsageStats(t *testing.T) {
	now := time.Now()
	a := podWith(container(rl("cpu", "1", "memory", "1Gi"), rl("cpu", "2", "memory", "1Gi")))
	b := podWith(container(nil, nil))
	c := podWith(container(rl("cpu", "500m"), nil))
	c.Spec.ActiveDeadlineSeconds = ptr.To[int64](10)
	e := NewPods(list(a, b, c), testingclock.NewFakePassiveClock(now), allFeatures)
	names := []corev1.ResourceName{"pods", "requests.cpu", "count/pods"}
	stats, err := e.UsageStats(quota.UsageStatsOptions{Namespace: "ns", Resources: names})
	if err != nil {
		t.Fatal(err)
	}
	requireUsage(t, "all", quota.Mask(stats.Used, names), rl("pods", "3", "requests.cpu", "1500m", "count/pods", "3"))
	stats, _ = e.UsageStats(quota.UsageStatsOptions{Namespace: "ns", Resources: names,
		Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotBestEffort, corev1.ResourceQuotaScopeNotTerminating}})
	requireUsage(t, "NotBestEffort NotTerminating", quota.Mask(stats.Used, names), rl("pods", "1", "requests.cpu", "1", "count/pods", "1"))
	stats, _ = e.UsageStats(quota.UsageStatsOptions{Namespace: "ns", Resources: names, Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}})
	requireUsage(t, "BestEffort", quota.Mask(stats.Used, names), rl("pods", "1", "requests.cpu", "0", "count/pods", "1"))
}
