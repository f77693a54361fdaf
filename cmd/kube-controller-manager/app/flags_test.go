package app

import (
	"testing"

	"github.com/kcm-dev/kcm/cmd/kube-controller-manager/app/options"
	"github.com/kcm-dev/kcm/internal/testutil/flagtable"
)

// TestEveryUpstreamFlagWithItsTypeDefaultAndSection pins the command line
// to testdata/upstream-flags.tsv, read off upstream kube-controller-manager
// v1.37.1's --help.
func TestEveryUpstreamFlagWithItsTypeDefaultAndSection(t *testing.T) {
	o := newOptionsForTest(t)
	fss := o.Flags()
	addGlobalFlags(fss.FlagSet("global"))
	flagtable.Check(t, "testdata/upstream-flags.tsv", 148, fss)
}

func newOptionsForTest(t *testing.T) *options.Options {
	t.Helper()
	o, err := newOptions()
	if err != nil {
		t.Fatal(err)
	}
	return o
}
