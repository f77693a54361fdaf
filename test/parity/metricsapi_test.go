package parity

import (
	"strings"
	"testing"
)

func TestMetricsStep(t *testing.T) {
	s, err := ParseScenario([]byte(`
metricsAPI: true
steps:
- metrics:
    usage: [{namespace: a, selector: app=web, resources: {cpu: 200m}}]
    custom: [{namespace: a, resource: pods, selector: app=web, metric: rps, value: "3"}]
    external: [{namespace: a, metric: queue, labels: {q: jobs}, value: 40}]
capture: [{kind: HorizontalPodAutoscaler}]
`))
	if err != nil {
		t.Fatal(err)
	}
	m := s.Steps[0].Metrics
	if q := m.Usage[0].Resources["cpu"]; q.MilliValue() != 200 || m.Custom[0].Value.Value() != 3 || m.External[0].Value.Value() != 40 {
		t.Errorf("parsed %+v", m)
	}
	if got := s.Steps[0].String(); got != "set metrics" {
		t.Errorf("String() = %q", got)
	}
	_, err = ParseScenario([]byte(`
steps:
- metrics: {usage: [{namespace: a, resources: {cpu: 1}}]}
capture: [{kind: HorizontalPodAutoscaler}]
`))
	if err == nil || !strings.Contains(err.Error(), "needs metricsAPI: true") {
		t.Errorf("err = %v", err)
	}
}
