package controllermanager

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/component-base/featuregate"
)

// Constructor builds a controller. It must not do API I/O beyond creating
// clients and registering informer handlers. It returns (nil, nil) when the
// controller has nothing to do under the current configuration.
type Constructor func(ctx context.Context, cc *ControllerContext, name string) (Controller, error)

// Descriptor describes one controller of the registry.
type Descriptor struct {
	// Name is the canonical name, as in --controllers and /healthz/<name>.
	Name string
	// Aliases are the legacy short names --controllers also accepts.
	Aliases []string
	// DisabledByDefault controllers run only when named in --controllers.
	DisabledByDefault bool
	// RequiredFeatureGates must all be enabled for the controller to start.
	RequiredFeatureGates []featuregate.Feature
	// SpecialHandling controllers are started by the command itself, before
	// the others and with the root client, regardless of --controllers
	// (upstream's serviceaccount-token-controller).
	SpecialHandling bool
	// RunningMetric is the name running_managed_controllers gives the
	// controller (set to 1 while its Run runs, 0 once it returned), as
	// upstream reports it: only node-ipam-controller ("nodeipam") and the
	// cloud controllers have one; the others are not counted there.
	RunningMetric string
	// New is the constructor; nil means kcm does not implement it yet.
	New Constructor
}

// Implemented reports whether kcm has a constructor for the controller.
func (d *Descriptor) Implemented() bool { return d.New != nil }

// Registry is the set of all known controllers, by canonical name.
type Registry map[string]*Descriptor

// Names returns all canonical names, sorted.
func (r Registry) Names() []string {
	names := make([]string, 0, len(r))
	for n := range r {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// DisabledByDefault returns the sorted names of controllers that are
// disabled by default.
func (r Registry) DisabledByDefault() []string {
	var names []string
	for n, d := range r {
		if d.DisabledByDefault {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// Aliases returns alias → canonical name.
func (r Registry) Aliases() map[string]string {
	aliases := map[string]string{}
	for n, d := range r {
		for _, a := range d.Aliases {
			aliases[a] = n
		}
	}
	return aliases
}

// Canonical resolves name (canonical or alias) to its canonical name.
func (r Registry) Canonical(name string) (string, bool) {
	if _, ok := r[name]; ok {
		return name, true
	}
	c, ok := r.Aliases()[name]
	return c, ok
}

// ValidateSelection checks a --controllers value: every entry must be "*",
// or a known name or alias, optionally prefixed by "-".
func (r Registry) ValidateSelection(selection []string) error {
	for _, s := range selection {
		if s == "*" {
			continue
		}
		name := strings.TrimPrefix(s, "-")
		if _, ok := r.Canonical(name); !ok {
			return fmt.Errorf("%q is not in the list of known controllers", name)
		}
	}
	return nil
}

// Enabled reports whether --controllers selects the named controller,
// with upstream's rules: an explicit "name" or "-name" wins (the first one
// given), then "*" enables every controller that is not disabled by
// default. selection must hold canonical names (see Canonicalize).
func (r Registry) Enabled(name string, selection []string) bool {
	hasStar := false
	for _, s := range selection {
		switch s {
		case name:
			return true
		case "-" + name:
			return false
		case "*":
			hasStar = true
		}
	}
	if !hasStar {
		return false
	}
	d, ok := r[name]
	return ok && !d.DisabledByDefault
}

// Canonicalize rewrites aliases in a --controllers value to canonical
// names, keeping "-" prefixes and "*".
func (r Registry) Canonicalize(selection []string) []string {
	out := make([]string, len(selection))
	for i, s := range selection {
		neg := strings.HasPrefix(s, "-")
		name := strings.TrimPrefix(s, "-")
		if c, ok := r.Canonical(name); ok {
			name = c
		}
		if neg {
			name = "-" + name
		}
		out[i] = name
	}
	return out
}

// Selected returns the sorted canonical names that the selection enables,
// leaving out SpecialHandling controllers (started separately).
func (r Registry) Selected(selection []string) []string {
	canonical := r.Canonicalize(selection)
	var out []string
	for _, n := range r.Names() {
		if r[n].SpecialHandling {
			continue
		}
		if r.Enabled(n, canonical) {
			out = append(out, n)
		}
	}
	return slices.Clip(out)
}
