package cluster

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func imageRequirement(t *testing.T, stage []byte) (op string, values []string, statusTemplate, delay string) {
	t.Helper()
	var obj struct {
		Spec struct {
			Selector struct {
				MatchExpressions []struct {
					Key, Operator string
					Values        []string
				} `json:"matchExpressions"`
			} `json:"selector"`
			Next struct {
				StatusTemplate string `json:"statusTemplate"`
			} `json:"next"`
			Delay struct {
				DurationFrom struct {
					JQ struct{ Expression string } `json:"jq"`
				} `json:"durationFrom"`
			} `json:"delay"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(stage, &obj); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range obj.Spec.Selector.MatchExpressions {
		if e.Key == imagesKey {
			op, values = e.Operator, e.Values
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d requirements on %s, want 1", n, imagesKey)
	}
	return op, values, obj.Spec.Next.StatusTemplate, obj.Spec.Delay.DurationFrom.JQ.Expression
}

func TestAdjustStages(t *testing.T) {
	src := t.TempDir()
	ready := filepath.Join(src, "pod-ready.yaml")
	other := filepath.Join(src, "node-initialize.yaml")
	const readyStage = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-ready
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - {key: .status.phase, operator: In, values: [Pending]}
  next:
    statusTemplate: |
      phase: Running
`
	if err := os.WriteFile(ready, []byte(readyStage), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, []byte("kind: Stage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	complete := filepath.Join(src, "pod-complete.yaml")
	if err := os.WriteFile(complete, []byte(strings.ReplaceAll(readyStage, "pod-ready", "pod-complete")), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &Cluster{WorkDir: t.TempDir()}
	files, err := c.adjustStages([]string{other, ready, complete})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 4 || files[0] != other || filepath.Dir(files[1]) != filepath.Join(c.WorkDir, "kwok-stages") {
		t.Fatalf("files = %v", files)
	}
	b, err := os.ReadFile(files[1])
	if err != nil {
		t.Fatal(err)
	}
	op, values, tmpl, delay := imageRequirement(t, b)
	if op != "NotIn" || !slices.Equal(values, UnpullableImages) || tmpl != "phase: Running\n" || delay != "" {
		t.Errorf("pod-ready: %s %v, template %q, delay %q", op, values, tmpl, delay)
	}
	if !strings.Contains(string(b), ".status.phase") {
		t.Errorf("pod-ready lost its own requirements:\n%s", b)
	}
	b, err = os.ReadFile(files[2])
	if err != nil {
		t.Fatal(err)
	}
	op, values, _, delay = imageRequirement(t, b)
	if op != "NotIn" || !slices.Equal(values, NeverEndingImages) || delay != sleepDuration {
		t.Errorf("pod-complete: %s %v, delay %q", op, values, delay)
	}
	b, err = os.ReadFile(files[3])
	if err != nil {
		t.Fatal(err)
	}
	op, values, tmpl, _ = imageRequirement(t, b)
	if op != "In" || !slices.Equal(values, UnpullableImages) || !strings.Contains(tmpl, "ErrImagePull") {
		t.Errorf("pod-image-pull-error: %s %v, template %q", op, values, tmpl)
	}
}

// TestKwokParallelism: a positive KwokParallelism adds a KwokConfiguration
// to kwok's files with it for pod stages, node stages and leases.
func TestKwokParallelism(t *testing.T) {
	src := t.TempDir()
	other := filepath.Join(src, "node-initialize.yaml")
	if err := os.WriteFile(other, []byte("kind: Stage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &Cluster{WorkDir: t.TempDir()}
	files, err := c.adjustStages([]string{other})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Fatalf("without KwokParallelism: files = %v", files)
	}
	c.opts.KwokParallelism = 16
	if files, err = c.adjustStages([]string{other}); err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 || filepath.Base(files[2]) != "kwok-configuration.yaml" {
		t.Fatalf("files = %v", files)
	}
	b, err := os.ReadFile(files[2])
	if err != nil {
		t.Fatal(err)
	}
	var conf struct {
		APIVersion string         `json:"apiVersion"`
		Kind       string         `json:"kind"`
		Options    map[string]int `json:"options"`
	}
	if err := yaml.Unmarshal(b, &conf); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"podPlayStageParallelism": 16, "nodePlayStageParallelism": 16, "nodeLeaseParallelism": 16}
	if conf.APIVersion != "config.kwok.x-k8s.io/v1alpha1" || conf.Kind != "KwokConfiguration" || !maps.Equal(conf.Options, want) {
		t.Errorf("configuration:\n%s", b)
	}
}
