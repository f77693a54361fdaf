package storageversiongc

import (
	"testing"

	"github.com/kcm-dev/kcm/test/integration/framework"
)

// The kube-apiserver serves StorageVersions (internal.apiserver.k8s.io/
// v1alpha1) and records its own only with StorageVersionAPI on;
// APIServerIdentity (on by default) gives it its identity Lease.
func TestMain(m *testing.M) {
	framework.Main(m,
		framework.APIServerFlag("feature-gates", "StorageVersionAPI=true,APIServerIdentity=true"),
		framework.APIServerFlag("runtime-config", "internal.apiserver.k8s.io/v1alpha1=true"))
}
