// Command parity runs the parity scenarios on upstream kube-controller-manager
// and on kcm and prints PASS, DIFF (with a unified diff) or SKIP per
// scenario, then a summary ending in the line "N passed, M failed". It exits
// 1 when any scenario failed, 2 on a usage or scenario-file error.
//
//	go run ./test/parity/cmd/parity [--scenarios glob] [--quick] [--out dir] [--keep] [--self-check]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/kcm-dev/kcm/test/cluster"
	"github.com/kcm-dev/kcm/test/parity"
)

func main() {
	os.Exit(run())
}

func run() int {
	var (
		glob      = flag.String("scenarios", "", "scenario files (glob); default test/parity/scenarios/*.yaml in the repository")
		out       = flag.String("out", "", "directory for captures, diffs and logs; default _output/parity in the repository")
		keep      = flag.Bool("keep", false, "keep every cluster work dir (with etcd data), also of passing scenarios")
		quick     = flag.Bool("quick", false, "run only scenarios marked quick")
		all       = flag.Bool("all", false, "also run scenarios whose controllers kcm does not implement (they fail)")
		selfCheck = flag.Bool("self-check", false, "run each scenario twice on upstream and diff upstream against itself")
		binDir    = flag.String("bin-dir", "", "binary directory; default $KCM_BIN_DIR or _output/bin")
		ours      = flag.String("kcm", "", "kcm binary (name in --bin-dir or path); default kube-controller-manager")
		upstream  = flag.String("upstream", "", "upstream binary; default upstream-kube-controller-manager")
		verbose   = flag.Bool("v", false, "log progress to stderr")
	)
	flag.Parse()
	log.SetFlags(0)

	root, err := cluster.RepoRoot()
	if err != nil && (*glob == "" || *out == "") {
		log.Printf("parity: %v", err)
		return 2
	}
	if *glob == "" {
		*glob = filepath.Join(root, "test", "parity", "scenarios", "*.yaml")
	}
	if *out == "" {
		*out = filepath.Join(root, "_output", "parity")
	}
	scenarios, err := parity.LoadScenarios(*glob)
	if err != nil {
		log.Print(err)
		return 2
	}
	if *quick {
		scenarios = parity.Quick(scenarios)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logf := func(string, ...any) {}
	if *verbose {
		logf = func(format string, args ...any) { log.Printf(time.Now().Format("15:04:05 ")+format, args...) }
	}
	start := time.Now()
	results := parity.Run(ctx, scenarios, parity.Options{
		OutDir: *out, Keep: *keep, BinDir: *binDir, Ours: *ours, Upstream: *upstream,
		SelfCheck: *selfCheck, RunUnimplemented: *all, Logf: logf,
		OnResult: func(r parity.Result) { fmt.Print(r.Report()) },
	})
	fmt.Printf("\ntook %s; captures and logs in %s\n", time.Since(start).Round(time.Second), *out)
	fmt.Print(parity.Summary(results))
	code := 0
	if left := len(scenarios) - len(results); left > 0 {
		fmt.Printf("interrupted: %d of %d scenarios not run\n", left, len(scenarios))
		code = 1
	}
	diffs, compared := parity.MetricsReport(results, *selfCheck)
	fmt.Printf("metric families: %d scenarios compared, %d unexplained differences\n", compared, len(diffs))
	for _, d := range diffs {
		fmt.Println("  " + d)
		code = 1
	}
	for _, r := range results {
		if r.Failed() {
			code = 1
		}
	}
	return code
}
