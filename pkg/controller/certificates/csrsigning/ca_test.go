package csrsigning

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/klog/v2/ktesting"

	"github.com/kcm-dev/kcm/internal/testutil/csrtest"
)

func TestLoadCARejects(t *testing.T) {
	ca := csrtest.NewCA(t, "a", zeroTime)
	other := csrtest.NewCA(t, "b", zeroTime)
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		csrtest.WriteFile(t, p, data)
		return p
	}
	cert, key := write("ca.crt", ca.CertPEM), write("ca.key", ca.KeyPEM)
	tests := []struct {
		name      string
		cert, key string
		wantIn    string
	}{
		{"missing cert", filepath.Join(dir, "none.crt"), key, "none.crt"},
		{"missing key", cert, filepath.Join(dir, "none.key"), "none.key"},
		{"truncated cert", write("trunc.crt", ca.CertPEM[:len(ca.CertPEM)/2]), key, "trunc.crt"},
		{"empty key", cert, write("empty.key", nil), "empty certificate or key file"},
		{"key of another CA", cert, write("other.key", other.KeyPEM), "private key does not match public key"},
		{"two certificates", write("two.crt", append(append([]byte{}, ca.CertPEM...), other.CertPEM...)), key, "expected 1 certificate, found 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadCA(tc.cert, tc.key)
			if err == nil || !strings.Contains(err.Error(), tc.wantIn) {
				t.Fatalf("loadCA error = %v, want one containing %q", err, tc.wantIn)
			}
			if err := CheckCAFiles(tc.cert, tc.key); err == nil {
				t.Error("CheckCAFiles accepted it")
			}
		})
	}
	if _, err := loadCA(cert, key); err != nil {
		t.Errorf("a good CA: %v", err)
	}
}

// TestCAReload: a CA replaced on disk is used at once; a replacement that
// is truncated, missing or mismatched keeps the last good CA.
func TestCAReload(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	first := csrtest.NewCA(t, "first", zeroTime)
	second := csrtest.NewCA(t, "second", zeroTime)
	dir := t.TempDir()
	certFile, keyFile := first.WriteFiles(t, dir)
	src, err := loadCA(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	expect := func(step, cn string) {
		t.Helper()
		if got := src.current(logger).cert.Subject.CommonName; got != cn {
			t.Fatalf("%s: CA %q, want %q", step, got, cn)
		}
	}
	expect("unchanged", "first")

	csrtest.WriteFile(t, certFile, second.CertPEM) // the key still is first's
	expect("certificate replaced before the key", "first")
	csrtest.WriteFile(t, keyFile, second.KeyPEM)
	expect("both replaced", "second")

	csrtest.WriteFile(t, certFile, second.CertPEM[:40])
	expect("truncated certificate", "second")
	expect("truncated certificate, again", "second")
	if err := os.Remove(keyFile); err != nil {
		t.Fatal(err)
	}
	expect("key removed", "second")

	first.WriteFiles(t, dir)
	expect("first restored", "first")
}
