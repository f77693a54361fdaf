package cluster

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// kwok's default stages run every pod at once and complete every Job pod at
// once, whatever its image and command. Upstream's e2e specs rely on three
// things a real node does that they do not, so the stages are adjusted:
//
//   - a pod with one of UnpullableImages never runs: it stays Pending with
//     its containers waiting in ErrImagePull (stages/pod-image-pull-error.yaml;
//     kwok's pod-ready leaves such pods alone);
//   - a Job pod whose first container is NeverEndingImages' (the pause
//     image) never completes;
//   - a Job pod whose first container's command is `sleep N` completes N
//     seconds after it started running.

// UnpullableImages are the images upstream's e2e specs give a container
// that must never start ("we use a nonexistent image here, so that we make
// sure it won't finish").
var UnpullableImages = []string{
	"foo:non-existent",
	"webserver:404",
	"gcr.io/google_samples/gb-redisslave:nonexistent",
}

// NeverEndingImages are images whose containers run until deleted: the
// pause image of upstream's v1.37 e2e suite (its "notTerminate" Jobs).
var NeverEndingImages = []string{"registry.k8s.io/pause:3.10.2"}

// sleepDuration is the jq expression kwok's pod-complete stage waits for:
// N seconds for a first container that runs `sleep N`, else nothing (no
// delay).
const sleepDuration = `.spec.containers[0].command as $c | if ($c | type) == "array" and $c[0] == "sleep" and ($c | length) == 2 then $c[1] + "s" else empty end`

//go:embed stages/pod-image-pull-error.yaml
var pullErrorStage []byte

const imagesKey = ".spec.containers.[].image"

// adjustStages returns the stage files kwok is given: stages, with
// pod-ready.yaml and pod-complete.yaml (if there) adjusted as above, plus
// the ErrImagePull stage, and with Options.KwokParallelism a
// KwokConfiguration, the adjusted and added ones written to the cluster's
// work directory.
func (c *Cluster) adjustStages(stages []string) ([]string, error) {
	dir := filepath.Join(c.WorkDir, "kwok-stages")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	edits := map[string]func(spec map[string]any){
		"pod-ready.yaml": func(spec map[string]any) { setImageRequirement(spec, "NotIn", UnpullableImages) },
		"pod-complete.yaml": func(spec map[string]any) {
			setImageRequirement(spec, "NotIn", NeverEndingImages)
			spec["delay"] = map[string]any{
				"durationMilliseconds": 0,
				"durationFrom":         map[string]any{"jq": map[string]any{"expression": sleepDuration}},
			}
		},
	}
	out := make([]string, 0, len(stages)+1)
	for _, f := range stages {
		edit := edits[filepath.Base(f)]
		if edit == nil {
			out = append(out, f)
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		if b, err = editStage(b, edit); err != nil {
			return nil, fmt.Errorf("cluster: kwok stage %s: %w", f, err)
		}
		f = filepath.Join(dir, filepath.Base(f))
		if err := os.WriteFile(f, b, 0o644); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	b, err := editStage(pullErrorStage, func(spec map[string]any) { setImageRequirement(spec, "In", UnpullableImages) })
	if err != nil {
		return nil, fmt.Errorf("cluster: pod-image-pull-error stage: %w", err)
	}
	f := filepath.Join(dir, "pod-image-pull-error.yaml")
	if err := os.WriteFile(f, b, 0o644); err != nil {
		return nil, err
	}
	out = append(out, f)
	if n := c.opts.KwokParallelism; n > 0 {
		f := filepath.Join(dir, "kwok-configuration.yaml")
		if err := os.WriteFile(f, kwokConfiguration(n), 0o644); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// kwokConfiguration is a KwokConfiguration (kwok reads it from --config
// beside the stages) that lets kwok work on n pods, n nodes and n node
// leases at once.
func kwokConfiguration(n int) []byte {
	return []byte(fmt.Sprintf(`apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokConfiguration
options:
  podPlayStageParallelism: %[1]d
  nodePlayStageParallelism: %[1]d
  nodeLeaseParallelism: %[1]d
`, n))
}

// editStage applies edit to a kwok Stage's spec.
func editStage(stage []byte, edit func(spec map[string]any)) ([]byte, error) {
	var obj map[string]any
	if err := yaml.Unmarshal(stage, &obj); err != nil {
		return nil, err
	}
	spec, _ := obj["spec"].(map[string]any)
	if spec == nil {
		return nil, fmt.Errorf("no spec")
	}
	edit(spec)
	return yaml.Marshal(obj)
}

// setImageRequirement sets the selector's requirement on the containers'
// images to operator op over images (replacing any on that key).
func setImageRequirement(spec map[string]any, op string, images []string) {
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
	values := make([]any, len(images))
	for i, im := range images {
		values[i] = im
	}
	sel["matchExpressions"] = append(kept, map[string]any{"key": imagesKey, "operator": op, "values": values})
}
