package kcm

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kcm-dev/kcm/internal/testutil/csrtest"
)

// TestSigningCAFilesCheckedAtStartup: a signing CA file that is truncated,
// holds two certificates or does not match its key exits 1 with one line
// naming the flags, before anything starts.
func TestSigningCAFilesCheckedAtStartup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := csrtest.NewCA(t, "a", time.Time{}), csrtest.NewCA(t, "b", time.Time{})
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		csrtest.WriteFile(t, p, data)
		return p
	}
	aCert, aKey, bKey := write("a.crt", a.CertPEM), write("a.key", a.KeyPEM), write("b.key", b.KeyPEM)
	truncated := write("truncated.crt", a.CertPEM[:len(a.CertPEM)/2])
	two := write("two.crt", append(append([]byte{}, a.CertPEM...), b.CertPEM...))
	cases := []struct {
		name string
		args []string
		want []string // each must appear on one line
	}{
		{"truncated cert", []string{"--cluster-signing-cert-file=" + truncated, "--cluster-signing-key-file=" + aKey},
			[]string{"--cluster-signing-cert-file=" + truncated}},
		{"key of another CA", []string{"--cluster-signing-cert-file=" + aCert, "--cluster-signing-key-file=" + bKey},
			[]string{"--cluster-signing-cert-file=" + aCert, "--cluster-signing-key-file=" + bKey, "private key does not match public key"}},
		{"two certificates", []string{"--cluster-signing-kubelet-serving-cert-file=" + two, "--cluster-signing-kubelet-serving-key-file=" + aKey},
			[]string{"--cluster-signing-kubelet-serving-cert-file=" + two, "expected 1 certificate, found 2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, out := runBinary(t, append([]string{"--kubeconfig=" + kcmConf}, tc.args...)...)
			if code != 1 {
				t.Errorf("exit code = %d, want 1; output:\n%s", code, out)
			}
			if !oneLineWithAll(out, tc.want) {
				t.Errorf("no line of the output contains all of %q:\n%s", tc.want, out)
			}
			if strings.Contains(out, "panic") || strings.Contains(out, "goroutine ") {
				t.Errorf("output shows a panic:\n%s", out)
			}
		})
	}
}

func oneLineWithAll(out string, subs []string) bool {
	for _, line := range strings.Split(out, "\n") {
		all := true
		for _, s := range subs {
			all = all && strings.Contains(line, s)
		}
		if all {
			return true
		}
	}
	return false
}
