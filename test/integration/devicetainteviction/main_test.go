package devicetainteviction

import (
	"testing"

	"github.com/kcm-dev/kcm/test/integration/framework"
)

// resource.k8s.io/v1 serves DeviceTaintRules by default in v1.37, and
// DRADeviceTaints and DRADeviceTaintRules are on by default: no flags.
func TestMain(m *testing.M) { framework.Main(m) }
