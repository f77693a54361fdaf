package podautoscaler

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	resourcehelpers "k8s.io/component-helpers/resource"

	"github.com/kcm-dev/kcm/internal/controller/podranking"
	"github.com/kcm-dev/kcm/pkg/controller/podautoscaler/metrics"
)

// podGroups sorts the target's pods for a calculation.
type podGroups struct {
	// ready counts the pods whose metric counts as is.
	ready int
	// unready pods (pending, or for CPU not yet ready or measured since
	// becoming ready) count as using nothing on a scale-up and not at all
	// otherwise.
	unready sets.Set[string]
	// missing pods have no metric: they count as using nothing on a
	// scale-up and the target (resources: their request, or the target
	// utilization if above 100%) on a scale-down.
	missing sets.Set[string]
	// ignored pods (being deleted, failed) do not count.
	ignored sets.Set[string]
}

// groupPods sorts pods by how their metric counts. For CPU, a pod that
// started less than cpuInitializationPeriod ago counts only once it is
// ready and its metric window began after it became ready; an older one
// is unready only if it is not ready and never was (its readiness last
// changed within initialReadinessDelay of its start).
func groupPods(pods []*v1.Pod, m metrics.PodMetricsInfo, resource v1.ResourceName, cpuInitializationPeriod, initialReadinessDelay time.Duration, now time.Time) podGroups {
	g := podGroups{unready: sets.New[string](), missing: sets.New[string](), ignored: sets.New[string]()}
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil || pod.Status.Phase == v1.PodFailed {
			g.ignored.Insert(pod.Name)
			continue
		}
		if pod.Status.Phase == v1.PodPending {
			g.unready.Insert(pod.Name)
			continue
		}
		metric, found := m[pod.Name]
		if !found {
			g.missing.Insert(pod.Name)
			continue
		}
		if resource == v1.ResourceCPU && cpuUnready(pod, metric, cpuInitializationPeriod, initialReadinessDelay, now) {
			g.unready.Insert(pod.Name)
			continue
		}
		g.ready++
	}
	return g
}

func cpuUnready(pod *v1.Pod, metric metrics.PodMetric, cpuInitializationPeriod, initialReadinessDelay time.Duration, now time.Time) bool {
	cond := podranking.ReadyCondition(&pod.Status)
	if cond == nil || pod.Status.StartTime == nil {
		return true
	}
	start := pod.Status.StartTime.Time
	if start.Add(cpuInitializationPeriod).After(now) {
		return cond.Status == v1.ConditionFalse || metric.Timestamp.Before(cond.LastTransitionTime.Time.Add(metric.Window))
	}
	return cond.Status == v1.ConditionFalse && start.Add(initialReadinessDelay).After(cond.LastTransitionTime.Time)
}

// removeMetrics drops the metrics of the named pods.
func removeMetrics(m metrics.PodMetricsInfo, pods sets.Set[string]) {
	for name := range pods {
		delete(m, name)
	}
}

// podRequests returns each pod's request of resource in milli-units: the
// named container's, else the pod-level request when the pod sets one
// (PodLevelResources), else the sum of its containers' and restartable
// init containers'. A missing request is an error.
func podRequests(pods []*v1.Pod, container string, resource v1.ResourceName, podLevelResources bool) (map[string]int64, error) {
	requests := make(map[string]int64, len(pods))
	for _, pod := range pods {
		var request int64
		var err error
		if podLevelResources && container == "" && resourcehelpers.IsPodLevelRequestsSet(pod) {
			request, err = podLevelRequest(pod, resource)
		} else {
			request, err = containerRequests(pod, container, resource)
		}
		if err != nil {
			return nil, err
		}
		requests[pod.Name] = request
	}
	return requests, nil
}

func podLevelRequest(pod *v1.Pod, resource v1.ResourceName) (int64, error) {
	reqs := resourcehelpers.PodRequests(pod, resourcehelpers.PodResourcesOptions{})
	q, ok := reqs[resource]
	if !ok {
		return 0, fmt.Errorf("missing pod-level request for %s in Pod %s", resource, pod.Name)
	}
	return q.MilliValue(), nil
}

func containerRequests(pod *v1.Pod, container string, resource v1.ResourceName) (int64, error) {
	containers := append([]v1.Container{}, pod.Spec.Containers...)
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			containers = append(containers, c)
		}
	}
	var total int64
	for _, c := range containers {
		if container != "" && c.Name != container {
			continue
		}
		q, ok := c.Resources.Requests[resource]
		if !ok {
			return 0, fmt.Errorf("missing request for %s in container %s of Pod %s", resource, c.Name, pod.Name)
		}
		total += q.MilliValue()
		if container == c.Name {
			return total, nil
		}
	}
	if container != "" {
		return 0, fmt.Errorf("container %s not found in Pod %s", container, pod.Name)
	}
	return total, nil
}
