package csrtest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a self-signed certificate authority.
type CA struct {
	Cert    *x509.Certificate
	Key     crypto.Signer
	CertPEM []byte
	KeyPEM  []byte
}

// NewCA returns a self-signed ECDSA P-256 CA with common name cn, valid from
// an hour ago until notAfter (ten years from now when zero).
func NewCA(t testing.TB, cn string, notAfter time.Time) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if notAfter.IsZero() {
		notAfter = time.Now().AddDate(10, 0, 0)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &CA{Cert: cert, Key: key, CertPEM: pemBlock("CERTIFICATE", der), KeyPEM: keyPEM(t, key)}
}

// WriteFiles writes the CA's certificate and key as ca.crt and ca.key in
// dir and returns their paths.
func (ca *CA) WriteFiles(t testing.TB, dir string) (certFile, keyFile string) {
	t.Helper()
	certFile, keyFile = filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key")
	WriteFile(t, certFile, ca.CertPEM)
	WriteFile(t, keyFile, ca.KeyPEM)
	return certFile, keyFile
}

// WriteFile writes data to path or fails the test.
func WriteFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func keyPEM(t testing.TB, key crypto.Signer) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pemBlock("PRIVATE KEY", der)
}

// Request describes a PKCS#10 certificate request.
type Request struct {
	CommonName    string
	Organizations []string
	DNSNames      []string
	IPs           []net.IP
	Emails        []string
	// Key signs the request; nil means a new ECDSA P-256 key.
	Key crypto.Signer
}

// PEM returns the request, signed by its key, PEM-encoded, and the key.
func (r Request) PEM(t testing.TB) ([]byte, crypto.Signer) {
	t.Helper()
	key := r.Key
	if key == nil {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		key = k
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject:        pkix.Name{CommonName: r.CommonName, Organization: r.Organizations},
		DNSNames:       r.DNSNames,
		IPAddresses:    r.IPs,
		EmailAddresses: r.Emails,
	}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pemBlock("CERTIFICATE REQUEST", der), key
}

// KeyPEM returns key PEM-encoded (PKCS#8).
func KeyPEM(t testing.TB, key crypto.Signer) []byte { return keyPEM(t, key) }

// ParseCertificate decodes the first PEM block of data as a certificate.
func ParseCertificate(t testing.TB, data []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatalf("no PEM block in %q", data)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}
