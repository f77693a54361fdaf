package conformance

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"strings"
	"time"
)

// Outcome is how one spec ended.
type Outcome string

// The outcomes. Timeout means the spec's process was killed at its deadline;
// Error means the harness could not run it (no such spec, e2e.test failed
// before the spec ran).
const (
	Pass    Outcome = "pass"
	Fail    Outcome = "fail"
	Timeout Outcome = "timeout"
	Error   Outcome = "error"
)

// Result is one spec's run.
type Result struct {
	Spec     string
	Outcome  Outcome
	Duration time.Duration
	// Reason says why a spec did not pass: ginkgo's failure message and
	// location, or the harness's own explanation.
	Reason string
	// Cluster is the index of the cluster it ran on; Log its output file.
	Cluster int
	Log     string
	// Sitting names the RunSuite call that ran it (a resumed suite runs
	// over several).
	Sitting string `json:",omitempty"`
}

// Passed reports whether the spec passed.
func (r Result) Passed() bool { return r.Outcome == Pass }

// Line is the one-line summary printed per spec.
func (r Result) Line() string {
	return fmt.Sprintf("%-7s %6.1fs  %s", strings.ToUpper(string(r.Outcome)), r.Duration.Seconds(), r.Spec)
}

// ginkgoReport is the part of ginkgo v2's JSON report (--ginkgo.json-report,
// a list of types.Report) the harness reads.
type ginkgoReport struct {
	SuiteSucceeded bool
	SpecReports    []ginkgoSpec
}

type ginkgoSpec struct {
	ContainerHierarchyTexts []string
	LeafNodeType            string
	LeafNodeText            string
	State                   string
	RunTime                 time.Duration
	Failure                 struct {
		Message  string
		Location struct {
			FileName   string
			LineNumber int
		}
		FailureNodeType string
	}
}

func (s ginkgoSpec) fullText() string {
	return strings.TrimSpace(strings.Join(append(append([]string{}, s.ContainerHierarchyTexts...), s.LeafNodeText), " "))
}

func (s ginkgoSpec) failure() string {
	msg := strings.TrimSpace(s.Failure.Message)
	if loc := s.Failure.Location; loc.FileName != "" {
		msg += fmt.Sprintf("\n(%s:%d", shortPath(loc.FileName), loc.LineNumber)
		if s.Failure.FailureNodeType != "" && s.Failure.FailureNodeType != "It" {
			msg += ", in " + s.Failure.FailureNodeType
		}
		msg += ")"
	}
	return msg
}

// shortPath trims a module-cache path to its path inside the module.
func shortPath(p string) string {
	if i := strings.Index(p, "k8s.io/kubernetes"); i >= 0 {
		return p[i:]
	}
	return p
}

// outcomeFromReport reads the JSON report of a run that focused on spec.
// It returns Error when the spec did not run (not found, or the suite's
// set-up failed, which ginkgo reports as skipped specs).
func outcomeFromReport(path, spec string) (Outcome, time.Duration, string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Error, 0, fmt.Sprintf("no ginkgo report: %v", err)
	}
	var reports []ginkgoReport
	if err := json.Unmarshal(b, &reports); err != nil {
		return Error, 0, fmt.Sprintf("unreadable ginkgo report %s: %v", path, err)
	}
	var setup []string
	for _, r := range reports {
		for _, s := range r.SpecReports {
			if s.LeafNodeType != "It" {
				if s.State != "passed" && s.State != "skipped" {
					setup = append(setup, fmt.Sprintf("%s %s: %s", s.LeafNodeType, s.State, s.failure()))
				}
				continue
			}
			if s.fullText() != spec {
				continue
			}
			switch s.State {
			case "passed":
				return Pass, s.RunTime, ""
			case "skipped", "pending":
				why := "spec was skipped"
				if len(setup) > 0 {
					why += "; " + strings.Join(setup, "; ")
				} else if m := strings.TrimSpace(s.Failure.Message); m != "" {
					why += ": " + m
				}
				return Error, s.RunTime, why
			case "timedout", "interrupted": // interrupted: ginkgo's --ginkgo.timeout
				return Timeout, s.RunTime, s.failure()
			default:
				return Fail, s.RunTime, s.State + ": " + s.failure()
			}
		}
	}
	if len(setup) > 0 {
		return Error, 0, strings.Join(setup, "; ")
	}
	return Error, 0, "e2e.test ran no spec of this name (check the name against e2e.test --list-tests)"
}

// WriteJUnit writes results as a JUnit XML file, one testcase per spec.
func WriteJUnit(path, suite string, results []Result, elapsed time.Duration) error {
	type failure struct {
		Type    string `xml:"type,attr"`
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	}
	type testcase struct {
		Name      string   `xml:"name,attr"`
		Classname string   `xml:"classname,attr"`
		Time      string   `xml:"time,attr"`
		Failure   *failure `xml:"failure,omitempty"`
		SystemOut string   `xml:"system-out,omitempty"`
	}
	type testsuite struct {
		XMLName  xml.Name   `xml:"testsuite"`
		Name     string     `xml:"name,attr"`
		Tests    int        `xml:"tests,attr"`
		Failures int        `xml:"failures,attr"`
		Time     string     `xml:"time,attr"`
		Cases    []testcase `xml:"testcase"`
	}
	ts := testsuite{Name: suite, Tests: len(results), Time: seconds(elapsed)}
	for _, r := range results {
		tc := testcase{Name: r.Spec, Classname: suite, Time: seconds(r.Duration)}
		if r.Log != "" {
			tc.SystemOut = "log: " + r.Log
		}
		if !r.Passed() {
			ts.Failures++
			first, _, _ := strings.Cut(r.Reason, "\n")
			tc.Failure = &failure{Type: string(r.Outcome), Message: first, Text: r.Reason}
		}
		ts.Cases = append(ts.Cases, tc)
	}
	b, err := xml.MarshalIndent(ts, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append([]byte(xml.Header), append(b, '\n')...), 0o644)
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// Summary is the closing lines: how many specs were left out (excluded, or
// not excluded with --only-excluded) and the last line "N passed, M failed".
func Summary(results []Result, excluded int) string {
	passed := 0
	for _, r := range results {
		if r.Passed() {
			passed++
		}
	}
	var b strings.Builder
	if excluded > 0 {
		fmt.Fprintf(&b, "%d listed specs left out (test/conformance/excluded.txt, node.txt)\n", excluded)
	}
	fmt.Fprintf(&b, "%d passed, %d failed\n", passed, len(results)-passed)
	return b.String()
}

// lastStep returns the last "STEP:" line the spec logged before it failed
// or timed out (the cleanup's steps come after), without its timestamp:
// where a spec that times out was waiting.
func lastStep(log []byte) string {
	var step string
	for _, line := range strings.Split(string(log), "\n") {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "STEP: "):
			step = strings.TrimPrefix(t, "STEP: ")
			if i := strings.LastIndex(step, " @ "); i > 0 {
				step = step[:i]
			}
		case strings.HasPrefix(t, "[FAILED]"), strings.HasPrefix(t, "[TIMEDOUT]"),
			strings.HasPrefix(t, "[INTERRUPTED]"), strings.HasPrefix(t, "[PANICKED]"):
			return step
		}
	}
	return step
}
