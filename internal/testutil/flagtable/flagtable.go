package flagtable

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"
)

// Row is one flag of upstream's --help.
type Row struct{ Section, Name, Type, Default string }

// Read returns the rows of the table at path.
func Read(t *testing.T, path string) []Row {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []Row
	s := bufio.NewScanner(f)
	s.Scan() // header
	for s.Scan() {
		cols := strings.Split(s.Text(), "\t")
		if len(cols) != 4 {
			t.Fatalf("malformed row %q", s.Text())
		}
		rows = append(rows, Row{cols[0], strings.TrimPrefix(cols[1], "--"), cols[2], cols[3]})
	}
	return rows
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

// Check fails t for every row of the table at path that fss (the
// command's named flag sets, "global" included) lacks, or has with another
// type, default or --help section, and when the table does not have want
// rows.
func Check(t *testing.T, path string, want int, fss cliflag.NamedFlagSets) {
	t.Helper()
	rows := Read(t, path)
	if len(rows) != want {
		t.Fatalf("%s lists %d flags, want %d", path, len(rows), want)
	}
	sections := map[string]string{}
	flags := map[string]*pflag.Flag{}
	for _, name := range fss.Order {
		fss.FlagSets[name].VisitAll(func(f *pflag.Flag) { sections[f.Name], flags[f.Name] = name, f })
	}
	for _, u := range rows {
		f := flags[u.Name]
		if f == nil {
			t.Errorf("--%s: missing", u.Name)
			continue
		}
		typ, _ := pflag.UnquoteUsage(f) // the type name --help shows
		if f.Value.Type() == "bool" {
			typ = "bool" // --help omits it
		}
		switch u.Type {
		case "Level", "pattern=N,...", "version[=true]": // klog and verflag types render specially
		default:
			if typ != u.Type {
				t.Errorf("--%s: type %s, upstream %s", u.Name, typ, u.Type)
			}
		}
		if !sameDefault(u.Default, f) {
			t.Errorf("--%s: default %q, upstream %s", u.Name, f.DefValue, u.Default)
		}
		if got := sections[u.Name]; !strings.EqualFold(got, u.Section) {
			t.Errorf("--%s: section %q, upstream %q", u.Name, got, u.Section)
		}
	}
}

// Extra returns the flags of fss that the table at path does not list,
// leaving out those --help hides (deprecated or hidden ones).
func Extra(t *testing.T, path string, fss cliflag.NamedFlagSets) []string {
	t.Helper()
	known := map[string]bool{}
	for _, r := range Read(t, path) {
		known[r.Name] = true
	}
	var extra []string
	for _, name := range fss.Order {
		fss.FlagSets[name].VisitAll(func(f *pflag.Flag) {
			if !known[f.Name] && f.Deprecated == "" && !f.Hidden {
				extra = append(extra, f.Name)
			}
		})
	}
	return extra
}
