// Package framework runs integration tests against a real kube-apiserver and
// etcd started by envtest, one shared control plane per test package.
//
// A test package wires it up once:
//
//	func TestMain(m *testing.M) { framework.Main(m) }
//
// and each test calls StartEnv for a rest.Config, NewControllerContext for a
// ControllerContext as kcm would build it, and StartController to run a
// controller for the duration of the test.
//
// The binaries are looked up in $KUBEBUILDER_ASSETS, which defaults to
// <repository root>/_output/bin (built by hack/tools/build.sh). Missing
// binaries fail the test unless KCM_SKIP_INTEGRATION=1, which skips it.
package framework
