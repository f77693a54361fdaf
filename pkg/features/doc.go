// Package features holds the feature gates of kcm.
//
// kcm accepts exactly the --feature-gates that upstream kube-controller-manager
// accepts: the same names, the same per-version defaults and pre-release
// stages, the same lock-to-default rules and the same inter-gate
// dependencies. Upstream collects those gates through init() side effects of
// k8s.io/kubernetes/pkg/features and several staging libraries; kcm may not
// import k8s.io/kubernetes, so the table is generated from the upstream
// binary's registrations by hack/tools/k8s/gen-features into
// zz_generated_upstream.go (run `make features` to refresh it after bumping
// k8s.io/kubernetes in hack/tools/k8s).
//
// # Gate names
//
// The generated file also declares one featuregate.Feature constant per
// upstream gate, named as the gate (features.PodLevelResources, ...). Code
// checks gates only through these constants: a misspelt name does not
// compile, hack/verify.sh rejects gate names declared anywhere else, and a
// test fails for any constant of this package that the gate kcm builds does
// not register. kcm has no gates of its own; one would be declared here, in a
// hand-written file, and registered next to the upstream table.
//
// # Wiring
//
// Upstream keeps the gates in k8s.io/apiserver/pkg/util/feature
// .DefaultMutableFeatureGate and couples them to the emulated version through
// the component-base compatibility registry, component "kube". kcm does the
// same. The command should, in this order:
//
//	registry, err := features.SetupGlobals()     // 1. before building flags
//	registry.AddFlags(fss.FlagSet("generic"))    // 2. --feature-gates, --emulated-version, --min-compatibility-version (closes the gate)
//	// ... cobra parses flags ...
//	err = registry.Set()                         // 3. in PersistentPreRunE, right after parsing
//	errs := registry.Validate()                  // 4. with the other option validation (emulated-version range, dependencies)
//	// 5. optional, as upstream: utilfeature.DefaultMutableFeatureGate.AddMetrics(); registry.AddMetrics()
//
// After step 3, code checks gates with
// utilfeature.DefaultFeatureGate.Enabled(features.X), exactly as upstream
// does, or with [Enabled], which also copes with a nil or bare test gate.
// client-go's own gates (WatchListClient, ...) follow the same flag because
// SetupGlobals routes client-go's feature lookups to that gate.
//
// Tests that need their own gate can use [Register] with a fresh
// featuregate.NewVersionedFeatureGate and basecompatibility.NewComponentGlobalsRegistry.
package features
