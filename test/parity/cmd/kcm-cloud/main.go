// Command kcm-cloud is kcm's side of the cloud parity scenarios: kcm's
// cloud-controller-manager command (cmd/cloud-controller-manager) with the
// parity test provider (test/parity/cloudprovider) compiled in, as
// hack/tools/ccm is upstream's.
package main

import (
	"os"

	_ "k8s.io/component-base/metrics/prometheus/clientgo"

	"github.com/kcm-dev/kcm/cmd/cloud-controller-manager/app"
	_ "github.com/kcm-dev/kcm/test/parity/cloudprovider"
)

func main() { os.Exit(app.Main()) }
