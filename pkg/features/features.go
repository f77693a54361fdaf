package features

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	clientfeatures "k8s.io/client-go/features"
	basecompatibility "k8s.io/component-base/compatibility"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
)

// KubeComponent is the component name under which upstream registers its
// effective version and feature gate (the default prefix of --feature-gates
// and --emulated-version).
const KubeComponent = basecompatibility.DefaultKubeComponent

// UpstreamGates returns a copy of the generated upstream gate table.
func UpstreamGates() map[featuregate.Feature]featuregate.VersionedSpecs {
	out := make(map[featuregate.Feature]featuregate.VersionedSpecs, len(upstreamFeatureGates))
	for k, v := range upstreamFeatureGates {
		out[k] = slices.Clone(v)
	}
	return out
}

// UpstreamDependencies returns a copy of upstream's gate dependencies.
func UpstreamDependencies() map[featuregate.Feature][]featuregate.Feature {
	out := make(map[featuregate.Feature][]featuregate.Feature, len(upstreamFeatureGateDependencies))
	for k, v := range upstreamFeatureGateDependencies {
		out[k] = slices.Clone(v)
	}
	return out
}

// completed mirrors what featuregate.AddVersioned stores: a
// MinCompatibilityVersion is inherited by every later entry.
func completed(specs featuregate.VersionedSpecs) featuregate.VersionedSpecs {
	out := slices.Clone(specs)
	for i := 1; i < len(out); i++ {
		if out[i].MinCompatibilityVersion == nil {
			out[i].MinCompatibilityVersion = out[i-1].MinCompatibilityVersion
		}
	}
	return out
}

// AddUpstreamGates adds every upstream gate (and upstream's dependencies
// between gates) that fg does not know yet. Gates fg already knows with the
// identical spec - e.g. those k8s.io/apiserver/pkg/features, client-go or
// component-base register at init - are left alone; a gate fg knows with a
// different spec is an error. Calling it again is a no-op, even after fg was
// closed by AddFlag.
func AddUpstreamGates(fg featuregate.MutableVersionedFeatureGate) error {
	known := fg.GetAllVersioned()
	missing := map[featuregate.Feature]featuregate.VersionedSpecs{}
	var conflicts []string
	for name, specs := range upstreamFeatureGates {
		have, ok := known[name]
		switch {
		case !ok:
			missing[name] = slices.Clone(specs)
		case !reflect.DeepEqual(have, completed(specs)):
			conflicts = append(conflicts, string(name))
		}
	}
	if len(conflicts) > 0 {
		sort.Strings(conflicts)
		return fmt.Errorf("feature gates already registered with a spec different from upstream %s: %s",
			UpstreamKubernetesVersion, strings.Join(conflicts, ", "))
	}
	if len(missing) > 0 {
		if err := fg.AddVersioned(missing); err != nil {
			return err
		}
	}

	haveDeps := fg.Dependencies()
	newDeps := map[featuregate.Feature][]featuregate.Feature{}
	for name, deps := range upstreamFeatureGateDependencies {
		cur, ok := haveDeps[name]
		if ok && containsAll(cur, deps) {
			continue
		}
		newDeps[name] = slices.Clone(deps)
	}
	if len(newDeps) > 0 {
		// AddDependencies merges with (and re-validates) what fg has.
		if err := fg.AddDependencies(newDeps); err != nil {
			return err
		}
	}
	return nil
}

func containsAll(have, want []featuregate.Feature) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// BinaryVersion is the Kubernetes version kcm presents itself as for
// feature gating and emulation: upstream's release, independent of how the
// kcm binary itself is versioned.
func BinaryVersion() *version.Version {
	return version.MustParse(strings.TrimPrefix(UpstreamKubernetesVersion, "v"))
}

// NewEffectiveVersion returns the effective version upstream
// kube-controller-manager registers for component "kube": binary version
// 1.37.x, emulation and min-compatibility floors at binary-3 minors (never
// below 1.31), emulation defaulting to the binary's major.minor and
// min-compatibility to one minor less.
func NewEffectiveVersion() basecompatibility.MutableEffectiveVersion {
	bin := BinaryVersion()
	floor := bin.WithPatch(0).SubtractMinor(3)
	if minFloor := version.MajorMinor(1, 31); floor.LessThan(minFloor) {
		floor = minFloor
	}
	return basecompatibility.NewEffectiveVersion(bin, false, floor, floor)
}

// Register adds the upstream gates to fg and registers fg under component
// "kube" in registry with NewEffectiveVersion. Tests use it with fresh
// instances; the binary uses SetupGlobals.
func Register(registry basecompatibility.ComponentGlobalsRegistry, fg featuregate.MutableVersionedFeatureGate) error {
	if err := AddUpstreamGates(fg); err != nil {
		return err
	}
	return registry.Register(KubeComponent, NewEffectiveVersion(), fg)
}

// SetupGlobals reproduces upstream kube-controller-manager's feature gate
// wiring on the process-wide objects and returns the registry the command
// must AddFlags/Set/Validate (see the package documentation):
//
//   - every upstream gate is added to utilfeature.DefaultMutableFeatureGate;
//   - client-go's feature lookups are routed to that gate (upstream does this
//     in an init() of k8s.io/kubernetes/pkg/features), so --feature-gates
//     controls client-go gates too instead of KUBE_FEATURE_* variables;
//   - the gate is registered as component "kube" in
//     k8s.io/apiserver/pkg/util/compatibility.DefaultComponentGlobalsRegistry.
//
// That registry's init() already registers "kube" with an effective version
// derived from the build's k8s.io/component-base/version (1.37 when the
// version is not stamped, which is what upstream sees too). If the build was
// stamped with some other version (make's 1.37.1-kcm), the registration is
// replaced by NewEffectiveVersion so gating always follows upstream 1.37
// and version_info reports upstream's binary version.
//
// Call it once, before the flags are added.
func SetupGlobals() (basecompatibility.ComponentGlobalsRegistry, error) {
	fg := utilfeature.DefaultMutableFeatureGate
	if err := AddUpstreamGates(fg); err != nil {
		return nil, err
	}
	clientfeatures.ReplaceFeatureGates(ClientGoGates(utilfeature.DefaultFeatureGate))

	registry := compatibility.DefaultComponentGlobalsRegistry
	want := BinaryVersion()
	ev := registry.EffectiveVersionFor(KubeComponent)
	registeredFG, _ := registry.FeatureGateFor(KubeComponent).(featuregate.MutableVersionedFeatureGate)
	// The whole version must match, not only major.minor: it is also
	// version_info's binary label, which is upstream's release (1.37.1),
	// not the build's stamp (1.37.1-kcm).
	if ev != nil && ev.BinaryVersion() != nil && ev.BinaryVersion().EqualTo(want) && registeredFG == fg {
		return registry, nil
	}
	if ev != nil {
		// Only "kube" is registered at this point (by the package's init).
		registry.Reset()
	}
	if err := registry.Register(KubeComponent, NewEffectiveVersion(), fg); err != nil {
		return nil, err
	}
	return registry, nil
}

// ClientGoGates adapts fg to client-go's feature gate interface, for
// clientfeatures.ReplaceFeatureGates.
func ClientGoGates(fg featuregate.FeatureGate) clientfeatures.Gates {
	return clientGoGates{fg}
}

type clientGoGates struct{ fg featuregate.FeatureGate }

func (g clientGoGates) Enabled(name clientfeatures.Feature) bool {
	return g.fg.Enabled(featuregate.Feature(name))
}

// Gate returns the process-wide feature gate that SetupGlobals wires up
// (utilfeature.DefaultFeatureGate), for checks like
// features.Gate().Enabled(features.GenericWorkload) and for
// logsapi.ValidateAndApply.
func Gate() featuregate.FeatureGate {
	return utilfeature.DefaultFeatureGate
}

// Enabled reports whether f is on in fg. A nil gate, or one that does not
// know f (unit tests build bare gates), gives upstream's v1.37 default for f,
// so constructors need no fallback of their own.
//
// f should be one of this package's constants, so that a misspelt gate does
// not compile. A name that neither fg nor the upstream table knows (a
// featuregate.Feature built from a string) never silently means "off": in a
// test binary Enabled panics, so the test fails; in production, where a gate
// query must not bring kcm down, it logs an error once per name and reports
// false.
func Enabled(fg featuregate.FeatureGate, f featuregate.Feature) bool {
	if fg != nil {
		prefix := string(f) + "="
		for _, known := range fg.KnownFeatures() {
			if strings.HasPrefix(known, prefix) {
				return fg.Enabled(f)
			}
		}
	}
	specs, ok := upstreamFeatureGates[f]
	if !ok {
		unknownGate(f)
		return false
	}
	enabled := false
	bin := BinaryVersion()
	for _, spec := range specs {
		if !bin.LessThan(spec.Version) {
			enabled = spec.Default
		}
	}
	return enabled
}

// inTest reports whether this is a test binary; this package's tests replace
// it to exercise the production path of unknownGate.
var inTest = testing.Testing

// reportedUnknown holds the unknown gate names Enabled has logged.
var reportedUnknown sync.Map

// unknownGate handles a query for a gate nobody registered; see Enabled.
func unknownGate(f featuregate.Feature) {
	if inTest() {
		panic(fmt.Sprintf("features.Enabled: unknown feature gate %q: use a constant of github.com/kcm-dev/kcm/pkg/features", f))
	}
	if _, seen := reportedUnknown.LoadOrStore(f, true); !seen {
		klog.ErrorS(nil, "Unknown feature gate queried, treating it as disabled", "featureGate", f)
	}
}
