package bootstrap

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstrapsecretutil "k8s.io/cluster-bootstrap/util/secrets"
	"k8s.io/klog/v2"
)

// FuzzExpiry checks a token's expiration against upstream's
// bootstrapsecretutil.GetExpiration: the same time remaining and verdict
// for any value and clock, an error exactly for a value that is not RFC
// 3339, and, for a token with an expiration, time left exactly when it has
// not expired.
func FuzzExpiry(f *testing.F) {
	for _, v := range []string{
		"", "2026-07-01T12:00:00Z", "2026-07-01T12:00:01Z", "2026-07-01T11:59:59Z", "2026-07-01T14:00:00+02:00",
		"2026-07-01T12:00:00.5Z", "2026-07-01 12:00:00", "2026-07-01", "9999-12-31T23:59:59Z", "0000-01-01T00:00:00Z",
		"2026-02-30T00:00:00Z", "2026-07-01T12:00:00+24:00", "tomorrow", "\x00", strings.Repeat("9", 1000),
	} {
		f.Add(v, int64(1782907200), int32(0))
	}
	f.Add("2026-07-01T12:00:00Z", int64(-62135596800), int32(0))
	f.Add("2026-07-01T12:00:00Z", int64(253402300799), int32(999999999))
	f.Fuzz(func(t *testing.T, expiration string, sec int64, nsec int32) {
		now := time.Unix(sec, int64(nsec)%1e9).UTC()
		secret := &v1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "bootstrap-token-abcdef"},
			Type: bootstrapapi.SecretTypeBootstrapToken,
			Data: map[string][]byte{bootstrapapi.BootstrapTokenExpirationKey: []byte(expiration)}}
		remaining, expired, err := Expiry(secret, now)
		wantRemaining, wantExpired := bootstrapsecretutil.GetExpiration(secret, now)
		if remaining != wantRemaining || expired != wantExpired {
			t.Fatalf("Expiry(%q, %v) = %v, %v; upstream's: %v, %v", expiration, now, remaining, expired, wantRemaining, wantExpired)
		}
		_, perr := time.Parse(time.RFC3339, expiration)
		if (err != nil) != (expiration != "" && perr != nil) {
			t.Fatalf("Expiry(%q): error %v", expiration, err)
		}
		if remaining < 0 || expiration != "" && expired == (remaining > 0) {
			t.Fatalf("Expiry(%q, %v) = %v, expired %v", expiration, now, remaining, expired)
		}
	})
}

// FuzzSigningToken checks that a Secret signs cluster-info only when it
// is a complete, unexpired signing token: named bootstrap-token-<id> with
// that id, a secret, no expiration in the past and usage-bootstrap-signing
// "true"; the id and secret it returns are the Secret's.
func FuzzSigningToken(f *testing.F) {
	f.Add("bootstrap-token-abcdef", "abcdef", "0123456789abcdef", "true", "")
	f.Add("bootstrap-token-abcdef", "abcdef", "0123456789abcdef", "true", "2000-01-01T00:00:00Z")
	f.Add("bootstrap-token-abcdef", "abcdef", "0123456789abcdef", "true", "3000-01-01T00:00:00Z")
	f.Add("bootstrap-token-abcdef", "abcdeg", "0123456789abcdef", "true", "")
	f.Add("bootstrap-token-ABCDEF", "ABCDEF", "x", "true", "")
	f.Add("bootstrap-token-", "", "x", "true", "")
	f.Add("token-abcdef", "abcdef", "x", "TRUE", "bad")
	f.Fuzz(func(t *testing.T, name, id, secretValue, usage, expiration string) {
		data := map[string][]byte{}
		for k, v := range map[string]string{
			bootstrapapi.BootstrapTokenIDKey:           id,
			bootstrapapi.BootstrapTokenSecretKey:       secretValue,
			bootstrapapi.BootstrapTokenUsageSigningKey: usage,
			bootstrapapi.BootstrapTokenExpirationKey:   expiration,
		} {
			if v != "" {
				data[k] = []byte(v)
			}
		}
		secret := &v1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: name},
			Type: bootstrapapi.SecretTypeBootstrapToken, Data: data}
		now := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
		// The zero Logger discards.
		gotID, gotToken, ok := SigningToken(klog.Logger{}, secret, now)
		nameID, nameOK := bootstrapsecretutil.ParseName(name)
		want := nameOK && id != "" && id == nameID && secretValue != "" && usage == "true" &&
			!bootstrapsecretutil.HasExpired(secret, now)
		if ok != want {
			t.Fatalf("SigningToken(%q, id %q, secret %q, usage %q, expiration %q) = %v, want %v", name, id, secretValue, usage, expiration, ok, want)
		}
		if ok && (gotID != id || gotToken != secretValue) {
			t.Fatalf("SigningToken returned %q, %q; the Secret holds %q, %q", gotID, gotToken, id, secretValue)
		}
		if !ok && (gotID != "" || gotToken != "") {
			t.Fatalf("SigningToken refused but returned %q, %q", gotID, gotToken)
		}
	})
}
