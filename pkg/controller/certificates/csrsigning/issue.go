package csrsigning

import (
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"math/big"
	"time"

	certv1 "k8s.io/api/certificates/v1"
)

const (
	// backdate is how far NotBefore lies before the signature, for clocks
	// behind the signer's. It must stay below minLifetime.
	backdate = 5 * time.Minute
	// shortLifetime: certificates living less than this do not have their
	// NotAfter backdated too (5 minutes would be too large a share).
	shortLifetime = 8 * time.Hour
	// minLifetime is the shortest lifetime a request may ask for through
	// spec.expirationSeconds (the API server also rejects less than 600s).
	minLifetime = 10 * time.Minute
)

// serialLimit: serial numbers are random below 2^128.
var serialLimit = new(big.Int).Lsh(big.NewInt(1), 128)

// lifetime is what a request gets: spec.expirationSeconds within
// [minLifetime, max], or max (--cluster-signing-duration) when unset.
func lifetime(expirationSeconds *int32, max time.Duration) time.Duration {
	if expirationSeconds == nil {
		return max
	}
	d := time.Duration(*expirationSeconds) * time.Second
	switch {
	case d > max:
		return max
	case d < minLifetime:
		return minLifetime
	}
	return d
}

// validity returns NotBefore and NotAfter as upstream's permissive policy
// computes them: NotBefore backdated; NotAfter = now + ttl, also backdated
// unless the certificate is short-lived; never past the CA's NotAfter.
func validity(now time.Time, ttl time.Duration, caNotAfter time.Time) (notBefore, notAfter time.Time, err error) {
	notBefore = now.Add(-backdate)
	notAfter = now.Add(ttl - backdate)
	if ttl < shortLifetime {
		notAfter = now.Add(ttl)
	}
	if !notAfter.Before(caNotAfter) {
		notAfter = caNotAfter
	}
	if !notBefore.Before(caNotAfter) {
		return time.Time{}, time.Time{}, fmt.Errorf("the signer has expired: NotAfter=%v", caNotAfter)
	}
	if !now.Before(caNotAfter) {
		return time.Time{}, time.Time{}, fmt.Errorf("refusing to sign a certificate that expired in the past: NotAfter=%v", caNotAfter)
	}
	return notBefore, notAfter, nil
}

// issue signs req, whose signature the caller checked, with ca and returns
// the PEM certificate. The subject and subject alternative names come from
// the request; every requested extension is dropped; usages are the
// request's spec.usages; the result is never a CA.
func issue(ca *authority, req *x509.CertificateRequest, usages []certv1.KeyUsage, ttl time.Duration, now time.Time) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, serialLimit)
	if err != nil {
		return nil, fmt.Errorf("unable to generate a serial number for %s: %w", req.Subject.CommonName, err)
	}
	ku, ext, err := x509Usages(usages)
	if err != nil {
		return nil, err
	}
	notBefore, notAfter, err := validity(now, ttl, ca.cert.NotAfter)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               req.Subject,
		DNSNames:              req.DNSNames,
		IPAddresses:           req.IPAddresses,
		EmailAddresses:        req.EmailAddresses,
		URIs:                  req.URIs,
		PublicKeyAlgorithm:    req.PublicKeyAlgorithm,
		PublicKey:             req.PublicKey,
		KeyUsage:              ku,
		ExtKeyUsage:           ext,
		BasicConstraintsValid: true,
		IsCA:                  false,
		NotBefore:             notBefore,
		NotAfter:              notAfter,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, req.PublicKey, ca.key)
	if err != nil {
		return nil, fmt.Errorf("failed to sign certificate: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}
