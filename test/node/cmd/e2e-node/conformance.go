package main

import (
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

// runConformance runs, after the checks, each spec of the list (default
// test/conformance/node.txt) matching the expression in its own
// e2e.test process against this cluster, --conformance-parallel at a
// time and the [Serial] ones alone, and logs a line per spec, a JUnit file
// and a summary (in <work dir>/conformance/).
func (e *env) runConformance(expr string) error {
	re, err := regexp.Compile(expr)
	if err != nil {
		return err
	}
	list := e.o.specList
	if list == "" {
		root, err := cluster.RepoRoot()
		if err != nil {
			return err
		}
		list = filepath.Join(root, "test", "conformance", "node.txt")
	}
	listed, err := conformance.LoadSpecs(list)
	if err != nil {
		return err
	}
	specs, _ := conformance.Select(listed, nil, re, conformance.NotExcluded)
	sort.Strings(specs)
	dir := filepath.Join(e.o.workDir, "conformance")
	if err := os.RemoveAll(dir); err != nil { // each run is a suite of its own
		return err
	}
	summary, failed, err := conformance.RunAndReport(e.Ctx, "conformance on a real node", specs, conformance.SuiteOptions{
		E2E: filepath.Join(e.o.binDir, conformance.E2EBinary), Kubeconfig: e.c.AdminKubeconfig,
		Dir: dir, Parallel: e.o.parallel, Timeout: 8 * time.Minute,
		Args:    []string{"--kubelet-root-dir=" + e.n.KubeletRootDir()},
		Sitting: time.Now().UTC().Format("2006-01-02T15:04:05Z"),
	}, func(f string, a ...any) { log.Printf("e2e-node: conformance: "+f, a...) })
	for _, line := range strings.Split(strings.TrimSpace(summary), "\n") {
		log.Printf("e2e-node: conformance: %s", line)
	}
	if err != nil {
		return err
	}
	if err := e.Ctx.Err(); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%d conformance specs did not pass", failed)
	}
	return nil
}
