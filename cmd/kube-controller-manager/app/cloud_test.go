package app

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/kcm-dev/kcm/pkg/cloudcontrollers"
)

// TestCloudProviderSelectsTheCloudGroup: without --cloud-provider (or
// with "external") the registry is upstream v1.37's and --controllers
// rejects the cloud controllers' names; with a registered provider
// ("local") they join, enabled by default; any other name is refused as
// upstream refuses it.
func TestCloudProviderSelectsTheCloudGroup(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		cloud     bool
		errSubstr string
	}{
		{args: nil},
		{args: []string{"--cloud-provider=external"}},
		{args: []string{"--cloud-provider=external", "--controllers=*,service-lb-controller"}, errSubstr: "service-lb-controller"},
		{args: []string{"--cloud-provider=local"}, cloud: true},
		{args: []string{"--cloud-provider=local", "--controllers=*,-service"}, cloud: true},
		{args: []string{"--cloud-provider=aws"}, errSubstr: "built-in cloud providers are disabled"},
	} {
		o, err := newOptions()
		if err != nil {
			t.Fatal(err)
		}
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		for _, f := range o.Flags().FlagSets {
			fs.AddFlagSet(f)
		}
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		r := o.Registry()
		if _, ok := r[cloudcontrollers.ServiceLB]; ok != tc.cloud {
			t.Errorf("%v: service-lb-controller in the registry = %v", tc.args, ok)
		}
		if tc.cloud && len(r) != len(NewRegistry())+4 {
			t.Errorf("%v: %d controllers", tc.args, len(r))
		}
		err = o.Validate()
		switch {
		case tc.errSubstr == "" && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case tc.errSubstr != "" && (err == nil || !strings.Contains(err.Error(), tc.errSubstr)):
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.errSubstr)
		}
	}
}
