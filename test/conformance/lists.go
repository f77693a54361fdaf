package conformance

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
)

// LoadSpecs reads a spec list: one full spec name a line; blank lines and
// lines starting with # are ignored. A name listed twice is an error.
func LoadSpecs(path string) ([]string, error) {
	entries, err := readList(path)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.name)
	}
	return names, nil
}

// LoadExcluded reads exclusion lists: blocks of one or more "# reason"
// lines followed by the spec names they apply to. Every excluded spec needs a
// reason, and one spec may be in only one of the lists; it maps each name to
// its reason.
func LoadExcluded(paths ...string) (map[string]string, error) {
	out := map[string]string{}
	where := map[string]string{}
	for _, path := range paths {
		entries, err := readList(path)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if e.reason == "" {
				return nil, fmt.Errorf("%s:%d: excluded spec without a reason (a # line above it): %s", path, e.line, e.name)
			}
			if w, dup := where[e.name]; dup {
				return nil, fmt.Errorf("%s:%d: %s is listed in %s as well", path, e.line, e.name, w)
			}
			out[e.name], where[e.name] = e.reason, path
		}
	}
	return out, nil
}

type listEntry struct {
	name, reason string
	line         int
}

// readList parses the common format. A comment block sets the reason for the
// names that follow it, until a blank line or the next comment block.
func readList(path string) ([]listEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var (
		out    []listEntry
		seen   = map[string]int{}
		reason []string
		inText bool // the last line was a name, so a new comment starts a new reason
	)
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for n := 1; s.Scan(); n++ {
		line := strings.TrimSpace(s.Text())
		switch {
		case line == "":
			reason, inText = nil, false
		case strings.HasPrefix(line, "#"):
			if inText {
				reason, inText = nil, false
			}
			reason = append(reason, strings.TrimSpace(strings.TrimPrefix(line, "#")))
		default:
			if prev, dup := seen[line]; dup {
				return nil, fmt.Errorf("%s:%d: listed twice (first on line %d): %s", path, n, prev, line)
			}
			seen[line] = n
			out = append(out, listEntry{name: line, reason: strings.Join(reason, " "), line: n})
			inText = true
		}
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// Which excluded specs Select keeps.
type Which int

const (
	NotExcluded  Which = iota // the default: leave the excluded specs out
	WithExcluded              // run them too
	OnlyExcluded              // run only them (to check they still fail)
)

// Select returns the specs to run, in list order: those matching focus (a
// regular expression, or every spec when nil) and which. It also returns
// the specs it left out for being excluded, or for not being excluded with
// OnlyExcluded.
func Select(specs []string, excluded map[string]string, focus *regexp.Regexp, which Which) (run, skipped []string) {
	for _, s := range specs {
		if focus != nil && !focus.MatchString(s) {
			continue
		}
		_, ex := excluded[s]
		if (ex && which == NotExcluded) || (!ex && which == OnlyExcluded) {
			skipped = append(skipped, s)
			continue
		}
		run = append(run, s)
	}
	return run, skipped
}

// Unlisted returns the excluded specs that specs.txt does not list: a typo,
// or a spec removed from the list but not from the exclusions.
func Unlisted(specs []string, excluded map[string]string) []string {
	listed := make(map[string]bool, len(specs))
	for _, s := range specs {
		listed[s] = true
	}
	var out []string
	for s := range excluded {
		if !listed[s] {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// FocusFor is the ginkgo --focus expression that selects exactly one spec by
// its full name. ginkgo matches it against a text that does not start with
// the name itself (the suite's own container comes first), so the name is
// anchored at a word boundary rather than at ^.
func FocusFor(name string) string {
	return `(^|\s)` + regexp.QuoteMeta(name) + "$"
}
