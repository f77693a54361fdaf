package conformance

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func write(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadLists(t *testing.T) {
	specs, err := LoadSpecs(write(t, "specs.txt", "# header\n\n[sig-apps] a [Conformance]\n  [sig-apps] b [Conformance]  \n# c\n[sig-x] c\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"[sig-apps] a [Conformance]", "[sig-apps] b [Conformance]", "[sig-x] c"}; strings.Join(specs, "|") != strings.Join(want, "|") {
		t.Errorf("specs = %q, want %q", specs, want)
	}
	if _, err := LoadSpecs(write(t, "dup.txt", "a\nb\na\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("duplicate: err = %v, want one naming the first line", err)
	}

	ex, err := LoadExcluded(write(t, "excluded.txt", "# needs exec\n# into a container\na\nb\n\n# needs DNS\nc\n# needs logs\nd\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "needs exec into a container", "b": "needs exec into a container", "c": "needs DNS", "d": "needs logs"}
	for k, v := range want {
		if ex[k] != v {
			t.Errorf("reason of %s = %q, want %q", k, ex[k], v)
		}
	}
	if len(ex) != len(want) {
		t.Errorf("excluded = %v", ex)
	}
	if _, err := LoadExcluded(write(t, "noreason.txt", "# why\na\n\nb\n")); err == nil || !strings.Contains(err.Error(), ":4:") {
		t.Errorf("spec without reason: err = %v, want one naming line 4", err)
	}
	two, err := LoadExcluded(write(t, "one.txt", "# needs exec\na\n"), write(t, "two.txt", "# needs a node\nb\n"))
	if err != nil || two["a"] != "needs exec" || two["b"] != "needs a node" || len(two) != 2 {
		t.Errorf("two lists: %v, %v", two, err)
	}
	if _, err := LoadExcluded(write(t, "x.txt", "# r\na\n"), write(t, "y.txt", "# s\na\n")); err == nil || !strings.Contains(err.Error(), "as well") {
		t.Errorf("a spec in two lists: err = %v", err)
	}
}

func TestSelectAndFocus(t *testing.T) {
	specs := []string{"[sig-apps] Job a", "[sig-apps] Job b", "[sig-apps] Deployment c"}
	ex := map[string]string{"[sig-apps] Job b": "x"}
	run, skipped := Select(specs, ex, regexp.MustCompile("Job"), NotExcluded)
	if len(run) != 1 || run[0] != specs[0] || len(skipped) != 1 || skipped[0] != specs[1] {
		t.Errorf("Select = %q, %q", run, skipped)
	}
	if run, _ := Select(specs, ex, nil, WithExcluded); len(run) != 3 {
		t.Errorf("with excluded: %q", run)
	}
	if run, skipped := Select(specs, ex, nil, OnlyExcluded); len(run) != 1 || run[0] != specs[1] || len(skipped) != 2 {
		t.Errorf("only excluded: %q, %q", run, skipped)
	}
	if got := Unlisted(specs, map[string]string{"[sig-apps] Job b": "x", "typo": "y"}); len(got) != 1 || got[0] != "typo" {
		t.Errorf("Unlisted = %q", got)
	}
	name := "[sig-apps] Deployment should run (x+y) [Conformance]"
	re := regexp.MustCompile(FocusFor(name))
	if !re.MatchString(name) || !re.MatchString(" "+name) || re.MatchString(name+" more") || re.MatchString("x"+name) ||
		re.MatchString("[sig-apps] Deployment should run (xxy) [Conformance]") {
		t.Errorf("FocusFor(%q) = %q does not select exactly the spec", name, FocusFor(name))
	}
}

const specName = "[sig-apps] Job should run a job to completion [Conformance]"

// report builds a ginkgo JSON report with the suite set-up node and one It.
func report(setupState, state, message string) string {
	return `[{"SuiteSucceeded": false, "SpecReports": [
	 {"LeafNodeType": "SynchronizedBeforeSuite", "State": "` + setupState + `", "Failure": {"Message": "nodes not ready", "Location": {"FileName": "/go/pkg/mod/k8s.io/kubernetes@v1.37.1/test/e2e/e2e.go", "LineNumber": 7}, "FailureNodeType": "SynchronizedBeforeSuite"}},
	 {"ContainerHierarchyTexts": ["[sig-apps] Job"], "LeafNodeType": "It", "LeafNodeText": "should run a job to completion [Conformance]",
	  "State": "` + state + `", "RunTime": 2500000000,
	  "Failure": {"Message": "` + message + `", "Location": {"FileName": "/go/pkg/mod/k8s.io/kubernetes@v1.37.1/test/e2e/apps/job.go", "LineNumber": 42}, "FailureNodeType": "It"}},
	 {"ContainerHierarchyTexts": ["[sig-apps] Job"], "LeafNodeType": "It", "LeafNodeText": "other", "State": "skipped"}
	]}]`
}

func TestOutcomeFromReport(t *testing.T) {
	for _, tc := range []struct {
		name, setup, state, msg string
		want                    Outcome
		reason                  string
	}{
		{"pass", "passed", "passed", "", Pass, ""},
		{"fail", "passed", "failed", "timed out waiting", Fail, "failed: timed out waiting\n(k8s.io/kubernetes@v1.37.1/test/e2e/apps/job.go:42)"},
		{"ginkgo timeout", "passed", "interrupted", "Interrupted by Timeout", Timeout, "Interrupted by Timeout"},
		{"spec timeout", "passed", "timedout", "A spec timeout occurred", Timeout, "A spec timeout occurred"},
		{"setup failed", "failed", "skipped", "", Error, "nodes not ready"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, d, reason := outcomeFromReport(write(t, "r.json", report(tc.setup, tc.state, tc.msg)), specName)
			if got != tc.want || !strings.Contains(reason, tc.reason) {
				t.Errorf("outcome = %s, %q; want %s, containing %q", got, reason, tc.want, tc.reason)
			}
			if tc.want == Pass && d != 2500*time.Millisecond {
				t.Errorf("run time = %s", d)
			}
		})
	}
	if got, _, reason := outcomeFromReport(write(t, "r.json", report("passed", "passed", "")), "[sig-apps] Job nope"); got != Error || !strings.Contains(reason, "no spec") {
		t.Errorf("unknown spec: %s %q", got, reason)
	}
	if got, _, _ := outcomeFromReport(filepath.Join(t.TempDir(), "missing.json"), specName); got != Error {
		t.Errorf("missing report: %s", got)
	}
}

func TestJUnitAndSummary(t *testing.T) {
	results := []Result{
		{Spec: "a <&> b", Outcome: Pass, Duration: 1500 * time.Millisecond},
		{Spec: "c", Outcome: Fail, Duration: time.Second, Reason: "first line\nsecond line"},
		{Spec: "d", Outcome: Timeout, Duration: time.Minute, Reason: "killed"},
	}
	p := filepath.Join(t.TempDir(), "junit.xml")
	if err := WriteJUnit(p, "conformance (kcm)", results, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var suite struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Cases    []struct {
			Name    string `xml:"name,attr"`
			Time    string `xml:"time,attr"`
			Failure *struct {
				Type    string `xml:"type,attr"`
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
		} `xml:"testcase"`
	}
	if err := xml.Unmarshal(b, &suite); err != nil {
		t.Fatal(err)
	}
	if suite.Tests != 3 || suite.Failures != 2 || suite.Cases[0].Name != "a <&> b" || suite.Cases[0].Time != "1.500" || suite.Cases[0].Failure != nil {
		t.Errorf("suite = %+v", suite)
	}
	if f := suite.Cases[1].Failure; f == nil || f.Type != "fail" || f.Message != "first line" || f.Text != "first line\nsecond line" {
		t.Errorf("failure = %+v", f)
	}
	sum := Summary(results, 4)
	if !strings.HasSuffix(sum, "\n1 passed, 2 failed\n") || !strings.HasPrefix(sum, "4 listed specs left out") {
		t.Errorf("summary = %q", sum)
	}
	if got := results[2].Line(); got != "TIMEOUT   60.0s  d" {
		t.Errorf("line = %q", got)
	}
}

func TestLastStep(t *testing.T) {
	log := "  STEP: Creating a job @ 11/25/26 19:11:45.247\n  STEP: Ensuring active pods == parallelism @ 11/25/26 19:11:45.256\n" +
		"  [TIMEDOUT] in [It] - job.go:1072\n  STEP: Destroying namespace \"job-2524\" for this suite. @ 11/25/26 19:21:44.865\n"
	if got := lastStep([]byte(log)); got != "Ensuring active pods == parallelism" {
		t.Errorf("lastStep = %q", got)
	}
	if got := lastStep([]byte("  STEP: only @ x\n")); got != "only" {
		t.Errorf("lastStep without failure = %q", got)
	}
}

// The repository's lists load, and every spec they leave out is one
// specs.txt lists.
func TestRepositoryLists(t *testing.T) {
	specs, err := LoadSpecs("specs.txt")
	if err != nil {
		t.Fatal(err)
	}
	out, err := LoadExcluded("excluded.txt", "node.txt")
	if err != nil {
		t.Fatal(err)
	}
	if bad := Unlisted(specs, out); len(bad) > 0 {
		t.Errorf("left out but not in specs.txt: %q", bad)
	}
	node, err := LoadExcluded("node.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(node) == 0 {
		t.Error("node.txt lists no spec")
	}
}
