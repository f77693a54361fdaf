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

// TestUpstreamWriteTimingFlagIsHidden: a kcm flag of its own parses
// but stays out of --help, beside upstream's flags.
func TestUpstreamWriteTimingFlagIsHidden(t *testing.T) {
	o := newOptionsForTest(t)
	fss := o.Flags()
	misc := fss.FlagSet("misc")
	if err := misc.Parse([]string{"--kcm-upstream-write-timing"}); err != nil {
		t.Fatal(err)
	}
	if !o.UpstreamWriteTiming {
		t.Error("--kcm-upstream-write-timing did not set UpstreamWriteTiming")
	}
	if f := misc.Lookup("kcm-upstream-write-timing"); f == nil || !f.Hidden {
		t.Error("--kcm-upstream-write-timing is not a hidden flag")
	}
}

// TestWarmStandbyFlag: the warm standby is on by default and
// --kcm-warm-standby=false, hidden from --help, turns it off.
func TestWarmStandbyFlag(t *testing.T) {
	o := newOptionsForTest(t)
	if !o.WarmStandby {
		t.Error("the warm standby is off by default")
	}
	fss := o.Flags()
	misc := fss.FlagSet("misc")
	if err := misc.Parse([]string{"--kcm-warm-standby=false"}); err != nil {
		t.Fatal(err)
	}
	if o.WarmStandby {
		t.Error("--kcm-warm-standby=false did not turn it off")
	}
	if f := misc.Lookup("kcm-warm-standby"); f == nil || !f.Hidden {
		t.Error("--kcm-warm-standby is not a hidden flag")
	}
}
