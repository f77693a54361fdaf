package csrutil

import (
	"crypto/x509"
	"net"
	"testing"

	certv1 "k8s.io/api/certificates/v1"

	"github.com/kcm-dev/kcm/internal/testutil/csrtest"
)

func parse(t *testing.T, r csrtest.Request) *x509.CertificateRequest {
	t.Helper()
	p, _ := r.PEM(t)
	req, err := ParseRequest(p)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

var (
	ds       = certv1.UsageDigitalSignature
	ke       = certv1.UsageKeyEncipherment
	sa       = certv1.UsageServerAuth
	ca       = certv1.UsageClientAuth
	anyUsage = certv1.UsageAny
)

func TestValidateKubeletServing(t *testing.T) {
	node := csrtest.Request{CommonName: "system:node:n1", Organizations: []string{"system:nodes"}, DNSNames: []string{"n1"}}
	with := func(f func(*csrtest.Request)) csrtest.Request { r := node; f(&r); return r }
	tests := []struct {
		name   string
		req    csrtest.Request
		usages []certv1.KeyUsage
		want   string
	}{
		{"RSA usages", node, []certv1.KeyUsage{ds, ke, sa}, ""},
		{"ECDSA usages", node, []certv1.KeyUsage{sa, ds}, ""},
		{"duplicated usage", node, []certv1.KeyUsage{ds, sa, sa}, ""},
		{"IP SAN only", with(func(r *csrtest.Request) { r.DNSNames, r.IPs = nil, []net.IP{net.ParseIP("10.0.0.1")} }), []certv1.KeyUsage{ds, sa}, ""},
		{"two organizations", with(func(r *csrtest.Request) { r.Organizations = []string{"system:nodes", "x"} }), []certv1.KeyUsage{ds, sa}, "subject organization is not system:nodes"},
		{"no SAN", with(func(r *csrtest.Request) { r.DNSNames = nil }), []certv1.KeyUsage{ds, sa}, "DNS or IP subjectAltName is required"},
		{"email SAN", with(func(r *csrtest.Request) { r.Emails = []string{"a@b.c"} }), []certv1.KeyUsage{ds, sa}, "Email subjectAltNames are not allowed"},
		{"client auth", node, []certv1.KeyUsage{ds, ca}, "usages did not match [digital signature key encipherment server auth]"},
		{"extra usage", node, []certv1.KeyUsage{ds, sa, anyUsage}, "usages did not match [digital signature key encipherment server auth]"},
		// Usages are checked before the common name, as upstream.
		{"bad CN and usages", with(func(r *csrtest.Request) { r.CommonName = "n1" }), nil, "usages did not match [digital signature key encipherment server auth]"},
		{"bad CN", with(func(r *csrtest.Request) { r.CommonName = "n1" }), []certv1.KeyUsage{ds, sa}, "subject common name does not begin with system:node:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateKubeletServing(parse(t, tc.req), tc.usages)
			if got := errString(err); got != tc.want {
				t.Errorf("error = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestValidateKubeletClient(t *testing.T) {
	node := csrtest.Request{CommonName: "system:node:n1", Organizations: []string{"system:nodes"}}
	with := func(f func(*csrtest.Request)) csrtest.Request { r := node; f(&r); return r }
	tests := []struct {
		name   string
		req    csrtest.Request
		usages []certv1.KeyUsage
		want   string
	}{
		{"RSA usages", node, []certv1.KeyUsage{ke, ds, ca}, ""},
		{"ECDSA usages", node, []certv1.KeyUsage{ds, ca}, ""},
		{"no organization", with(func(r *csrtest.Request) { r.Organizations = nil }), []certv1.KeyUsage{ds, ca}, "subject organization is not system:nodes"},
		{"DNS SAN", with(func(r *csrtest.Request) { r.DNSNames = []string{"n1"} }), []certv1.KeyUsage{ds, ca}, "DNS subjectAltNames are not allowed"},
		{"email SAN", with(func(r *csrtest.Request) { r.Emails = []string{"a@b.c"} }), []certv1.KeyUsage{ds, ca}, "Email subjectAltNames are not allowed"},
		{"IP SAN", with(func(r *csrtest.Request) { r.IPs = []net.IP{net.ParseIP("10.0.0.1")} }), []certv1.KeyUsage{ds, ca}, "IP subjectAltNames are not allowed"},
		// The common name is checked before the usages, as upstream.
		{"bad CN and usages", with(func(r *csrtest.Request) { r.CommonName = "n1" }), nil, "subject common name does not begin with system:node:"},
		{"server auth", node, []certv1.KeyUsage{ds, sa}, "usages did not match [client auth digital signature key encipherment]"},
		{"client auth only", node, []certv1.KeyUsage{ca}, "usages did not match [client auth digital signature key encipherment]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateKubeletClient(parse(t, tc.req), tc.usages)
			if got := errString(err); got != tc.want {
				t.Errorf("error = %q, want %q", got, tc.want)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
