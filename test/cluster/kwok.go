package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// kwokArgs runs kwok against the admin-equivalent kwok.conf, managing only
// annotated Nodes, with every stage YAML of the stages directory. Extra
// args come last, so a later --node-lease-duration-seconds wins.
func (c *Cluster) kwokArgs(stages []string) []string {
	args := []string{
		"--kubeconfig=" + c.KwokKubeconfig,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + KwokNodeAnnotation + "=" + KwokNodeAnnotationValue,
		"--server-address=127.0.0.1:" + strconv.Itoa(c.Ports.Kwok),
		"--node-ip=127.0.0.1",
		// Heartbeat through Leases in kube-node-lease as a kubelet does;
		// without them every node goes Unknown after the grace period and
		// kwok re-initialises it, flapping NodeNotReady.
		"--node-lease-duration-seconds=40",
	}
	for _, s := range stages {
		args = append(args, "--config="+s)
	}
	return append(args, c.opts.ExtraKwokArgs...)
}

// kwokStages lists the stage YAMLs kwok is given.
func kwokStages(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("cluster: kwok stages (run hack/tools/build.sh): %w", err)
	}
	var files []string
	for _, e := range entries {
		if !e.IsDir() && (strings.HasSuffix(e.Name(), ".yaml") || strings.HasSuffix(e.Name(), ".yml")) {
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("cluster: no kwok stage YAMLs in %s (kwok exits with \"no stages found\")", dir)
	}
	sort.Strings(files)
	return files, nil
}

// stagesWarning explains a known-bad stage set: kwok's pod/general
// pod-ready stage only fires after pod-create and the init-container stages,
// so without them pods stay Pending. kwokctl's default is pod/fast.
func stagesWarning(files []string) string {
	names := map[string]bool{}
	for _, f := range files {
		names[filepath.Base(f)] = true
	}
	if !names["pod-ready.yaml"] || names["pod-create.yaml"] {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(files[0]), "pod-ready.yaml"))
	if err != nil || !strings.Contains(string(b), `.type == "Initialized"`) {
		return ""
	}
	return "kwok stages: pod-ready.yaml is kwok's pod/general one, which waits for stages that are missing (pod-create…): pods will stay Pending; use kustomize/stage/pod/fast"
}

func (c *Cluster) startKwok() (*process, error) {
	stages, err := kwokStages(c.opts.KwokStages)
	if err != nil {
		return nil, err
	}
	if w := stagesWarning(stages); w != "" {
		c.opts.Logf("cluster: warning: %s", w)
	}
	if stages, err = c.adjustStages(stages); err != nil {
		return nil, err
	}
	return c.start(Kwok, c.opts.Kwok, c.kwokArgs(stages))
}

func (c *Cluster) waitKwok(ctx context.Context, p *process) error {
	url := "http://127.0.0.1:" + strconv.Itoa(c.Ports.Kwok) + "/healthz"
	if err := waitFor(ctx, c.opts.StartTimeout, "kwok /healthz", p, httpOK(insecureHTTP(), url)); err != nil {
		return fmt.Errorf("cluster: kwok not ready: %w", err)
	}
	return nil
}
