package app

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/kcm-dev/kcm/internal/testutil/flagtable"
)

// TestEveryUpstreamFlagWithItsTypeDefaultAndSection pins the command line
// to testdata/upstream-flags.tsv, read off the --help of upstream's
// cloud-controller-manager as built from k8s.io/cloud-provider v0.37.1's
// app package (85 flags), and checks that there are no others.
func TestEveryUpstreamFlagWithItsTypeDefaultAndSection(t *testing.T) {
	_, fss, err := newCommandLine()
	if err != nil {
		t.Fatal(err)
	}
	const table = "testdata/upstream-flags.tsv"
	flagtable.Check(t, table, 85, fss)
	if extra := flagtable.Extra(t, table, fss); len(extra) > 0 {
		t.Errorf("flags upstream does not have: %v", extra)
	}
	cmd := NewCommand()
	for _, name := range fss.Order {
		fss.FlagSets[name].VisitAll(func(f *pflag.Flag) {
			if cmd.Flags().Lookup(f.Name) == nil {
				t.Errorf("--%s: not on the command", f.Name)
			}
		})
	}
}

// TestControllersFlagNamesTheCloudControllers: --controllers takes the
// four cloud controllers by name and by upstream's aliases, all enabled by
// default, and nothing else.
func TestControllersFlagNamesTheCloudControllers(t *testing.T) {
	_, fss, err := newCommandLine()
	if err != nil {
		t.Fatal(err)
	}
	usage := fss.FlagSet("generic").Lookup("controllers").Usage
	for _, want := range []string{
		"All controllers: cloud-node-controller, cloud-node-lifecycle-controller, node-route-controller, service-lb-controller",
		"Disabled-by-default controllers: \n",
	} {
		if !strings.Contains(usage+"\n", want) {
			t.Errorf("--controllers help %q lacks %q", usage, want)
		}
	}
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{args: []string{"--cloud-provider=local", "--controllers=*,-service,-route,cloud-node,cloud-node-lifecycle"}},
		{args: []string{"--cloud-provider=local", "--controllers=service-lb-controller,-node-route-controller"}},
		{args: []string{"--cloud-provider=local", "--controllers=*,garbage-collector-controller"}, err: `"garbage-collector-controller" is not in the list of known controllers`},
		{args: nil, err: "--cloud-provider cannot be empty"},
		{args: []string{"--cloud-provider=external"}, err: "--cloud-provider=external: no such cloud provider"},
		{args: []string{"--cloud-provider=aws"}, err: "--cloud-provider=aws: no such cloud provider"},
		{args: []string{"--cloud-provider=local", "--cloud-config=/nonexistent"}, err: "--cloud-config=/nonexistent"},
		{args: []string{"--cloud-provider=local", "--webhooks=foo"}, err: `"foo" is not in the list of known webhooks`},
		{args: []string{"--cloud-provider=local", "--secure-port=10300", "--webhook-secure-port=10300"}, err: "--webhook-secure-port cannot be the same value as --secure-port"},
		{args: []string{"--cloud-provider=local", "--leader-elect-renew-deadline=20s"}, err: "--leader-elect-lease-duration=15s must be greater than --leader-elect-renew-deadline=20s"},
	} {
		cl, fss, err := newCommandLine()
		if err != nil {
			t.Fatal(err)
		}
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		for _, name := range fss.Order {
			fs.AddFlagSet(fss.FlagSets[name])
		}
		if err := fs.Parse(append([]string{"--secure-port=0", "--kubeconfig=/dev/null"}, tc.args...)); err != nil {
			t.Fatal(err)
		}
		_, err = newConfig(cl)
		switch {
		case tc.err == "" && err != nil && !strings.Contains(err.Error(), "kubeconfig"):
			t.Errorf("%v: %v", tc.args, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.err)
		}
	}
}
