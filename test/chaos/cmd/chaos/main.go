// Command chaos runs parity scenarios with fault classes switched on for
// kcm's run (and, with --control, for upstream's too) and diffs each
// against upstream's calm run; it prints PASS/DIFF per fault and scenario
// with the counts table (test/chaos, docs/CHAOS.md) and writes
// results.md under --out (default _output/chaos). It exits 1 when a kcm
// run differs, errors or panics, 2 on a usage error. With --summarize it
// runs nothing: it reads the outcomes earlier invocations left in the
// output directories given (comma-separated) and prints the per-run table
// and the per-controller counts table.
//
//	go run ./test/chaos/cmd/chaos [--faults throttle,churn,compaction,tcp,restart,crash,crash-steps]
//	    [--scenarios 'test/parity/scenarios/job-*.yaml'] [--control] [--seed N] [--kills N] [-v]
//	go run ./test/chaos/cmd/chaos --summarize _output/chaos,/tmp/other
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/kcm-dev/kcm/test/chaos"
	"github.com/kcm-dev/kcm/test/cluster"
	"github.com/kcm-dev/kcm/test/parity"
)

func main() {
	os.Exit(run())
}

func run() int {
	var (
		faults   = flag.String("faults", strings.Join(chaos.Names(), ","), "fault classes, comma-separated: "+strings.Join(chaos.Names(), ", "))
		glob     = flag.String("scenarios", "", "scenario files (glob); default every one of test/parity/scenarios (long: 2 or 3 clusters per scenario and fault)")
		control  = flag.Bool("control", false, "also run upstream under each fault, as the control")
		seed     = flag.Int64("seed", 1, "seed of the crash and tcp schedules")
		kills    = flag.Int("kills", 0, "crash: SIGKILLs per run (0: a seeded 3-5); crash-steps: per step (0: 1)")
		out      = flag.String("out", "", "output directory; default _output/chaos in the repository")
		binDir   = flag.String("bin-dir", "", "binary directory; default $KCM_BIN_DIR or _output/bin")
		ours     = flag.String("kcm", "", "kcm binary (name in --bin-dir or path)")
		upstream = flag.String("upstream", "", "upstream binary")
		verbose  = flag.Bool("v", false, "log progress to stderr")
		calm     = flag.String("calm", "", "reuse upstream's calm runs from this fault directory of an earlier run with the same binaries (<out>/<fault>)")
		summary  = flag.String("summarize", "", "run nothing; sum up the outcomes in these output directories (comma-separated)")
	)
	flag.Parse()
	log.SetFlags(0)
	root, err := cluster.RepoRoot()
	if err != nil && (*glob == "" || *out == "") {
		log.Print(err)
		return 2
	}
	if *glob == "" {
		*glob = filepath.Join(root, "test", "parity", "scenarios", "*.yaml")
	}
	if *out == "" {
		*out = filepath.Join(root, "_output", "chaos")
	}
	scenarios, err := parity.LoadScenarios(*glob)
	if err != nil {
		log.Print(err)
		return 2
	}
	if *summary != "" {
		return summarize(strings.Split(*summary, ","), scenarios)
	}
	names := strings.Split(*faults, ",")
	for _, n := range names {
		if _, err := chaos.New(n, chaos.Config{}); err != nil {
			log.Print(err)
			return 2
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logf := func(string, ...any) {}
	if *verbose {
		logf = func(format string, args ...any) { log.Printf(time.Now().Format("15:04:05 ")+format, args...) }
	}
	start := time.Now()
	code := 0
	outcomes, err := chaos.Run(ctx, scenarios, chaos.Options{
		Faults: names, Config: chaos.Config{Seed: *seed, Kills: *kills}, Control: *control, Calm: *calm,
		OutDir: *out, BinDir: *binDir, Ours: *ours, Upstream: *upstream, Logf: logf,
		OnResult: func(o chaos.Outcome) {
			fmt.Printf("[%s] %s", o.Fault, o.Result.Report())
			if o.Result.ControlDiff != "" {
				fmt.Printf("      control (upstream under %s) differs from upstream calm:\n%s", o.Fault, o.Result.ControlDiff)
			}
			if o.CountErr != nil {
				fmt.Printf("      counts: %v\n", o.CountErr)
			}
		},
	})
	if err != nil {
		log.Print(err)
		code = 1
	}
	fmt.Printf("\n%s\n%s\ntook %s; results in %s\n", chaos.Table(outcomes), chaos.Summary(outcomes), time.Since(start).Round(time.Second), *out)
	for _, o := range outcomes {
		if o.Failed() {
			code = 1
		}
	}
	return code
}

// summarize prints the tables of the outcomes under dirs.
func summarize(dirs []string, scenarios []*parity.Scenario) int {
	var all []chaos.Outcome
	for _, d := range dirs {
		o, err := chaos.Load(d, scenarios)
		if err != nil {
			log.Print(err)
			return 1
		}
		all = append(all, o...)
	}
	fmt.Printf("%s\n%s", chaos.Table(all), chaos.Summary(all))
	return 0
}
