package csrutil

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
)

// errNotCSRBlock is upstream's message for a request whose first PEM block
// is missing or is not a certificate request.
var errNotCSRBlock = errors.New("PEM block type must be CERTIFICATE REQUEST")

// ParseRequest decodes the first PEM block of spec.request as a PKCS#10
// certificate request. The signature is not checked here (the API server
// checked it on creation; signing checks it again).
func ParseRequest(pemBytes []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errNotCSRBlock
	}
	return x509.ParseCertificateRequest(block.Bytes)
}
