// Command conformance runs upstream's [Conformance] specs listed in
// test/conformance/specs.txt against local control planes running kcm (or,
// with --upstream, upstream's kube-controller-manager): one line per spec
// with its outcome and seconds, the reason for each failure, a JUnit file,
// and a last line "N passed, M failed". It exits 1 when any spec it ran did
// not pass, 2 on a usage error.
//
//	go run ./test/conformance/cmd/conformance [--upstream] [--focus regexp] [--clusters 2] [--timeout 10m]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/kcm-dev/kcm/test/cluster"
	"github.com/kcm-dev/kcm/test/conformance"
)

func main() {
	os.Exit(run())
}

func run() int {
	var (
		upstream        = flag.Bool("upstream", false, "run upstream's kube-controller-manager instead of kcm")
		kcmBinary       = flag.String("kcm", "", "controller manager binary (name in --bin-dir or path); overrides --upstream")
		focus           = flag.String("focus", "", "run only the listed specs matching this regular expression (a full spec name selects one spec)")
		specsFile       = flag.String("specs", "", "spec list; default test/conformance/specs.txt")
		excludedFile    = flag.String("excluded", "", "exclusion list; default test/conformance/excluded.txt")
		nodeFile        = flag.String("node-list", "", "specs that need a real node, run by make e2e-node and excluded here like those of --excluded; default test/conformance/node.txt")
		includeExcluded = flag.Bool("include-excluded", false, "also run the excluded specs")
		onlyExcluded    = flag.Bool("only-excluded", false, "run only the excluded specs (to check that they still fail, with --upstream)")
		clusters        = flag.Int("clusters", 2, "control planes side by side, specs shared among them")
		nodes           = flag.Int("nodes", 10, "kwok nodes per cluster")
		timeout         = flag.Duration("timeout", 10*time.Minute, "deadline of one spec")
		out             = flag.String("out", "", "output directory (JUnit file, logs); default _output/conformance")
		binDir          = flag.String("bin-dir", "", "binary directory; default $KCM_BIN_DIR or _output/bin")
		keep            = flag.Bool("keep", false, "keep the clusters' etcd data")
		list            = flag.Bool("list", false, "print the specs that would run and exit")
		verbose         = flag.Bool("v", false, "log progress to stderr")
	)
	flag.Parse()
	log.SetFlags(0)
	if flag.NArg() > 0 || *clusters < 1 || *nodes < 1 || *timeout <= 0 {
		log.Printf("conformance: bad arguments (see --help)")
		return 2
	}

	root, err := cluster.RepoRoot()
	if err != nil && (*specsFile == "" || *excludedFile == "" || *nodeFile == "" || *out == "") {
		log.Printf("conformance: %v", err)
		return 2
	}
	def := func(v *string, parts ...string) {
		if *v == "" {
			*v = filepath.Join(append([]string{root}, parts...)...)
		}
	}
	def(specsFile, "test", "conformance", "specs.txt")
	def(excludedFile, "test", "conformance", "excluded.txt")
	def(nodeFile, "test", "conformance", "node.txt")
	def(out, "_output", "conformance")
	if *binDir == "" {
		*binDir = os.Getenv(cluster.BinDirEnv)
	}
	if *binDir == "" {
		*binDir = filepath.Join(root, "_output", "bin")
	}

	specs, err := conformance.LoadSpecs(*specsFile)
	if err != nil {
		log.Printf("conformance: %v", err)
		return 2
	}
	excluded, err := conformance.LoadExcluded(*excludedFile, *nodeFile)
	if err != nil {
		log.Printf("conformance: %v", err)
		return 2
	}
	var re *regexp.Regexp
	if *focus != "" {
		if re, err = regexp.Compile(*focus); err != nil {
			log.Printf("conformance: --focus: %v", err)
			return 2
		}
	}
	if bad := conformance.Unlisted(specs, excluded); len(bad) > 0 {
		log.Printf("conformance: %s or %s excludes specs %s does not list:\n  %s", *excludedFile, *nodeFile, *specsFile, strings.Join(bad, "\n  "))
		return 2
	}
	which := conformance.NotExcluded
	switch {
	case *includeExcluded && *onlyExcluded:
		log.Printf("conformance: --include-excluded and --only-excluded exclude each other")
		return 2
	case *includeExcluded:
		which = conformance.WithExcluded
	case *onlyExcluded:
		which = conformance.OnlyExcluded
	}
	torun, skipped := conformance.Select(specs, excluded, re, which)
	if *list {
		for _, s := range torun {
			fmt.Println(s)
		}
		return 0
	}
	if len(torun) == 0 {
		log.Printf("conformance: no spec selected (%d listed, %d of them excluded)", len(specs), len(skipped))
		return 2
	}
	if _, err := os.Stat(filepath.Join(*binDir, conformance.E2EBinary)); err != nil {
		log.Printf("conformance: %v (build it with hack/tools/build.sh e2e.test)", err)
		return 2
	}

	binary := cluster.OurControllerManager
	if *upstream {
		binary = cluster.UpstreamControllerManager
	}
	if *kcmBinary != "" {
		binary = *kcmBinary
	}
	// Absolute: e2e.test runs in each spec's own directory.
	for _, p := range []*string{out, binDir} {
		if *p, err = filepath.Abs(*p); err != nil {
			log.Printf("conformance: %v", err)
			return 2
		}
	}
	if err := os.RemoveAll(*out); err != nil {
		log.Printf("conformance: %v", err)
		return 2
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Printf("conformance: %v", err)
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logf := func(string, ...any) {}
	if *verbose {
		logf = func(format string, args ...any) { log.Printf(time.Now().Format("15:04:05 ")+format, args...) }
	}
	fmt.Printf("%d specs on %s, %d cluster(s) of %d kwok nodes, %s per spec\n", len(torun), binary, *clusters, *nodes, *timeout)
	start := time.Now()
	results := conformance.Run(ctx, torun, conformance.Options{
		OutDir: *out, BinDir: *binDir, ControllerManager: binary,
		Clusters: *clusters, Nodes: *nodes, Timeout: *timeout, Keep: *keep, Logf: logf,
		OnResult: func(r conformance.Result) {
			fmt.Println(r.Line())
			if !r.Passed() {
				fmt.Println(conformance.Indent(r.Reason, "        "))
			}
		},
	})
	elapsed := time.Since(start)
	junit := filepath.Join(*out, "junit.xml")
	if err := conformance.WriteJUnit(junit, "conformance ("+filepath.Base(binary)+")", results, elapsed); err != nil {
		log.Printf("conformance: %v", err)
	}
	failed := 0
	var names []string
	for _, r := range results {
		if !r.Passed() {
			failed++
			names = append(names, "  "+strings.ToUpper(string(r.Outcome))+" "+r.Spec)
		}
	}
	fmt.Printf("\ntook %s; JUnit %s, logs in %s\n", elapsed.Round(time.Second), junit, *out)
	if failed > 0 {
		fmt.Printf("not passed:\n%s\n", strings.Join(names, "\n"))
	}
	fmt.Print(conformance.Summary(results, len(skipped)))
	if failed > 0 || ctx.Err() != nil {
		return 1
	}
	return 0
}
