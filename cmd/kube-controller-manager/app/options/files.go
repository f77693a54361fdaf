package options

import (
	"fmt"
	"os"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"

	"github.com/kcm-dev/kcm/pkg/controllermanager/config"
)

// Upstream reads these files only when the controller that needs them
// starts, and fails there with a fatal log. We read them up front, so a
// typo in a path is a one-line startup error naming the flag.

func checkCertFile(flag, path string) error {
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--%s=%s: %w", flag, path, err)
	}
	if _, err := certutil.ParseCertsPEM(data); err != nil {
		return fmt.Errorf("--%s=%s: not a PEM-encoded certificate bundle: %w", flag, path, err)
	}
	return nil
}

func checkKeyFile(flag, path string) error {
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--%s=%s: %w", flag, path, err)
	}
	if _, err := keyutil.ParsePrivateKeyPEM(data); err != nil {
		return fmt.Errorf("--%s=%s: not a PEM-encoded private key: %w", flag, path, err)
	}
	return nil
}

func validateServiceAccount(c *config.ComponentConfig) []error {
	var errs []error
	if err := checkKeyFile("service-account-private-key-file", c.SAController.ServiceAccountKeyFile); err != nil {
		errs = append(errs, err)
	}
	if err := checkCertFile("root-ca-file", c.SAController.RootCAFile); err != nil {
		errs = append(errs, err)
	}
	return append(errs, positive("concurrent-serviceaccount-token-syncs", c.SAController.ConcurrentSATokenSyncs)...)
}
