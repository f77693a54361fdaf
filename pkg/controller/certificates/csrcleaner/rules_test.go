package csrcleaner

import (
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	certv1 "k8s.io/api/certificates/v1"

	"github.com/kcm-dev/kcm/internal/testutil/csrtest"
)

// certificateUntil returns a PEM certificate expiring at notAfter.
func certificateUntil(t *testing.T, notAfter time.Time) []byte {
	t.Helper()
	ca := csrtest.NewCA(t, "ca", time.Time{})
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "leaf"},
		NotBefore: notAfter.Add(-48 * time.Hour), NotAfter: notAfter}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, ca.Key.Public(), ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func TestExpired(t *testing.T) {
	now := time.Date(2030, 6, 1, 0, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	valid := certificateUntil(t, now.Add(24*time.Hour))
	expiredCert := certificateUntil(t, now.Add(-time.Minute))
	const sec = time.Second
	tests := []struct {
		name      string
		opts      []csrtest.Option
		wantAfter time.Duration
		want      bool
	}{
		{name: "pending, fresh", opts: []csrtest.Option{csrtest.CreatedAt(ago(23 * time.Hour))}},
		{name: "pending, past 24h", opts: []csrtest.Option{csrtest.CreatedAt(ago(24*time.Hour + sec))}, want: true, wantAfter: PendingExpiration},
		{name: "pending, exactly 24h", opts: []csrtest.Option{csrtest.CreatedAt(ago(24 * time.Hour))}},
		{name: "issued, approved 59m ago", opts: []csrtest.Option{csrtest.Approved(ago(59 * time.Minute)), csrtest.WithCertificate(valid)}},
		{name: "issued, approved past 1h", opts: []csrtest.Option{csrtest.Approved(ago(time.Hour + sec)), csrtest.WithCertificate(valid)}, want: true, wantAfter: ApprovedExpiration},
		{name: "denied, 59m", opts: []csrtest.Option{csrtest.WithCondition(certv1.CertificateDenied, ago(59*time.Minute))}},
		{name: "denied, past 1h", opts: []csrtest.Option{csrtest.WithCondition(certv1.CertificateDenied, ago(time.Hour+sec))}, want: true, wantAfter: DeniedExpiration},
		{name: "failed, past 1h", opts: []csrtest.Option{csrtest.Approved(ago(2 * time.Minute)), csrtest.WithCondition(certv1.CertificateFailed, ago(time.Hour+sec))}, want: true, wantAfter: DeniedExpiration},
		{name: "failed, 59m", opts: []csrtest.Option{csrtest.Approved(ago(2 * time.Hour)), csrtest.WithCondition(certv1.CertificateFailed, ago(59*time.Minute))}},
		{name: "approved, unissued, 23h", opts: []csrtest.Option{csrtest.Approved(ago(23 * time.Hour))}},
		{name: "approved, unissued, past 24h", opts: []csrtest.Option{csrtest.Approved(ago(24*time.Hour + sec))}, want: true, wantAfter: PendingExpiration},
		{name: "issued, certificate expired", opts: []csrtest.Option{csrtest.Approved(ago(time.Minute)), csrtest.WithCertificate(expiredCert)}, want: true},
		{name: "issued, certificate garbage", opts: []csrtest.Option{csrtest.Approved(ago(time.Minute)), csrtest.WithCertificate([]byte("garbage"))}},
		{name: "condition without a time", opts: []csrtest.Option{csrtest.WithCondition(certv1.CertificateDenied, time.Time{})}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			csr := csrtest.CSR("a", certv1.KubeAPIServerClientSignerName, nil, append([]csrtest.Option{csrtest.CreatedAt(ago(time.Minute))}, tc.opts...)...)
			why, after, ok := expired(csr, now)
			if ok != tc.want || after != tc.wantAfter {
				t.Errorf("expired = %q, %v, %v; want %v, %v", why, after, ok, tc.want, tc.wantAfter)
			}
		})
	}
}
