package rootcacertpublisher

import (
	"fmt"
	"os"

	certutil "k8s.io/client-go/util/cert"

	"github.com/kcm-dev/kcm/pkg/controllermanager"
)

// rootCABundle returns the CA bundle to publish: the contents of
// --root-ca-file, which must parse as PEM certificates, or, when the flag is
// unset, the CA data of the controller's client config (possibly empty).
func rootCABundle(cc *controllermanager.ControllerContext) ([]byte, error) {
	var file string
	if cc.Config != nil {
		file = cc.Config.SAController.RootCAFile
	}
	if file == "" {
		cfg, err := cc.NewClientConfig(ClientName)
		if err != nil {
			return nil, err
		}
		return cfg.CAData, nil
	}
	data, err := os.ReadFile(file)
	if err == nil {
		_, err = certutil.ParseCertsPEM(data)
	}
	if err != nil {
		return nil, fmt.Errorf("error parsing root-ca-file at %s: %w", file, err)
	}
	return data, nil
}
