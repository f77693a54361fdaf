package bootstrap

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstrapsecretutil "k8s.io/cluster-bootstrap/util/secrets"
	"k8s.io/klog/v2"
)

// IsTokenSecret reports whether obj is a bootstrap token Secret in
// namespace, the only Secrets either controller looks at.
func IsTokenSecret(obj any, namespace string) bool {
	s, ok := obj.(*v1.Secret)
	return ok && s.Type == bootstrapapi.SecretTypeBootstrapToken && s.Namespace == namespace
}

// Expiry reads the token's expiration (RFC 3339, key "expiration"). It
// returns how long the token has left, or expired. A token without an
// expiration never expires (0, false, nil). An expiration that does not
// parse counts as expired, as upstream has it, and err says why.
func Expiry(secret *v1.Secret, now time.Time) (remaining time.Duration, expired bool, err error) {
	value := bootstrapsecretutil.GetData(secret, bootstrapapi.BootstrapTokenExpirationKey)
	if value == "" {
		return 0, false, nil
	}
	at, err := time.Parse(time.RFC3339, value)
	if err != nil {
		return 0, true, fmt.Errorf("unparseable expiration time %q: %w", value, err)
	}
	remaining = at.Sub(now)
	if remaining <= 0 {
		return 0, true, nil
	}
	return remaining, false, nil
}

// SigningToken returns the token's ID and secret if the Secret holds a
// token that may sign cluster-info now: its name is bootstrap-token-<id>
// with the same ID under "token-id", it has a "token-secret", it has not
// expired and "usage-bootstrap-signing" is "true". Otherwise ok is false
// and, for a malformed Secret, the reason is logged at level 3.
func SigningToken(logger klog.Logger, secret *v1.Secret, now time.Time) (id, token string, ok bool) {
	nameID, ok := bootstrapsecretutil.ParseName(secret.Name)
	if !ok {
		logger.V(3).Info("Invalid secret name, must be of the form "+bootstrapapi.BootstrapTokenSecretPrefix+"<secret-id>", "secretName", secret.Name)
		return "", "", false
	}
	id = bootstrapsecretutil.GetData(secret, bootstrapapi.BootstrapTokenIDKey)
	switch {
	case id == "":
		logger.V(3).Info("No key in Secret", "key", bootstrapapi.BootstrapTokenIDKey, "secret", klog.KObj(secret))
		return "", "", false
	case id != nameID:
		logger.V(3).Info("Token ID doesn't match secret name", "tokenID", id, "secretName", secret.Name)
		return "", "", false
	}
	token = bootstrapsecretutil.GetData(secret, bootstrapapi.BootstrapTokenSecretKey)
	if token == "" {
		logger.V(3).Info("No key in Secret", "key", bootstrapapi.BootstrapTokenSecretKey, "secret", klog.KObj(secret))
		return "", "", false
	}
	if _, expired, err := Expiry(secret, now); expired {
		if err != nil {
			logger.V(3).Info("Treating bootstrap token as expired", "secret", klog.KObj(secret), "err", err)
		}
		return "", "", false
	}
	if bootstrapsecretutil.GetData(secret, bootstrapapi.BootstrapTokenUsageSigningKey) != "true" {
		return "", "", false
	}
	return id, token, true
}
