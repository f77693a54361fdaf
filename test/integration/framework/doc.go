// Package framework runs integration tests against a real kube-apiserver and
// etcd started by envtest, one shared control plane per test package.
//
// A test package wires it up once:
//
//	func TestMain(m *testing.M) { framework.Main(m) }
//
// and each test calls Setup (StartEnv for a rest.Config, and a namespace of
// its own), NewControllerContext for a ControllerContext as kcm would build
// it, NewController and StartController to run a controller for the
// duration of the test. The rest is shared by the packages' tests: Create,
// Get and Update over any typed client (objects.go); WaitFor, Until and
// WaitQuiet (wait.go); CreateNode (nodes.go); StartKubelet, a stand-in
// kubelet (kubelet.go); pods and Events of a Namespace (pods.go); CRDs
// (crd.go); StartProcess, WriteKubeconfig, FreePort and Poll for the tests
// that run a built binary beside the control plane (process.go).
//
// The binaries are looked up in $KUBEBUILDER_ASSETS, which defaults to
// <repository root>/_output/bin (built by hack/tools/build.sh). Missing
// binaries fail the test unless KCM_SKIP_INTEGRATION=1, which skips it.
package framework
