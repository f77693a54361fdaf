package resourceclaim

import (
	"testing"

	"github.com/kcm-dev/kcm/test/integration/framework"
)

func TestMain(m *testing.M) { framework.Main(m) }
