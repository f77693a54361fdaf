package parity

import (
	"fmt"
	"os"
	"strings"

	"github.com/kcm-dev/kcm/cmd/kube-controller-manager/app"
	"github.com/kcm-dev/kcm/pkg/cloudcontrollers"
	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

// unimplementedLogLine starts the line our binary logs at startup naming
// the enabled controllers it does not implement (pkg/controllermanager).
const unimplementedLogLine = "Enabled controllers that kcm does not implement yet"

// Registry tells which controllers kcm implements: by default our binary's
// own registry (a nil constructor means not implemented).
type Registry interface {
	// Canonical resolves a canonical name or alias.
	Canonical(name string) (string, bool)
	// Implemented reports whether kcm implements a canonical name.
	Implemented(name string) bool
}

// DefaultRegistry returns the registry compiled into kcm's command.
// and the cloud group (the cloud scenarios' kcm-cloud runs it).
func DefaultRegistry() Registry { return registry{cloudcontrollers.With(app.NewRegistry())} }

type registry struct{ r controllermanager.Registry }

func (r registry) Canonical(name string) (string, bool) { return r.r.Canonical(name) }
func (r registry) Implemented(name string) bool {
	d, ok := r.r[name]
	return ok && d.Implemented()
}

// missing returns the canonical names of the scenario's required
// controllers that kcm does not implement; an unknown name is an error.
func missing(reg Registry, s *Scenario) ([]string, error) {
	var out []string
	for _, req := range s.Requires {
		name, ok := reg.Canonical(req)
		if !ok {
			return nil, fmt.Errorf("requires: unknown controller %q", req)
		}
		if !reg.Implemented(name) {
			out = append(out, name)
		}
	}
	return out, nil
}

// staleBinary checks our binary's log for its "does not implement yet"
// line naming a controller the scenario requires: then the binary is older
// than the registry the harness was compiled with.
func staleBinary(logPath string, reg Registry, s *Scenario) error {
	b, err := os.ReadFile(logPath)
	if err != nil {
		return nil //nolint:nilerr // no log, nothing to say
	}
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.Contains(line, unimplementedLogLine) {
			continue
		}
		for _, req := range s.Requires {
			name, _ := reg.Canonical(req)
			if reg.Implemented(name) && strings.Contains(line, `"`+name+`"`) {
				return fmt.Errorf("the kcm binary says it does not implement %s, which the harness's registry does: rebuild it (make build)", name)
			}
		}
	}
	return nil
}
