package testutil

import (
	"strings"
	"testing"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
)

// CollectorText returns what a registry holding only collector exposes, in
// the text format: families by name, series by labels. (testutil's
// CustomCollectAndCompare cannot be used for upstream's collectors: its
// linter rejects their "_count" gauge names.)
func CollectorText(t *testing.T, collector metrics.StableCollector) string {
	t.Helper()
	r := metrics.NewKubeRegistry()
	r.CustomMustRegister(collector)
	families, err := r.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, f := range families {
		if _, err := testutil.MetricFamilyToText(&b, f); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// CounterValue returns a counter's value, failing the test if it cannot
// be read.
func CounterValue(t *testing.T, c metrics.CounterMetric) float64 {
	t.Helper()
	v, err := testutil.GetCounterMetricValue(c)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
