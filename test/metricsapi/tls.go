package metricsapi

import (
	"crypto/tls"
	"fmt"

	certutil "k8s.io/client-go/util/cert"
)

// servingCert returns a self-signed certificate for dnsName and its PEM,
// which the APIServices carry as their caBundle.
func servingCert(dnsName string) (tls.Certificate, []byte, error) {
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(dnsName, nil, nil)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("metricsapi: serving certificate: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("metricsapi: serving certificate: %w", err)
	}
	return cert, certPEM, nil
}
