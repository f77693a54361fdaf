// Package testutil holds test fixtures shared by unit and integration tests.
package testutil

// The blank import pins envtest in go.mod for the integration tests.
import _ "sigs.k8s.io/controller-runtime/pkg/envtest"
