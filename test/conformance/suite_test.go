package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeE2EEnv makes this test binary behave as e2e.test (TestMain): it runs
// the focused spec, fails it when its name says "fails", and appends
// "<start> <end> <spec>" (Unix nanoseconds) to the file the variable names.
const fakeE2EEnv = "KCM_FAKE_E2E_RECORD"

func TestMain(m *testing.M) {
	if record := os.Getenv(fakeE2EEnv); record != "" {
		os.Exit(fakeE2E(record, os.Args[1:]))
	}
	os.Exit(m.Run())
}

var quoted = regexp.MustCompile(`\\(.)`)

func fakeE2E(record string, args []string) int {
	var spec, report string
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--ginkgo.focus="); ok {
			spec = quoted.ReplaceAllString(strings.TrimSuffix(strings.TrimPrefix(v, `(^|\s)`), "$"), "$1")
		}
		if v, ok := strings.CutPrefix(a, "--ginkgo.json-report="); ok {
			report = v
		}
	}
	start := time.Now()
	time.Sleep(30 * time.Millisecond)
	state := "passed"
	if strings.Contains(spec, "fails") {
		state = "failed"
	}
	b, _ := json.Marshal([]ginkgoReport{{SpecReports: []ginkgoSpec{{LeafNodeType: "It", LeafNodeText: spec, State: state}}}})
	if err := os.WriteFile(report, b, 0o644); err != nil {
		return 2
	}
	f, err := os.OpenFile(record, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return 2
	}
	defer f.Close()
	fmt.Fprintf(f, "%d %d %s\n", start.UnixNano(), time.Now().UnixNano(), spec)
	fmt.Println("Ran 1 of 1 Specs")
	if state != "passed" {
		return 1
	}
	return 0
}

type span struct {
	start, end int64
	spec       string
}

func readRecord(t *testing.T, path string) []span {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []span
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.SplitN(line, " ", 3)
		s, _ := strconv.ParseInt(f[0], 10, 64)
		e, _ := strconv.ParseInt(f[1], 10, 64)
		out = append(out, span{s, e, f[2]})
	}
	return out
}

func TestRunSuiteOrderAndResume(t *testing.T) {
	record := filepath.Join(t.TempDir(), "record")
	t.Setenv(fakeE2EEnv, record)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	specs := []string{
		"[sig-apps] a [Conformance]",
		"[sig-apps] b [Serial] [Conformance]",
		"[sig-apps] c fails [Conformance]",
		"[sig-apps] d [Conformance]",
		"[sig-apps] e [Serial] [Conformance]",
		"[sig-apps] f (with regexp metacharacters) [Conformance]",
	}
	dir := t.TempDir()
	o := SuiteOptions{E2E: self, Kubeconfig: "none", Dir: dir, Parallel: 3, Timeout: time.Minute}

	// A budget already spent: nothing starts, everything is left to resume.
	o.Sitting, o.Budget = "first", time.Nanosecond
	res, err := RunSuite(context.Background(), specs, o)
	if err != nil {
		t.Fatal(err)
	}
	if n := NotRun(res); n != len(specs) {
		t.Fatalf("spent budget: %d not run, want %d", n, len(specs))
	}

	o.Sitting, o.Budget = "second", 0
	res, err = RunSuite(context.Background(), specs, o)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		want := Pass
		if strings.Contains(r.Spec, "fails") {
			want = Fail
		}
		if r.Spec != specs[i] || r.Outcome != want || r.Sitting != "second" {
			t.Errorf("result %d = %+v, want %s of %q in sitting second", i, r, want, specs[i])
		}
	}
	spans := readRecord(t, record)
	if len(spans) != len(specs) {
		t.Fatalf("e2e.test ran %d times, want %d", len(spans), len(specs))
	}
	// The serial specs come after the others and overlap nothing.
	lastParallel := int64(0)
	for _, s := range spans {
		if !Serial(s.spec) {
			lastParallel = max(lastParallel, s.end)
		}
	}
	for _, s := range spans {
		if !Serial(s.spec) {
			continue
		}
		if s.start < lastParallel {
			t.Errorf("serial %q started before the parallel specs ended", s.spec)
		}
		for _, o := range spans {
			if o.spec != s.spec && o.start < s.end && s.start < o.end {
				t.Errorf("serial %q overlapped %q", s.spec, o.spec)
			}
		}
	}

	// Resume again: every spec has its result, none runs; the journal
	// answers for the second sitting, and results.xml counts the failure.
	o.Sitting = "third"
	var printed []string
	summary, failed, err := RunAndReport(context.Background(), "suite", specs, o, func(f string, a ...any) { printed = append(printed, fmt.Sprintf(f, a...)) })
	if err != nil {
		t.Fatal(err)
	}
	if n := len(readRecord(t, record)); n != len(specs) {
		t.Errorf("resume of a finished suite ran e2e.test again: %d runs", n)
	}
	if failed != 1 || !strings.HasSuffix(summary, "5 passed, 1 failed\n") || strings.Contains(summary, "not run yet") {
		t.Errorf("summary = %q, failed = %d", summary, failed)
	}
	if len(printed) != 0 {
		t.Errorf("printed %q for specs that did not run", printed)
	}
	junit, err := os.ReadFile(filepath.Join(dir, "results.xml"))
	if err != nil || !strings.Contains(string(junit), `tests="6" failures="1"`) {
		t.Errorf("results.xml: %v\n%s", err, junit)
	}

	// RerunFailed runs again only the spec that failed.
	o.Sitting, o.RerunFailed = "fourth", true
	res, err = RunSuite(context.Background(), specs, o)
	if err != nil {
		t.Fatal(err)
	}
	spans = readRecord(t, record)
	if last := spans[len(spans)-1]; len(spans) != len(specs)+1 || !strings.Contains(last.spec, "fails") {
		t.Errorf("rerun of the failed: e2e.test ran %d times, the last for %q", len(spans), last.spec)
	}
	if r := res[2]; r.Sitting != "fourth" || res[0].Sitting != "second" {
		t.Errorf("after the rerun: %+v, %+v", res[0], r)
	}

	// A journal line cut by a crash is a spec not run.
	f, err := os.OpenFile(filepath.Join(dir, resultsFile), os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"Spec":"[sig-apps] g`)
	f.Close()
	got, err := LoadResults(dir)
	if err != nil || len(got) != len(specs) {
		t.Errorf("LoadResults after a cut line: %d results, %v", len(got), err)
	}
}

func TestSerial(t *testing.T) {
	all, err := LoadSpecs("all.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 462 {
		t.Errorf("all.txt lists %d specs, want e2e.test v1.37.1's 462", len(all))
	}
	serial := slices.DeleteFunc(slices.Clone(all), func(s string) bool { return !Serial(s) })
	if len(serial) != 29 {
		t.Errorf("%d serial specs, want 29", len(serial))
	}
	// The project's own lists are subsets of the suite.
	for _, list := range []string{"specs.txt", "node.txt"} {
		names, err := LoadSpecs(list)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if !slices.Contains(all, n) {
				t.Errorf("%s lists %q, which all.txt does not", list, n)
			}
		}
	}
}

// TestRunSpecRelativeLogPath: e2e.test runs in the log's directory, so a
// relative log path (a relative --conformance-dir) must still find the
// report e2e.test writes.
func TestRunSpecRelativeLogPath(t *testing.T) {
	dir := t.TempDir()
	spec := "[sig-x] a spec"
	// A stand-in for e2e.test that writes a passing report where told.
	fake := filepath.Join(dir, "e2e.test")
	script := `#!/bin/sh
for a in "$@"; do
  case "$a" in --ginkgo.json-report=*) out="${a#--ginkgo.json-report=}";; esac
done
printf '[{"SuiteSucceeded":true,"SpecReports":[{"ContainerHierarchyTexts":["[sig-x]"],"LeafNodeType":"It","LeafNodeText":"a spec","State":"passed"}]}]' > "$out"
`
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "out", "specs"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	r := runSpec(context.Background(), fake, "kubeconfig", spec, filepath.Join("out", "specs", "0.log"), time.Minute)
	if r.Outcome != Pass {
		t.Errorf("outcome %v (%s), want a pass", r.Outcome, r.Reason)
	}
}
