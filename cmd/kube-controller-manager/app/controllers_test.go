package app

import (
	"testing"

	"github.com/kcm-dev/kcm/pkg/features"
)

// running counts the controllers a --controllers value starts under the
// default feature gates, serviceaccount-token-controller included (it
// always starts, as upstream's does).
func running(t *testing.T, selection []string) []string {
	t.Helper()
	r := NewRegistry()
	if err := r.ValidateSelection(selection); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, name := range append(r.Selected(selection), "serviceaccount-token-controller") {
		enabled := true
		for _, g := range r[name].RequiredFeatureGates {
			enabled = enabled && features.Gate().Enabled(g)
		}
		if enabled {
			out = append(out, name)
		}
	}
	return out
}

func TestRegistryMatchesUpstream(t *testing.T) {
	if _, err := features.SetupGlobals(); err != nil {
		t.Fatal(err)
	}
	r := NewRegistry()
	if len(r) != 49 {
		t.Errorf("%d controllers, upstream has 49", len(r))
	}
	if got := len(running(t, []string{"*"})); got != 43 {
		t.Errorf("--controllers=* runs %d controllers, upstream 43", got)
	}
	if got := len(running(t, []string{"*", "bootstrapsigner", "tokencleaner"})); got != 45 {
		t.Errorf("kubeadm's --controllers runs %d controllers, upstream 45", got)
	}
	want := []string{"bootstrap-signer-controller", "selinux-warning-controller", "token-cleaner-controller"}
	if got := r.DisabledByDefault(); len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("disabled by default = %v, want %v", got, want)
	}
	for alias, name := range map[string]string{"bootstrapsigner": "bootstrap-signer-controller", "endpoint": "endpoints-controller",
		"resource-claim-controller": "resourceclaim-controller", "root-ca-cert-publisher": "root-ca-certificate-publisher-controller"} {
		if got, ok := r.Canonical(alias); !ok || got != name {
			t.Errorf("alias %s = %q, want %q", alias, got, name)
		}
	}
}

// TestEveryControllerBuilt: every upstream controller has a constructor.
func TestEveryControllerBuilt(t *testing.T) {
	for name, d := range NewRegistry() {
		if d.New == nil {
			t.Errorf("%s has no constructor", name)
		}
	}
}
