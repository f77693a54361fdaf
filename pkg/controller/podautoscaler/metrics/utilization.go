package metrics

import "errors"

// ResourceUtilizationRatio returns the ratio of the pods' utilization (the
// sum of their usage over the sum of their requests, in whole percent) to
// the target percentage, that utilization, and the average usage. Metrics
// of pods without a request are ignored.
func ResourceUtilizationRatio(metrics PodMetricsInfo, requests map[string]int64, targetUtilization int32) (ratio float64, utilization int32, average int64, err error) {
	var usageTotal, requestTotal int64
	n := 0
	for pod, m := range metrics {
		request, ok := requests[pod]
		if !ok {
			continue
		}
		usageTotal += m.Value
		requestTotal += request
		n++
	}
	if requestTotal == 0 {
		return 0, 0, 0, errors.New("no metrics returned matched known pods")
	}
	utilization = int32((usageTotal * 100) / requestTotal)
	return float64(utilization) / float64(targetUtilization), utilization, usageTotal / int64(n), nil
}

// UsageRatio returns the ratio of the pods' average value (integer
// division) to the target, and that average. metrics must not be empty.
func UsageRatio(metrics PodMetricsInfo, target int64) (ratio float64, average int64) {
	var total int64
	for _, m := range metrics {
		total += m.Value
	}
	average = total / int64(len(metrics))
	return float64(average) / float64(target), average
}
