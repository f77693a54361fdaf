package resourcepoolstatusrequest

import (
	"testing"

	"github.com/kcm-dev/kcm/test/integration/framework"
)

// ResourcePoolStatusRequests (resource.k8s.io/v1alpha3) are served only
// with DRAResourcePoolStatus on and the version enabled; slices keep their
// partitionTypeAttribute only with DRAPartitionableDevicesType on.
func TestMain(m *testing.M) {
	framework.Main(m,
		framework.APIServerFlag("feature-gates", "DRAResourcePoolStatus=true,DRAPartitionableDevicesType=true"),
		framework.APIServerFlag("runtime-config", "resource.k8s.io/v1alpha3=true"))
}
