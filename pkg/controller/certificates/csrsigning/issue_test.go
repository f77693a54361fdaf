package csrsigning

import (
	"crypto"
	"crypto/x509"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	certv1 "k8s.io/api/certificates/v1"

	"github.com/kcm-dev/kcm/internal/testutil/csrtest"
	"github.com/kcm-dev/kcm/pkg/controller/certificates/csrutil"
)

func ptr(v int32) *int32 { return &v }

func TestLifetime(t *testing.T) {
	year := 365 * 24 * time.Hour
	tests := []struct {
		name string
		exp  *int32
		max  time.Duration
		want time.Duration
	}{
		{"unset: the signing duration", nil, year, year},
		{"shorter than the duration", ptr(3600), year, time.Hour},
		{"ten years: capped", ptr(10 * 365 * 24 * 3600), year, year},
		{"below the minimum", ptr(60), year, 10 * time.Minute},
		{"exactly the minimum", ptr(600), year, 10 * time.Minute},
		{"a short signing duration caps too", ptr(7200), time.Hour, time.Hour},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := lifetime(tc.exp, tc.max); got != tc.want {
				t.Errorf("lifetime = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestValidity(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	farCA := now.AddDate(10, 0, 0)
	tests := []struct {
		name          string
		ttl           time.Duration
		caNotAfter    time.Time
		before, after time.Time
		wantErr       string
	}{
		{name: "long-lived: both ends backdated", ttl: 24 * time.Hour, caNotAfter: farCA,
			before: now.Add(-5 * time.Minute), after: now.Add(24*time.Hour - 5*time.Minute)},
		{name: "exactly 8h is long-lived", ttl: 8 * time.Hour, caNotAfter: farCA,
			before: now.Add(-5 * time.Minute), after: now.Add(8*time.Hour - 5*time.Minute)},
		{name: "short-lived: NotAfter not backdated", ttl: time.Hour, caNotAfter: farCA,
			before: now.Add(-5 * time.Minute), after: now.Add(time.Hour)},
		{name: "truncated to the CA", ttl: 24 * time.Hour, caNotAfter: now.Add(time.Hour),
			before: now.Add(-5 * time.Minute), after: now.Add(time.Hour)},
		{name: "CA expired before the backdated start", ttl: time.Hour, caNotAfter: now.Add(-10 * time.Minute),
			wantErr: "the signer has expired"},
		{name: "CA expires within the backdate", ttl: time.Hour, caNotAfter: now.Add(-time.Minute),
			wantErr: "refusing to sign a certificate that expired in the past"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before, after, err := validity(now, tc.ttl, tc.caNotAfter)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !before.Equal(tc.before) || !after.Equal(tc.after) {
				t.Errorf("validity = %v, %v, %v; want %v, %v", before, after, err, tc.before, tc.after)
			}
		})
	}
}

func TestIssue(t *testing.T) {
	ca := csrtest.NewCA(t, "test-ca", time.Time{})
	auth, err := parseAuthority(ca.CertPEM, ca.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	reqPEM, key := csrtest.Request{
		CommonName: "system:node:n1", Organizations: []string{"system:nodes"},
		DNSNames: []string{"n1.example"}, IPs: []net.IP{net.ParseIP("10.0.0.1")},
	}.PEM(t)
	req, err := csrutil.ParseRequest(reqPEM)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Truncate(time.Second)
	usages := []certv1.KeyUsage{certv1.UsageServerAuth, certv1.UsageDigitalSignature, certv1.UsageClientAuth, certv1.UsageServerAuth, certv1.UsageKeyEncipherment}
	p1, err := issue(auth, req, usages, 48*time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	cert := csrtest.ParseCertificate(t, p1)
	if err := cert.CheckSignatureFrom(ca.Cert); err != nil {
		t.Errorf("not signed by the CA: %v", err)
	}
	if cert.Subject.CommonName != "system:node:n1" || !slices.Equal(cert.Subject.Organization, []string{"system:nodes"}) {
		t.Errorf("subject = %v", cert.Subject)
	}
	if !slices.Equal(cert.DNSNames, []string{"n1.example"}) || len(cert.IPAddresses) != 1 || !cert.IPAddresses[0].Equal(net.ParseIP("10.0.0.1")) {
		t.Errorf("SANs = %v %v", cert.DNSNames, cert.IPAddresses)
	}
	if cert.KeyUsage != x509.KeyUsageDigitalSignature|x509.KeyUsageKeyEncipherment {
		t.Errorf("key usage = %b", cert.KeyUsage)
	}
	if want := []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}; !slices.Equal(cert.ExtKeyUsage, want) {
		t.Errorf("ext key usage = %v, want %v (sorted, de-duplicated)", cert.ExtKeyUsage, want)
	}
	if !cert.BasicConstraintsValid || cert.IsCA {
		t.Errorf("basic constraints valid %v, CA %v", cert.BasicConstraintsValid, cert.IsCA)
	}
	if !cert.NotBefore.Equal(now.Add(-5*time.Minute)) || !cert.NotAfter.Equal(now.Add(48*time.Hour-5*time.Minute)) {
		t.Errorf("validity %v - %v", cert.NotBefore, cert.NotAfter)
	}
	if !publicKeysEqual(cert.PublicKey, key.Public()) {
		t.Error("the certificate does not carry the request's key")
	}
	if cert.SerialNumber.BitLen() > 128 || cert.SerialNumber.Sign() < 0 {
		t.Errorf("serial %v", cert.SerialNumber)
	}
	p2, err := issue(auth, req, usages, 48*time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	if csrtest.ParseCertificate(t, p2).SerialNumber.Cmp(cert.SerialNumber) == 0 {
		t.Error("two certificates share a serial number")
	}
}

func publicKeysEqual(a, b crypto.PublicKey) bool {
	type equaler interface{ Equal(crypto.PublicKey) bool }
	e, ok := a.(equaler)
	return ok && e.Equal(b)
}

func TestX509Usages(t *testing.T) {
	ku, ext, err := x509Usages([]certv1.KeyUsage{certv1.UsageSigning, certv1.UsageSMIME, certv1.UsageEmailProtection, certv1.UsageAny})
	if err != nil {
		t.Fatal(err)
	}
	if ku != x509.KeyUsageDigitalSignature || !slices.Equal(ext, []x509.ExtKeyUsage{x509.ExtKeyUsageAny, x509.ExtKeyUsageEmailProtection}) {
		t.Errorf("usages = %b %v", ku, ext)
	}
	if _, _, err := x509Usages([]certv1.KeyUsage{"sorcery"}); err == nil || err.Error() != `unrecognized usage values: ["sorcery"]` {
		t.Errorf("unknown usage error = %v", err)
	}
}
