package bootstrap

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"k8s.io/klog/v2/ktesting"
)

var now = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

// tokenSecret is a bootstrap token Secret as kubeadm creates it, with data
// overridden (an empty value removes the key).
func tokenSecret(name string, data map[string]string) *v1.Secret {
	d := map[string][]byte{
		bootstrapapi.BootstrapTokenIDKey:               []byte("abcdef"),
		bootstrapapi.BootstrapTokenSecretKey:           []byte("0123456789abcdef"),
		bootstrapapi.BootstrapTokenUsageSigningKey:     []byte("true"),
		bootstrapapi.BootstrapTokenUsageAuthentication: []byte("true"),
	}
	for k, v := range data {
		if v == "" {
			delete(d, k)
		} else {
			d[k] = []byte(v)
		}
	}
	return &v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: name},
		Type:       bootstrapapi.SecretTypeBootstrapToken,
		Data:       d,
	}
}

func TestExpiry(t *testing.T) {
	tests := []struct {
		name       string
		expiration string
		remaining  time.Duration
		expired    bool
		wantErr    bool
	}{
		{name: "no expiration"},
		{name: "in an hour", expiration: now.Add(time.Hour).Format(time.RFC3339), remaining: time.Hour},
		{name: "other zone", expiration: "2026-07-01T14:30:00+02:00", remaining: 30 * time.Minute},
		{name: "now", expiration: now.Format(time.RFC3339), expired: true},
		{name: "an hour ago", expiration: now.Add(-time.Hour).Format(time.RFC3339), expired: true},
		{name: "malformed", expiration: "tomorrow", expired: true, wantErr: true},
		{name: "not RFC 3339", expiration: "2026-07-01 13:00:00", expired: true, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := tokenSecret("bootstrap-token-abcdef", map[string]string{bootstrapapi.BootstrapTokenExpirationKey: tc.expiration})
			remaining, expired, err := Expiry(s, now)
			if remaining != tc.remaining || expired != tc.expired || (err != nil) != tc.wantErr {
				t.Errorf("Expiry = %v, %v, %v; want %v, %v, error %v", remaining, expired, err, tc.remaining, tc.expired, tc.wantErr)
			}
		})
	}
}

func TestSigningToken(t *testing.T) {
	future := now.Add(time.Minute).Format(time.RFC3339)
	past := now.Add(-time.Minute).Format(time.RFC3339)
	tests := []struct {
		name   string
		secret *v1.Secret
		wantOK bool
	}{
		{name: "usable", secret: tokenSecret("bootstrap-token-abcdef", nil), wantOK: true},
		{name: "usable until later", secret: tokenSecret("bootstrap-token-abcdef", map[string]string{bootstrapapi.BootstrapTokenExpirationKey: future}), wantOK: true},
		{name: "expired", secret: tokenSecret("bootstrap-token-abcdef", map[string]string{bootstrapapi.BootstrapTokenExpirationKey: past})},
		{name: "malformed expiration", secret: tokenSecret("bootstrap-token-abcdef", map[string]string{bootstrapapi.BootstrapTokenExpirationKey: "soon"})},
		{name: "name without prefix", secret: tokenSecret("abcdef", nil)},
		{name: "name with a bad ID", secret: tokenSecret("bootstrap-token-ABCDEF", nil)},
		{name: "ID does not match the name", secret: tokenSecret("bootstrap-token-zzzzzz", nil)},
		{name: "no token-id", secret: tokenSecret("bootstrap-token-abcdef", map[string]string{bootstrapapi.BootstrapTokenIDKey: ""})},
		{name: "no token-secret", secret: tokenSecret("bootstrap-token-abcdef", map[string]string{bootstrapapi.BootstrapTokenSecretKey: ""})},
		{name: "no signing usage", secret: tokenSecret("bootstrap-token-abcdef", map[string]string{bootstrapapi.BootstrapTokenUsageSigningKey: ""})},
		{name: "signing usage false", secret: tokenSecret("bootstrap-token-abcdef", map[string]string{bootstrapapi.BootstrapTokenUsageSigningKey: "false"})},
		{name: "signing usage TRUE", secret: tokenSecret("bootstrap-token-abcdef", map[string]string{bootstrapapi.BootstrapTokenUsageSigningKey: "TRUE"})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			logger, _ := ktesting.NewTestContext(t)
			id, token, ok := SigningToken(logger, tc.secret, now)
			if ok != tc.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tc.wantOK)
			}
			if ok && (id != "abcdef" || token != "0123456789abcdef") {
				t.Errorf("token = %s.%s", id, token)
			}
		})
	}
}

func TestIsTokenSecret(t *testing.T) {
	s := tokenSecret("bootstrap-token-abcdef", nil)
	other := s.DeepCopy()
	other.Type = v1.SecretTypeOpaque
	elsewhere := s.DeepCopy()
	elsewhere.Namespace = "default"
	for _, tc := range []struct {
		obj  any
		want bool
	}{{s, true}, {other, false}, {elsewhere, false}, {&v1.ConfigMap{}, false}, {nil, false}} {
		if got := IsTokenSecret(tc.obj, "kube-system"); got != tc.want {
			t.Errorf("IsTokenSecret(%T) = %v, want %v", tc.obj, got, tc.want)
		}
	}
}
