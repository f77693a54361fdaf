package parity

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
)

// issuedPEM returns a certificate as a signer would issue it, with a fresh
// key and serial and the given dates.
func issuedPEM(t *testing.T, notBefore time.Time) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}},
		DNSNames: []string{"n1"}, IPAddresses: []net.IP{net.ParseIP("10.1.2.3")},
		NotBefore: notBefore, NotAfter: notBefore.Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func csrWithCertificate(pemData []byte) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
		"metadata": map[string]any{"name": "a"},
		"status":   map[string]any{"certificate": base64.StdEncoding.EncodeToString(pemData)},
	}}
}

// TestCertificateSummary: two certificates for the same request, with
// different keys, serials and dates, normalise alike; the summary names
// what a signer decides.
func TestCertificateSummary(t *testing.T) {
	n := &Normalizer{}
	out := make([]string, 2)
	for i, start := range []time.Time{time.Now(), time.Now().Add(-17 * time.Minute)} {
		var err error
		out[i], err = n.Normalize(&Capture{Objects: []*unstructured.Unstructured{csrWithCertificate(issuedPEM(t, start))}})
		if err != nil {
			t.Fatal(err)
		}
	}
	if out[0] != out[1] {
		t.Errorf("two issues of one request normalise differently:\n%s\n---\n%s", out[0], out[1])
	}
	for _, want := range []string{"subject: CN=system:node:n1,O=system:nodes", "- ServerAuth", "- DigitalSignature", "validity: 1h0m0s", "- n1", "isCA: false", "- <ip-1>"} {
		if !strings.Contains(out[0], want) {
			t.Errorf("summary lacks %q:\n%s", want, out[0])
		}
	}
	garbage, err := n.Normalize(&Capture{Objects: []*unstructured.Unstructured{csrWithCertificate([]byte("garbage"))}})
	if err != nil || !strings.Contains(garbage, "invalid: no CERTIFICATE PEM block") {
		t.Errorf("garbage certificate: %v\n%s", err, garbage)
	}
}

func TestCredentialID(t *testing.T) {
	p := issuedPEM(t, time.Now())
	id, ok := credentialID(&rest.Config{TLSClientConfig: rest.TLSClientConfig{CertData: p}})
	if !ok || !strings.HasPrefix(id, "X509SHA256=") || len(id) != len("X509SHA256=")+64 {
		t.Errorf("credentialID = %q, %v", id, ok)
	}
	if _, ok := credentialID(&rest.Config{}); ok {
		t.Error("credentialID without a certificate")
	}
}

func TestCreateStep(t *testing.T) {
	good := `
capture: [{kind: CertificateSigningRequest}]
steps:
- create: {apiVersion: certificates.k8s.io/v1, kind: CertificateSigningRequest, metadata: {name: a}}
  as: {user: "system:node:n1", groups: [system:nodes]}
`
	s, err := ParseScenario([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Steps[0].String(); got != "create CertificateSigningRequest a as system:node:n1" {
		t.Errorf("String() = %q", got)
	}
	flood := "capture: [{kind: Event}]\nsteps:\n- create: {apiVersion: v1, kind: Event, metadata: {generateName: e-, namespace: n}}\n  times: 2000\n"
	if _, err := ParseScenario([]byte(flood)); err != nil {
		t.Errorf("a flood: %v", err)
	}
	for name, bad := range map[string]string{
		"as without create": "capture: [{kind: A}]\nsteps:\n- wait: {kind: A, name: a}\n  as: {user: u}\n",
		"as without user":   "capture: [{kind: A}]\nsteps:\n- create: {apiVersion: v1, kind: A, metadata: {name: a}}\n  as: {groups: [g]}\n",
		"create and apply":  "capture: [{kind: A}]\nsteps:\n- create: {apiVersion: v1, kind: A, metadata: {name: a}}\n  apply: {apiVersion: v1, kind: A, metadata: {name: a}}\n",
		"nameless object":   "capture: [{kind: A}]\nsteps:\n- create: {apiVersion: v1, kind: A}\n",
		"times, a name":     "capture: [{kind: A}]\nsteps:\n- create: {apiVersion: v1, kind: A, metadata: {name: a}}\n  times: 3\n",
		"times too many":    "capture: [{kind: A}]\nsteps:\n- create: {apiVersion: v1, kind: A, metadata: {generateName: a-}}\n  times: 10001\n",
		"times, no create":  "capture: [{kind: A}]\nsteps:\n- wait: {kind: A, name: a}\n  times: 2\n",
	} {
		if _, err := ParseScenario([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
