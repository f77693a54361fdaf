package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kcm-dev/kcm/test/cluster"
	"github.com/kcm-dev/kcm/test/conformance"
)

// runConformance runs, after the checks, each spec of the list (default
// test/conformance/node.txt) matching the expression in its own
// e2e.test process against this cluster, --conformance-parallel at a
// time, and logs a line per spec and a summary (logs in
// <work dir>/conformance/).
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
	listed, err := conformance.LoadExcluded(list)
	if err != nil {
		return err
	}
	var specs []string
	for s := range listed {
		if re.MatchString(s) {
			specs = append(specs, s)
		}
	}
	sort.Strings(specs)
	dir := filepath.Join(e.o.workDir, "conformance")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var (
		mu             sync.Mutex
		passed, failed []string
		next           = make(chan int)
		wg             sync.WaitGroup
	)
	for range max(e.o.parallel, 1) {
		wg.Go(func() {
			for i := range next {
				s, t := specs[i], time.Now()
				logPath := filepath.Join(dir, fmt.Sprintf("%02d.log", i))
				err := e.runSpec(s, logPath, 8*time.Minute)
				mu.Lock()
				outcome := "PASS"
				if err != nil {
					outcome = "FAIL"
					failed = append(failed, s)
				} else {
					passed = append(passed, s)
				}
				mu.Unlock()
				log.Printf("e2e-node: conformance %s %v %s (%s)", outcome, time.Since(t).Round(time.Second), s, logPath)
			}
		})
	}
	for i := range specs {
		if e.Ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err := e.Ctx.Err(); err != nil {
		return err
	}
	sort.Strings(failed)
	log.Printf("e2e-node: conformance: %d passed, %d failed", len(passed), len(failed))
	for _, s := range failed {
		log.Printf("e2e-node: conformance failed: %s", s)
	}
	return nil
}

func (e *env) runSpec(spec, logPath string, timeout time.Duration) error {
	f, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer f.Close()
	ctx, cancel := context.WithTimeout(e.Ctx, timeout+time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(e.o.binDir, "e2e.test"),
		"--kubeconfig="+e.c.AdminKubeconfig,
		"--kubectl-path="+e.Kubectl,
		"--ginkgo.focus="+conformance.FocusFor(spec),
		"--ginkgo.timeout="+timeout.String(),
		"--ginkgo.no-color", "--ginkgo.v", "--ginkgo.silence-skips",
		"--dump-logs-on-failure=false",
	)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Dir = filepath.Dir(logPath)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	fmt.Fprintf(f, "==== %s\n", strings.Join(cmd.Args, " "))
	if err := cmd.Run(); err != nil {
		return err
	}
	b, _ := os.ReadFile(logPath)
	if !strings.Contains(string(b), "Ran 1 of") {
		return fmt.Errorf("the spec did not run")
	}
	return nil
}
