package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/kcm-dev/kcm/test/cluster"
	"github.com/kcm-dev/kcm/test/conformance"
)

// suiteShape is what a resumed suite must share with the sittings before
// it: the binary under test and the cluster's shape.
type suiteShape struct {
	Image   string
	Workers int
	List    string
}

// conformanceSpecs is the list --conformance-all or --conformance-list
// names, narrowed by --conformance-focus, without the shared exclusions
// unless --conformance-include-excluded.
func (o options) conformanceSpecs() (specs []string, excluded int, err error) {
	root, err := cluster.RepoRoot()
	if err != nil {
		return nil, 0, err
	}
	list := o.specList
	if list == "" {
		list = filepath.Join(root, "test", "conformance", "all.txt")
	}
	all, err := conformance.LoadSpecs(list)
	if err != nil {
		return nil, 0, err
	}
	ex := map[string]string{}
	if !o.includeExcluded {
		if ex, err = conformance.LoadExcluded(filepath.Join(root, "test", "conformance", "kubeadm-excluded.txt")); err != nil {
			return nil, 0, err
		}
	}
	var re *regexp.Regexp
	if o.focus != "" {
		if re, err = regexp.Compile(o.focus); err != nil {
			return nil, 0, fmt.Errorf("--conformance-focus: %w", err)
		}
	}
	run, skipped := conformance.Select(all, ex, re, conformance.NotExcluded)
	if len(run) == 0 {
		return nil, 0, fmt.Errorf("no spec of %s selected", list)
	}
	sort.Strings(run)
	return run, len(skipped), nil
}

// suiteDir is where the suite of this binary keeps its results across
// sittings.
func (o options) suiteDir() string {
	if o.suiteOut != "" {
		return o.suiteOut
	}
	name := "conformance-kcm"
	if o.upstream {
		name = "conformance-upstream"
	}
	return filepath.Join(o.workDir, name)
}

// checkShape records the shape of the suite's first sitting and refuses to
// resume one of another shape (its results would not add up to one run).
func checkShape(dir string, want suiteShape, fresh bool) error {
	if fresh {
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(dir, "shape.json")
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		b, _ = json.Marshal(want)
		return os.WriteFile(path, b, 0o644)
	}
	if err != nil {
		return err
	}
	var got suiteShape
	if err := json.Unmarshal(b, &got); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if got != want {
		return fmt.Errorf("%s holds a suite of another shape (%+v, this run %+v): --conformance-fresh starts over", dir, got, want)
	}
	return nil
}

// conformance runs the selected specs against this cluster, resuming the
// suite of an earlier sitting.
func (e *env) conformance() error {
	specs, excluded, err := e.o.conformanceSpecs()
	if err != nil {
		return err
	}
	dir := e.o.suiteDir()
	list := e.o.specList
	if list == "" {
		list = "all.txt"
	}
	shape := suiteShape{Image: e.wantImage(), Workers: e.o.workers, List: filepath.Base(list) + " " + e.o.focus}
	if err := checkShape(dir, shape, e.o.fresh); err != nil {
		return err
	}
	if excluded > 0 {
		log.Printf("e2e-kubeadm: conformance: %d specs left out (test/conformance/kubeadm-excluded.txt)", excluded)
	}
	summary, failed, err := conformance.RunAndReport(e.ctx, "conformance on kubeadm ("+e.wantImage()+")", specs, conformance.SuiteOptions{
		E2E: filepath.Join(e.o.binDir, conformance.E2EBinary), Kubeconfig: e.c.AdminKubeconfig(),
		Dir: dir, Parallel: e.o.parallel, Timeout: e.o.specTimeout, Budget: e.o.budget, RerunFailed: e.o.rerun,
		Sitting: time.Now().UTC().Format("2006-01-02T15:04:05Z"),
		Logf:    func(f string, a ...any) { log.Printf("e2e-kubeadm: "+f, a...) },
	}, func(f string, a ...any) { log.Printf("e2e-kubeadm: conformance: "+f, a...) })
	for _, line := range strings.Split(strings.TrimSpace(summary), "\n") {
		log.Printf("e2e-kubeadm: conformance: %s", line)
	}
	if err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%d conformance specs did not pass", failed)
	}
	return nil
}
