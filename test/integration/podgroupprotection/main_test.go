package podgroupprotection

import (
	"testing"

	"github.com/kcm-dev/kcm/test/integration/framework"
)

// The kube-apiserver serves PodGroups (scheduling.k8s.io/v1beta1) and runs
// the PodGroupProtection admission plugin only with GenericWorkload on.
func TestMain(m *testing.M) {
	framework.Main(m,
		framework.APIServerFlag("feature-gates", "GenericWorkload=true"),
		framework.APIServerFlag("runtime-config", "scheduling.k8s.io/v1beta1=true"))
}
