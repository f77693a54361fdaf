// Command bench is `make bench`: load phases on fresh local clusters, for
// upstream's kube-controller-manager and for ours one after the other,
// reporting wall time, CPU, memory and API requests per phase as a markdown
// table (stdout and <out>/results.md) and as JSON (<out>/results.json).
// See docs/BENCHMARKS.md, "Running it" and "How to read the figures".
//
// Exit status: 0 when every run could be measured (a phase that timed out is
// a result, reported in the table), 1 when a run or phase failed, 130 when
// interrupted. Every process started is stopped in every case; logs and
// audit logs stay under <out>/runs/.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/kcm-dev/kcm/test/bench"
	"github.com/kcm-dev/kcm/test/cluster"
)

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, " ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func main() {
	code, err := run()
	if err != nil {
		log.Print(err)
	}
	os.Exit(code)
}

func run() (int, error) {
	root, err := cluster.RepoRoot()
	if err != nil {
		root = "."
	}
	var (
		out          = flag.String("out", filepath.Join(root, "_output", "bench"), "output directory: results.json, results.md, runs/<qps>/<binary>/<phase set>/ (logs, audit.log, samples.json)")
		binDir       = flag.String("bin-dir", "", "directory of the binaries (default $"+cluster.BinDirEnv+", else _output/bin)")
		phases       = flag.String("phases", bench.ScenarioDeployments+","+bench.ScenarioNodes, "phase sets to run, comma-separated: deployments (create, scale, roll, delete, idle), nodes, statefulsets (create, scale, roll, delete), daemonsets (create, add-nodes, roll, delete), endpoints (create, roll, scale, delete), jobs (indexed, small), volumes (volumes, bind, reclaim), dra (create, roll, taint, delete), scale (join, fill, roll, services, outage, delete-namespaces, idle)")
		binaries     = flag.String("binaries", bench.Upstream+","+bench.Ours, "controller managers to measure, in order: upstream, ours")
		qpsSettings  = flag.String("qps-settings", "default,500", "comma-separated --kube-api-qps/--kube-api-burst settings: default (no flags), N (QPS=burst=N) or N/BURST")
		nodes        = flag.Int("nodes", 50, "kwok nodes for the deployments phases")
		deployments  = flag.Int("deployments", 300, "Deployments to create")
		replicas     = flag.Int("replicas", 5, "replicas per Deployment at creation")
		scaleTo      = flag.Int("scale-to", 10, "replicas per Deployment after the scale phase")
		newNodes     = flag.Int("new-nodes", 100, "nodes the nodes phase creates")
		sets         = flag.Int("statefulsets", 50, "StatefulSets the statefulsets phases create (Parallel)")
		setReplicas  = flag.Int("statefulset-replicas", 10, "replicas per StatefulSet at creation")
		setScaleTo   = flag.Int("statefulset-scale-to", 20, "replicas per StatefulSet after the scale phase")
		daemonSets   = flag.Int("daemonsets", 20, "DaemonSets the daemonsets phases create (each on every node)")
		dsNodes      = flag.Int("daemonset-nodes", 500, "kwok nodes for the daemonsets phases")
		dsNewNodes   = flag.Int("daemonset-new-nodes", 100, "nodes the daemonsets add-nodes phase creates")
		services     = flag.Int("services", 100, "Services the endpoints phases create, each over a Deployment")
		svcReplicas  = flag.Int("service-replicas", 30, "replicas per Service's Deployment at creation")
		svcScaleTo   = flag.Int("service-scale-to", 60, "replicas per Service's Deployment after the scale phase")
		jobNodes     = flag.Int("job-nodes", 10, "kwok nodes for the jobs phases")
		jobCompl     = flag.Int("job-completions", 1000, "completions of the jobs phases' Indexed Job")
		jobPar       = flag.Int("job-parallelism", 100, "parallelism of the jobs phases' Indexed Job")
		smallJobs    = flag.Int("small-jobs", 200, "small Jobs the jobs small phase creates")
		smallCompl   = flag.Int("small-job-completions", 5, "completions (and parallelism) of each small Job")
		draNodes     = flag.Int("dra-nodes", 50, "kwok nodes for the dra phases (40 devices each)")
		draDeploys   = flag.Int("dra-deployments", 100, "Deployments the dra phases create, each pod with a claim from a template")
		draReplicas  = flag.Int("dra-replicas", 10, "replicas per Deployment of the dra phases")
		draTaints    = flag.Int("dra-taints", 10, "allocated devices the dra taint phase taints NoExecute")
		scaleNodes   = flag.Int("scale-nodes", 500, "kwok nodes of the scale phases (30 pods each: 2 daemon pods and 28 from Deployments of 100)")
		nodeLease    = flag.Int("node-lease-seconds", 40, "kwok's --node-lease-duration-seconds (it renews at a quarter of it); lengthen it, with --kcm-arg=--node-monitor-grace-period=…, where the machine cannot carry the nodes' heartbeats")
		kwokPar      = flag.Int("kwok-parallelism", 0, "pods, nodes and node leases each kwok works on at once (0: kwok's default, 4); raise it where a loaded apiserver's slow answers leave pods Pending")
		scaleSvcs    = flag.Int("scale-services", 1000, "Services the scale services phase creates, each over a Deployment")
		idle         = flag.Duration("idle", 60*time.Second, "length of the idle phase")
		phaseTimeout = flag.Duration("phase-timeout", 30*time.Minute, "deadline of every phase and setup; a phase missing it is reported as timed out")
		workers      = flag.Int("workers", 16, "load generator worker pool size")
		settle       = flag.Duration("settle", 10*time.Second, "wait after the controller manager takes its Lease before the setup, so its controllers have started")
		startTimeout = flag.Duration("start-timeout", 3*time.Minute, "how long each cluster process may take to become ready")
		oursBin      = flag.String("ours", "", "our kube-controller-manager binary (default <bin-dir>/"+cluster.OurControllerManager+"); build it from the tree this command is built from, whose controller registry decides what ours can run")
		upstreamBin  = flag.String("upstream", "", "upstream's kube-controller-manager binary (default <bin-dir>/"+cluster.UpstreamControllerManager+")")
		force        = flag.Bool("force", false, "run ours also on phases whose controllers its registry lacks")
		drain        = flag.Duration("drain", 10*time.Second, "how long the cluster stays up after the last phase, so that requests still on their way (Events) count in the phase whose work they record")
		repeat       = flag.Int("repeat", 1, "run every binary's phase sets this many times per QPS setting, the binaries taking turns; the table shows each binary's medians")
		curve        = flag.String("curve", "", "run nothing; print the scale phases' cost per 1,000 pods and nodes from these results.json files (comma-separated, one per --scale-nodes)")
		kcmArgs      stringList
		schedArgs    stringList
	)
	flag.Var(&kcmArgs, "kcm-arg", "extra argument for both controller managers, after the QPS flags, e.g. --kcm-arg=--v=2 (repeatable)")
	flag.Var(&schedArgs, "scheduler-arg", "extra argument for kube-scheduler, the same for both binaries' runs, e.g. --scheduler-arg=--kube-api-qps=100 (repeatable)")
	flag.Parse()
	if flag.NArg() > 0 {
		return 2, fmt.Errorf("unexpected arguments: %v", flag.Args())
	}
	if *curve != "" {
		var all []*bench.Results
		for _, path := range splitList(*curve) {
			r, err := bench.ReadResults(path)
			if err != nil {
				return 1, err
			}
			all = append(all, r)
		}
		fmt.Print(bench.ScaleCurve(all))
		return 0, nil
	}

	scenarios, err := bench.SelectScenarios(strings.Split(*phases, ","))
	if err != nil {
		return 2, err
	}
	cfg := bench.Config{
		OutDir:    *out,
		BinDir:    *binDir,
		Scenarios: scenarios,
		Binaries:  splitList(*binaries),
		BinaryPaths: map[string]string{
			bench.Ours:     pathArg(*oursBin),
			bench.Upstream: pathArg(*upstreamBin),
		},
		Params: bench.Params{
			Nodes: *nodes, Deployments: *deployments, Replicas: *replicas, ScaleTo: *scaleTo,
			NewNodes: *newNodes, Idle: *idle, PhaseTimeout: *phaseTimeout, Workers: *workers,
			StatefulSets: *sets, StatefulSetReplicas: *setReplicas, StatefulSetScaleTo: *setScaleTo,
			DaemonSets: *daemonSets, DaemonSetNodes: *dsNodes, DaemonSetNewNodes: *dsNewNodes,
			Services: *services, ServiceReplicas: *svcReplicas, ServiceScaleTo: *svcScaleTo,
			JobNodes: *jobNodes, JobCompletions: *jobCompl, JobParallelism: *jobPar, SmallJobs: *smallJobs, SmallJobCompletions: *smallCompl,
			DRANodes: *draNodes, DRADeployments: *draDeploys, DRAReplicas: *draReplicas, DRATaints: *draTaints,
			ScaleNodes: *scaleNodes, ScaleServices: *scaleSvcs, NodeLeaseSeconds: *nodeLease, KwokParallelism: *kwokPar,
		},
		ExtraArgs:     kcmArgs,
		SchedulerArgs: schedArgs,
		StartTimeout:  *startTimeout,
		Settle:        *settle,
		Force:         *force,
		Repeat:        *repeat,
		Drain:         *drain,
		Logf:          log.Printf,
	}
	for _, s := range splitList(*qpsSettings) {
		q, err := bench.ParseQPSSetting(s)
		if err != nil {
			return 2, err
		}
		cfg.QPSSettings = append(cfg.QPSSettings, q)
	}
	if err := cfg.Validate(); err != nil {
		return 2, err
	}
	for _, w := range cfg.Warnings() {
		log.Printf("bench: warning: %s", w)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	finished := make(chan struct{})
	defer func() { close(finished); stop() }()
	go func() {
		select {
		case <-ctx.Done():
			// A second signal kills at once (children die with us: Pdeathsig).
			stop()
			log.Printf("bench: interrupted; stopping the cluster (signal again to kill)")
		case <-finished:
		}
	}()

	res, err := bench.Run(ctx, cfg)
	if res == nil {
		return 1, err
	}
	fmt.Println()
	fmt.Println(res.TableLegend())
	fmt.Println()
	fmt.Print(res.Table())
	fmt.Printf("\nresults: %s, %s\n", filepath.Join(cfg.OutDir, "results.md"), filepath.Join(cfg.OutDir, "results.json"))
	switch {
	case err != nil:
		return 1, err
	case res.Interrupted:
		return 130, errors.New("bench: interrupted; results are partial")
	case failed(res):
		return 1, errors.New("bench: some runs failed; see the notes and the logs under " + filepath.Join(cfg.OutDir, "runs"))
	}
	return 0, nil
}

func failed(res *bench.Results) bool {
	for _, r := range res.Runs {
		if r.Error != "" || (r.Setup != nil && r.Setup.Status == bench.StatusFailed) {
			return true
		}
		for _, p := range r.Phases {
			if p.Status == bench.StatusFailed {
				return true
			}
		}
	}
	return false
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// pathArg makes a binary given on the command line a path, so test/cluster
// does not look a bare file name up in the binary directory.
func pathArg(p string) string {
	if p == "" || strings.ContainsRune(p, filepath.Separator) {
		return p
	}
	return "." + string(filepath.Separator) + p
}
