package parity

import (
	"strings"
	"testing"
)

const upstreamText = `# HELP running_managed_controllers [BETA] Indicates where instances of a controller are currently running
# TYPE running_managed_controllers gauge
running_managed_controllers{manager="kube-controller-manager",name="nodeipam"} 1
# HELP workqueue_depth [STABLE] Current depth of workqueue
# TYPE workqueue_depth gauge
workqueue_depth{name="a"} 0
# HELP x_seconds [ALPHA] x
# TYPE x_seconds histogram
x_seconds_bucket{le="1",result="ok"} 1
x_seconds_bucket{le="+Inf",result="ok"} 1
x_seconds_sum{result="ok"} 0.5
x_seconds_count{result="ok"} 1
`

const oursText = `# HELP workqueue_depth [ALPHA] Current depth of workqueue
# TYPE workqueue_depth gauge
workqueue_depth{name="a",extra="b"} 0
# HELP x_seconds [ALPHA] x
# TYPE x_seconds histogram
x_seconds_bucket{le="+Inf",result="ok"} 1
x_seconds_sum{result="ok"} 0.5
x_seconds_count{result="ok"} 1
# HELP kcm_only kcm's
# TYPE kcm_only counter
kcm_only 1
`

func TestCompareFamilies(t *testing.T) {
	up, err := parseFamilies(strings.NewReader(upstreamText))
	if err != nil {
		t.Fatal(err)
	}
	ours, err := parseFamilies(strings.NewReader(oursText))
	if err != nil {
		t.Fatal(err)
	}
	if f := up["x_seconds"]; f.Type != "histogram" || len(f.Labels) != 1 || f.Labels[0] != "result" {
		t.Errorf("histogram parsed as %+v, want labels [result] without le", f)
	}
	got := strings.Join(CompareFamilies(up, ours, nil), "\n")
	for _, want := range []string{
		"kcm_only: only kcm exposes it",
		"running_managed_controllers: only upstream exposes it (gauge, labels [manager name])",
		`workqueue_depth: help "[STABLE] Current depth of workqueue" upstream, "[ALPHA] Current depth of workqueue" kcm`,
		"workqueue_depth: labels [name] upstream, [extra name] kcm",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("differences lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "x_seconds") {
		t.Errorf("equal families reported:\n%s", got)
	}
	allowed := CompareFamilies(up, ours, map[string]string{"kcm_only": "r", "running_managed_controllers": "r", "workqueue_depth": "r"})
	if len(allowed) != 0 {
		t.Errorf("allowlisted families reported: %v", allowed)
	}
}

func TestMetricsReportUnion(t *testing.T) {
	a := Families{"f": {Type: "counter", Labels: []string{"x"}}}
	b := Families{"f": {Type: "counter", Labels: []string{"y"}}, "g": {Type: "gauge"}}
	results := []Result{
		{Scenario: &Scenario{Name: "one"}, Metrics: map[string]Families{labelUpstream: a, labelOurs: b}},
		{Scenario: &Scenario{Name: "two"}, Metrics: map[string]Families{labelUpstream: b, labelOurs: a}},
		{Scenario: &Scenario{Name: "failed"}},
	}
	diffs, compared := MetricsReport(results, false)
	if compared != 2 {
		t.Errorf("compared %d scenarios, want 2", compared)
	}
	// Per-scenario differences count only for metricFamilies scenarios; the
	// unions are equal.
	if len(diffs) != 0 {
		t.Errorf("differences %v, want none", diffs)
	}
	results[0].Scenario.MetricFamilies = true
	if diffs, _ := MetricsReport(results, false); len(diffs) != 2 || !strings.HasPrefix(diffs[0], "one: ") {
		t.Errorf("differences %v, want scenario one's two", diffs)
	}
}
