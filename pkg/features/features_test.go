package features

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"k8s.io/apimachinery/pkg/util/version"
	_ "k8s.io/apiserver/pkg/features" // registers the generic apiserver gates at init, as in the binary
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	clientfeatures "k8s.io/client-go/features"
	basecompatibility "k8s.io/component-base/compatibility"
	"k8s.io/component-base/featuregate"
	logsapi "k8s.io/component-base/logs/api/v1"
	metricsfeatures "k8s.io/component-base/metrics/features"
	zpagesfeatures "k8s.io/component-base/zpages/features"
	cmfeatures "k8s.io/controller-manager/pkg/features"
)

// newGlobals builds a fresh registry + gate wired like the binary, and its flags.
func newGlobals(t *testing.T, args ...string) (basecompatibility.ComponentGlobalsRegistry, featuregate.MutableVersionedFeatureGate, error) {
	t.Helper()
	fg := featuregate.NewVersionedFeatureGate(version.MajorMinor(1, 37))
	r := basecompatibility.NewComponentGlobalsRegistry()
	if err := Register(r, fg); err != nil {
		t.Fatalf("Register: %v", err)
	}
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	r.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return r, fg, err
	}
	if err := r.Set(); err != nil {
		return r, fg, err
	}
	if errs := r.Validate(); len(errs) > 0 {
		return r, fg, fmt.Errorf("%v", errs)
	}
	return r, fg, nil
}

func TestTableSanity(t *testing.T) {
	if UpstreamKubernetesVersion != "v1.37.1" {
		t.Errorf("UpstreamKubernetesVersion = %q, want v1.37.1", UpstreamKubernetesVersion)
	}
	if n := len(upstreamFeatureGates); n < 200 {
		t.Errorf("only %d upstream gates; the generator probably missed registrations", n)
	}
	for _, name := range []featuregate.Feature{"AllAlpha", "AllBeta"} {
		if _, ok := upstreamFeatureGates[name]; ok {
			t.Errorf("%s must not be in the table (every gate has it built in)", name)
		}
	}
	for name, deps := range upstreamFeatureGateDependencies {
		if _, ok := upstreamFeatureGates[name]; !ok {
			t.Errorf("dependency entry for unknown gate %s", name)
		}
		for _, d := range deps {
			if _, ok := upstreamFeatureGates[d]; !ok {
				t.Errorf("%s depends on unknown gate %s", name, d)
			}
		}
	}
}

// gateConstants returns, by name, every featuregate.Feature constant the
// package's non-test files declare (generated or hand-written), read from the
// source so that a constant no table registers cannot hide.
func gateConstants(t *testing.T) map[string]featuregate.Feature {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]featuregate.Feature{}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				sel, ok := vs.Type.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "Feature" {
					continue
				}
				for i, name := range vs.Names {
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Errorf("%s: constant %s is not a string literal", fset.Position(name.Pos()), name.Name)
						continue
					}
					v, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					out[name.Name] = featuregate.Feature(v)
				}
			}
		}
	}
	return out
}

// Every gate constant names a gate that the gate kcm builds knows, under the
// constant's own name: a stale or misspelt constant fails here.
func TestConstantsRegistered(t *testing.T) {
	consts := gateConstants(t)
	if len(consts) < len(upstreamFeatureGates) {
		t.Fatalf("found %d gate constants, want at least the %d of the upstream table", len(consts), len(upstreamFeatureGates))
	}
	_, fg, err := newGlobals(t)
	if err != nil {
		t.Fatal(err)
	}
	known := fg.GetAllVersioned()
	for name, value := range consts {
		if string(value) != name {
			t.Errorf("constant %s = %q: a gate constant is named as its gate", name, value)
		}
		if _, ok := known[value]; !ok {
			t.Errorf("constant %s: gate %q is not registered by Register", name, value)
		}
		if _, ok := upstreamFeatureGates[value]; !ok {
			t.Errorf("constant %s: gate %q is not in the generated upstream table", name, value)
		}
	}
	if cmfeatures.ControllerManagerReleaseLeaderElectionLockOnExit != ControllerManagerReleaseLeaderElectionLockOnExit {
		t.Errorf("constant differs from k8s.io/controller-manager's")
	}
}

func TestEnabledUnknownGate(t *testing.T) {
	const unknown featuregate.Feature = "NoSuchGate"
	for _, fg := range []featuregate.FeatureGate{nil, featuregate.NewFeatureGate()} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), `"NoSuchGate"`) {
					t.Errorf("Enabled(%v, unknown) in a test: recovered %v, want a panic naming the gate", fg, r)
				}
			}()
			Enabled(fg, unknown)
		}()
	}

	// Production: no panic, off, logged once.
	inTest = func() bool { return false }
	defer func() { inTest = testing.Testing }()
	for range 2 {
		if Enabled(nil, unknown) {
			t.Errorf("Enabled(nil, unknown) = true in production, want false")
		}
	}
	if _, ok := reportedUnknown.Load(unknown); !ok {
		t.Errorf("unknown gate not recorded as reported")
	}

	// Known gates keep working through both paths.
	if !Enabled(nil, DeploymentReplicaSetTerminatingReplicas) || Enabled(nil, GenericWorkload) {
		t.Errorf("upstream defaults wrong for a nil gate")
	}
}

func TestDefaultsAt137(t *testing.T) {
	_, fg, err := newGlobals(t)
	if err != nil {
		t.Fatal(err)
	}
	want := map[featuregate.Feature]bool{
		DynamicResourceAllocation:                        true,
		DRADeviceTaints:                                  true,
		ClusterTrustBundle:                               true,
		PodCertificateRequest:                            true,
		GenericWorkload:                                  false,
		DRAResourcePoolStatus:                            false,
		APIServerIdentity:                                true,
		StorageVersionAPI:                                false,
		SELinuxChangePolicy:                              true,
		MultiCIDRServiceAllocator:                        true,
		SeparateTaintEvictionController:                  true,
		VolumeAttributesClass:                            true,
		DeploymentReplicaSetTerminatingReplicas:          true,
		CoordinatedLeaderElection:                        false,
		ControllerManagerReleaseLeaderElectionLockOnExit: false,
	}
	for name, w := range want {
		if got := fg.Enabled(name); got != w {
			t.Errorf("%s default at 1.37 = %v, want %v", name, got, w)
		}
	}
	if got := fg.EmulationVersion().String(); got != "1.37" {
		t.Errorf("emulation version = %s, want 1.37", got)
	}
	if got := fg.MinCompatibilityVersion().String(); got != "1.36" {
		t.Errorf("min compatibility version = %s, want 1.36", got)
	}
}

func TestSetGates(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
		check   map[featuregate.Feature]bool
	}{
		{name: "unknown", args: []string{"--feature-gates=Foo=true"}, wantErr: "unrecognized feature gate: Foo"},
		{name: "unknown with kube prefix", args: []string{"--feature-gates=kube:Foo=true"}, wantErr: "unrecognized feature gate: Foo"},
		{name: "known", args: []string{"--feature-gates=GenericWorkload=true,StorageVersionAPI=true"},
			check: map[featuregate.Feature]bool{GenericWorkload: true, StorageVersionAPI: true, DRAResourcePoolStatus: false}},
		{name: "known with kube prefix", args: []string{"--feature-gates=kube:ControllerManagerReleaseLeaderElectionLockOnExit=true"},
			check: map[featuregate.Feature]bool{ControllerManagerReleaseLeaderElectionLockOnExit: true}},
		{name: "disable beta", args: []string{"--feature-gates=DeploymentReplicaSetTerminatingReplicas=false"},
			check: map[featuregate.Feature]bool{DeploymentReplicaSetTerminatingReplicas: false}},
		{name: "locked to default", args: []string{"--feature-gates=DynamicResourceAllocation=false"},
			wantErr: "cannot set feature gate DynamicResourceAllocation to false, feature is locked to true"},
		{name: "dependency", args: []string{"--feature-gates=DRAResourcePoolStatus=true"},
			check: map[featuregate.Feature]bool{DRAResourcePoolStatus: true}},
		{name: "missing dependency", args: []string{"--feature-gates=CompositePodGroup=true"},
			wantErr: "CompositePodGroup is enabled, but depends on features that are disabled"},
		{name: "client-go gate", args: []string{"--feature-gates=WatchListClient=false"},
			check: map[featuregate.Feature]bool{"WatchListClient": false}},
		{name: "logs gate", args: []string{"--feature-gates=ContextualLogging=false"},
			check: map[featuregate.Feature]bool{"ContextualLogging": false}},
		{name: "AllAlpha", args: []string{"--feature-gates=AllAlpha=true,GenericWorkload=true"},
			check: map[featuregate.Feature]bool{StorageVersionAPI: true, DRAResourcePoolStatus: true, CoordinatedLeaderElection: false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, fg, err := newGlobals(t, tc.args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for name, w := range tc.check {
				if got := fg.Enabled(name); got != w {
					t.Errorf("%s = %v, want %v", name, got, w)
				}
			}
		})
	}
}

func TestEmulatedVersion(t *testing.T) {
	// ClusterTrustBundle went GA (default on) in 1.37; it was beta and off in 1.36.
	if spec := upstreamFeatureGates[ClusterTrustBundle]; !reflect.DeepEqual(spec[len(spec)-1].Version, version.MustParse("1.37")) {
		t.Fatalf("test premise broken: ClusterTrustBundle specs %v", spec)
	}
	_, fg, err := newGlobals(t, "--emulated-version=1.36")
	if err != nil {
		t.Fatal(err)
	}
	if fg.Enabled(ClusterTrustBundle) {
		t.Errorf("ClusterTrustBundle enabled at emulated 1.36, want disabled")
	}
	if !fg.Enabled(DeploymentReplicaSetTerminatingReplicas) {
		t.Errorf("DeploymentReplicaSetTerminatingReplicas disabled at emulated 1.36, want enabled")
	}
	if got := fg.MinCompatibilityVersion().String(); got != "1.35" {
		t.Errorf("min compatibility version = %s, want 1.35", got)
	}

	// At 1.36 ClusterTrustBundle is beta and may be turned on.
	if _, fg, err = newGlobals(t, "--emulated-version=kube=1.36", "--feature-gates=ClusterTrustBundle=true"); err != nil {
		t.Fatal(err)
	} else if !fg.Enabled(ClusterTrustBundle) {
		t.Errorf("ClusterTrustBundle=true not honoured at 1.36")
	}

	// A gate introduced in 1.37 does not exist yet at 1.36.
	if _, _, err = newGlobals(t, "--emulated-version=1.36", "--feature-gates=CompositePodGroup=true"); err == nil ||
		!strings.Contains(err.Error(), "PreAlpha") {
		t.Errorf("setting a 1.37 gate at emulated 1.36: err = %v, want PreAlpha error", err)
	}

	// Floors and ceilings, as upstream: 1.34..1.37.
	if _, _, err = newGlobals(t, "--emulated-version=1.33"); err == nil {
		t.Errorf("--emulated-version=1.33 accepted, want error")
	}
	if _, _, err = newGlobals(t, "--emulated-version=1.38"); err == nil {
		t.Errorf("--emulated-version=1.38 accepted, want error")
	}
	if _, _, err = newGlobals(t, "--emulated-version=1.34"); err != nil {
		t.Errorf("--emulated-version=1.34: %v", err)
	}
}

func TestMinCompatibilityVersion(t *testing.T) {
	// DRAFractionalCapacityRange is beta in 1.37 but on by default only when
	// every control plane component is at least 1.37.
	_, fg, err := newGlobals(t)
	if err != nil {
		t.Fatal(err)
	}
	if fg.Enabled("DRAFractionalCapacityRange") {
		t.Errorf("DRAFractionalCapacityRange on with min-compatibility 1.36")
	}
	if _, fg, err = newGlobals(t, "--min-compatibility-version=1.37"); err != nil {
		t.Fatal(err)
	}
	if !fg.Enabled("DRAFractionalCapacityRange") {
		t.Errorf("DRAFractionalCapacityRange off with min-compatibility 1.37")
	}
}

// The table must agree with the libraries kcm links: registering their gates
// after (or before) ours must not conflict, and AddUpstreamGates must be
// idempotent, even on a closed gate.
func TestConsistentWithLinkedLibraries(t *testing.T) {
	fg := featuregate.NewVersionedFeatureGate(version.MajorMinor(1, 37))
	if err := AddUpstreamGates(fg); err != nil {
		t.Fatal(err)
	}
	for name, add := range map[string]func(featuregate.MutableVersionedFeatureGate) error{
		"logs":               logsapi.AddFeatureGates,
		"metrics":            metricsfeatures.AddFeatureGates,
		"zpages":             zpagesfeatures.AddFeatureGates,
		"controller-manager": cmfeatures.SetupCurrentKubernetesSpecificFeatureGates,
		"client-go": func(fg featuregate.MutableVersionedFeatureGate) error {
			return clientfeatures.AddVersionedFeaturesToExistingFeatureGates(clientGoRegistry{fg})
		},
	} {
		if err := add(fg); err != nil {
			t.Errorf("%s gates disagree with the upstream table: %v", name, err)
		}
	}
	if got, want := len(fg.GetAllVersioned()), len(upstreamFeatureGates)+2; got != want {
		t.Errorf("gate knows %d features, want %d (table + AllAlpha/AllBeta)", got, want)
	}
	fg.AddFlag(pflag.NewFlagSet("x", pflag.ContinueOnError)) // closes fg
	if err := AddUpstreamGates(fg); err != nil {
		t.Errorf("second AddUpstreamGates on a closed gate: %v", err)
	}
	if !reflect.DeepEqual(fg.Dependencies(), UpstreamDependencies()) {
		t.Errorf("dependencies differ from the upstream table")
	}

	// Gates registered at init (k8s.io/apiserver/pkg/features) are kept.
	def := utilfeature.DefaultMutableFeatureGate.DeepCopy()
	before := len(def.GetAllVersioned())
	if before < 10 {
		t.Fatalf("expected k8s.io/apiserver/pkg/features to have registered gates, got %d", before)
	}
	if err := AddUpstreamGates(def); err != nil {
		t.Fatalf("AddUpstreamGates on the default gate: %v", err)
	}
	if got, want := len(def.GetAllVersioned()), len(upstreamFeatureGates)+2; got != want {
		t.Errorf("default gate knows %d features, want %d", got, want)
	}
}

func TestConflictingSpecRejected(t *testing.T) {
	fg := featuregate.NewVersionedFeatureGate(version.MajorMinor(1, 37))
	if err := fg.AddVersioned(map[featuregate.Feature]featuregate.VersionedSpecs{
		GenericWorkload: {{Version: version.MustParse("1.35"), Default: true, PreRelease: featuregate.Beta}},
	}); err != nil {
		t.Fatal(err)
	}
	if err := AddUpstreamGates(fg); err == nil || !strings.Contains(err.Error(), "GenericWorkload") {
		t.Errorf("err = %v, want a conflict on GenericWorkload", err)
	}
}

func TestSetupGlobals(t *testing.T) {
	r, err := SetupGlobals()
	if err != nil {
		t.Fatal(err)
	}
	if r.FeatureGateFor(KubeComponent) != featuregate.FeatureGate(utilfeature.DefaultMutableFeatureGate) {
		t.Errorf("kube component is not backed by DefaultMutableFeatureGate")
	}
	// The whole of upstream's release: version_info's binary label.
	if got, want := r.EffectiveVersionFor(KubeComponent).BinaryVersion(), BinaryVersion(); !got.EqualTo(want) {
		t.Errorf("binary version %s, want %s", got, want)
	}
	fs := pflag.NewFlagSet("kcm", pflag.ContinueOnError)
	r.AddFlags(fs)
	for _, f := range []string{"feature-gates", "emulated-version", "min-compatibility-version"} {
		if fs.Lookup(f) == nil {
			t.Errorf("flag --%s not added", f)
		}
	}
	if err := fs.Parse([]string{"--feature-gates=WatchListClient=false,GenericWorkload=true"}); err != nil {
		t.Fatal(err)
	}
	if err := r.Set(); err != nil {
		t.Fatal(err)
	}
	if !utilfeature.DefaultFeatureGate.Enabled(GenericWorkload) {
		t.Errorf("GenericWorkload not enabled on the default gate")
	}
	if clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient) {
		t.Errorf("client-go does not follow --feature-gates")
	}
	for _, name := range gateConstants(t) {
		_ = utilfeature.DefaultFeatureGate.Enabled(name) // panics if unregistered
	}
}

// clientGoRegistry feeds client-go's own gate specs into a featuregate, to
// check them against the table.
type clientGoRegistry struct {
	fg featuregate.MutableVersionedFeatureGate
}

func (r clientGoRegistry) AddVersioned(in map[clientfeatures.Feature]clientfeatures.VersionedSpecs) error {
	out := map[featuregate.Feature]featuregate.VersionedSpecs{}
	for name, specs := range in {
		var conv featuregate.VersionedSpecs
		for _, s := range specs {
			var pr featuregate.FeatureSpec
			switch s.PreRelease {
			case clientfeatures.Alpha:
				pr.PreRelease = featuregate.Alpha
			case clientfeatures.Beta:
				pr.PreRelease = featuregate.Beta
			case clientfeatures.GA:
				pr.PreRelease = featuregate.GA
			case clientfeatures.Deprecated:
				pr.PreRelease = featuregate.Deprecated
			default:
				return fmt.Errorf("unknown prerelease %q", s.PreRelease)
			}
			conv = append(conv, featuregate.FeatureSpec{Version: s.Version, Default: s.Default,
				LockToDefault: s.LockToDefault, PreRelease: pr.PreRelease})
		}
		out[featuregate.Feature(name)] = conv
	}
	return r.fg.AddVersioned(out)
}
