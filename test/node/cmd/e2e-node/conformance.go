package main

import (
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
)

// runConformance runs upstream's e2e.test against the cluster with the
// given focus, in one process, its output in the work dir.
func (e *env) runConformance(focus string) error {
	bin := filepath.Join(e.o.binDir, "e2e.test")
	logPath := filepath.Join(e.o.workDir, "conformance.log")
	f, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.CommandContext(e.ctx, bin,
		"--kubeconfig="+e.c.AdminKubeconfig,
		"--kubectl-path="+e.kubectl,
		"--ginkgo.focus="+focus,
		"--ginkgo.no-color", "--ginkgo.v",
		"--ginkgo.junit-report="+filepath.Join(e.o.workDir, "conformance.xml"),
		"--dump-logs-on-failure=false",
	)
	cmd.Stdout, cmd.Stderr = f, f
	log.Printf("e2e-node: running e2e.test --ginkgo.focus=%q (log %s)", focus, logPath)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("e2e.test: %w (see %s)", err, logPath)
	}
	return nil
}
