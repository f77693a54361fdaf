package parity

import (
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/bits"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
)

// summarizeCertificate replaces the certificate a CertificateSigningRequest
// was issued, new in every run (key, serial number, dates), by what two
// signers of the same request must agree on: issuer and subject, SANs,
// usages, basic constraints, the extensions present, key and signature
// algorithms, and the validity's length.
func summarizeCertificate(kind string, obj map[string]any) {
	if kind != "CertificateSigningRequest" {
		return
	}
	s, ok, _ := unstructured.NestedString(obj, "status", "certificate")
	if !ok || s == "" {
		return
	}
	_ = unstructured.SetNestedField(obj, certificateSummary(s), "status", "certificate")
}

// certificateSummary describes the first certificate of base64-encoded
// PEM data (as status.certificate is in JSON), or says why it cannot.
func certificateSummary(b64 string) map[string]any {
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return map[string]any{"invalid": "not base64"}
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE" {
		return map[string]any{"invalid": "no CERTIFICATE PEM block"}
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return map[string]any{"invalid": err.Error()}
	}
	exts := make([]any, 0, len(c.Extensions))
	for _, e := range c.Extensions {
		exts = append(exts, fmt.Sprintf("%s critical=%v", e.Id, e.Critical))
	}
	return map[string]any{
		"issuer":                rdn(c.Issuer),
		"subject":               rdn(c.Subject),
		"dnsNames":              anyList(c.DNSNames),
		"ipAddresses":           stringers(len(c.IPAddresses), func(i int) string { return c.IPAddresses[i].String() }),
		"emailAddresses":        anyList(c.EmailAddresses),
		"uris":                  stringers(len(c.URIs), func(i int) string { return c.URIs[i].String() }),
		"keyUsage":              keyUsageNames(c.KeyUsage),
		"extKeyUsage":           stringers(len(c.ExtKeyUsage), func(i int) string { return extKeyUsageName(c.ExtKeyUsage[i]) }),
		"basicConstraintsValid": c.BasicConstraintsValid,
		"isCA":                  c.IsCA,
		"extensions":            exts,
		"publicKeyAlgorithm":    c.PublicKeyAlgorithm.String(),
		"signatureAlgorithm":    c.SignatureAlgorithm.String(),
		"validity":              c.NotAfter.Sub(c.NotBefore).String(),
		"serialNumberBits<=128": c.SerialNumber.BitLen() <= 128,
	}
}

func rdn(n pkix.Name) string { return n.String() }

func anyList(s []string) []any {
	return stringers(len(s), func(i int) string { return s[i] })
}

func stringers(n int, f func(int) string) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

// keyUsageNames lists the key usage bits, by name, in bit order.
func keyUsageNames(ku x509.KeyUsage) []any {
	names := map[x509.KeyUsage]string{
		x509.KeyUsageDigitalSignature: "DigitalSignature", x509.KeyUsageContentCommitment: "ContentCommitment",
		x509.KeyUsageKeyEncipherment: "KeyEncipherment", x509.KeyUsageDataEncipherment: "DataEncipherment",
		x509.KeyUsageKeyAgreement: "KeyAgreement", x509.KeyUsageCertSign: "CertSign", x509.KeyUsageCRLSign: "CRLSign",
		x509.KeyUsageEncipherOnly: "EncipherOnly", x509.KeyUsageDecipherOnly: "DecipherOnly",
	}
	var out []string
	for v := uint(ku); v != 0; v &= v - 1 {
		bit := x509.KeyUsage(1 << bits.TrailingZeros(v))
		out = append(out, names[bit])
	}
	return anyList(out)
}

// extKeyUsageName names the extended key usages a signer may set.
func extKeyUsageName(u x509.ExtKeyUsage) string {
	names := map[x509.ExtKeyUsage]string{
		x509.ExtKeyUsageAny: "Any", x509.ExtKeyUsageServerAuth: "ServerAuth", x509.ExtKeyUsageClientAuth: "ClientAuth",
		x509.ExtKeyUsageCodeSigning: "CodeSigning", x509.ExtKeyUsageEmailProtection: "EmailProtection",
		x509.ExtKeyUsageIPSECEndSystem: "IPSECEndSystem", x509.ExtKeyUsageIPSECTunnel: "IPSECTunnel",
		x509.ExtKeyUsageIPSECUser: "IPSECUser", x509.ExtKeyUsageTimeStamping: "TimeStamping",
		x509.ExtKeyUsageOCSPSigning: "OCSPSigning", x509.ExtKeyUsageMicrosoftServerGatedCrypto: "MicrosoftServerGatedCrypto",
		x509.ExtKeyUsageNetscapeServerGatedCrypto: "NetscapeServerGatedCrypto",
	}
	if n, ok := names[u]; ok {
		return n
	}
	return fmt.Sprintf("ExtKeyUsage(%d)", int(u))
}

// credentialID is the authentication.kubernetes.io/credential-id extra the
// API server records for requests made with cfg's client certificate (a
// CertificateSigningRequest's spec.extra): the certificate's SHA-256,
// different on every cluster.
func credentialID(cfg *rest.Config) (string, bool) {
	data := cfg.CertData
	if len(data) == 0 && cfg.CertFile != "" {
		var err error
		if data, err = os.ReadFile(cfg.CertFile); err != nil {
			return "", false
		}
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return "", false
	}
	sum := sha256.Sum256(block.Bytes)
	return "X509SHA256=" + hex.EncodeToString(sum[:]), true
}
