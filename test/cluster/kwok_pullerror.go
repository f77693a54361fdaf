package cluster

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// UnpullableImages are the images upstream's e2e specs give a container
// that must never start ("we use a nonexistent image here, so that we make
// sure it won't finish"). On a real node their pods stay Pending in
// ErrImagePull; kwok would run them like any other, finishing rollouts the
// specs expect to stall. Pods with one of them stay Pending with their
// containers waiting in ErrImagePull instead (stages/pod-image-pull-error.yaml).
var UnpullableImages = []string{
	"foo:non-existent",
	"webserver:404",
	"gcr.io/google_samples/gb-redisslave:nonexistent",
}

//go:embed stages/pod-image-pull-error.yaml
var pullErrorStage []byte

const imagesKey = ".spec.containers.[].image"

// withPullErrors returns the stage files kwok is given: stages, with
// pod-ready.yaml (if there) rewritten to leave pods with an unpullable image
// alone, plus the stage that holds those in ErrImagePull, both written to
// the cluster's work directory.
func (c *Cluster) withPullErrors(stages []string) ([]string, error) {
	dir := filepath.Join(c.WorkDir, "kwok-stages")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(stages)+1)
	for _, f := range stages {
		if filepath.Base(f) != "pod-ready.yaml" {
			out = append(out, f)
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		rewritten, err := addImageRequirement(b, "NotIn")
		if err != nil {
			return nil, fmt.Errorf("cluster: kwok stage %s: %w", f, err)
		}
		f = filepath.Join(dir, "pod-ready.yaml")
		if err := os.WriteFile(f, rewritten, 0o644); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	stage, err := addImageRequirement(pullErrorStage, "In")
	if err != nil {
		return nil, fmt.Errorf("cluster: pod-image-pull-error stage: %w", err)
	}
	f := filepath.Join(dir, "pod-image-pull-error.yaml")
	if err := os.WriteFile(f, stage, 0o644); err != nil {
		return nil, err
	}
	return append(out, f), nil
}

// addImageRequirement sets, in a kwok Stage's selector, the requirement on
// the containers' images: operator op over UnpullableImages (replacing any
// requirement on that key).
func addImageRequirement(stage []byte, op string) ([]byte, error) {
	var obj map[string]any
	if err := yaml.Unmarshal(stage, &obj); err != nil {
		return nil, err
	}
	spec, _ := obj["spec"].(map[string]any)
	if spec == nil {
		return nil, fmt.Errorf("no spec")
	}
	sel, _ := spec["selector"].(map[string]any)
	if sel == nil {
		sel = map[string]any{}
		spec["selector"] = sel
	}
	exprs, _ := sel["matchExpressions"].([]any)
	kept := exprs[:0]
	for _, e := range exprs {
		if m, ok := e.(map[string]any); ok && m["key"] == imagesKey {
			continue
		}
		kept = append(kept, e)
	}
	values := make([]any, len(UnpullableImages))
	for i, im := range UnpullableImages {
		values[i] = im
	}
	sel["matchExpressions"] = append(kept, map[string]any{"key": imagesKey, "operator": op, "values": values})
	return yaml.Marshal(obj)
}
