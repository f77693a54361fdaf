// Package certificates tests the certificatesigningrequest-signing,
// -approving and -cleaner controllers against a real kube-apiserver: what
// it accepts as a request, fills in (requester, condition times) and
// authorizes decides what the controllers see.
package certificates

import (
	"testing"

	"github.com/kcm-dev/kcm/test/integration/framework"
)

func TestMain(m *testing.M) { framework.Main(m) }
