package app

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/kcm-dev/kcm/cmd/kube-controller-manager/app/options"
)

// upstreamFlag is one row of testdata/upstream-flags.tsv, read off upstream
// kube-controller-manager v1.37.1's --help.
type upstreamFlag struct{ section, name, typ, def string }

func readUpstreamFlags(t *testing.T) []upstreamFlag {
	t.Helper()
	f, err := os.Open("testdata/upstream-flags.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var flags []upstreamFlag
	s := bufio.NewScanner(f)
	s.Scan() // header
	for s.Scan() {
		cols := strings.Split(s.Text(), "\t")
		if len(cols) != 4 {
			t.Fatalf("malformed row %q", s.Text())
		}
		flags = append(flags, upstreamFlag{cols[0], strings.TrimPrefix(cols[1], "--"), cols[2], cols[3]})
	}
	return flags
}

// sameDefault compares upstream's --help rendering of a default with
// pflag's DefValue; --help leaves zero values out.
func sameDefault(up string, f *pflag.Flag) bool {
	if up == "" {
		switch f.DefValue {
		case "", "false", "0", "0s", "[]", "map[]":
			return true
		}
		return false
	}
	if unq, err := strconv.Unquote(up); err == nil {
		return unq == f.DefValue
	}
	return up == f.DefValue
}

func TestEveryUpstreamFlagWithItsTypeDefaultAndSection(t *testing.T) {
	cmd := NewCommand()
	up := readUpstreamFlags(t)
	if len(up) != 148 {
		t.Fatalf("testdata lists %d flags, want 148", len(up))
	}
	sections := map[string]string{}
	for _, fs := range sectionsOf(t) {
		fs.flags.VisitAll(func(f *pflag.Flag) { sections[f.Name] = fs.name })
	}
	for _, u := range up {
		f := cmd.Flags().Lookup(u.name)
		if f == nil {
			t.Errorf("--%s: missing", u.name)
			continue
		}
		typ, _ := pflag.UnquoteUsage(f) // the type name --help shows
		if f.Value.Type() == "bool" {
			typ = "bool" // --help omits it
		}
		switch u.typ {
		case "Level", "pattern=N,...", "version[=true]": // klog and verflag types render specially
		default:
			if typ != u.typ {
				t.Errorf("--%s: type %s, upstream %s", u.name, typ, u.typ)
			}
		}
		if !sameDefault(u.def, f) {
			t.Errorf("--%s: default %q, upstream %s", u.name, f.DefValue, u.def)
		}
		if got := sections[u.name]; !strings.EqualFold(got, u.section) {
			t.Errorf("--%s: section %q, upstream %q", u.name, got, u.section)
		}
	}
}

type section struct {
	name  string
	flags *pflag.FlagSet
}

// sectionsOf rebuilds the named flag sets the way NewCommand does.
func sectionsOf(t *testing.T) []section {
	t.Helper()
	o := newOptionsForTest(t)
	fss := o.Flags()
	addGlobalFlags(&fss)
	var out []section
	for _, name := range fss.Order {
		out = append(out, section{name, fss.FlagSets[name]})
	}
	return out
}

func newOptionsForTest(t *testing.T) *options.Options {
	t.Helper()
	o, err := newOptions()
	if err != nil {
		t.Fatal(err)
	}
	return o
}
