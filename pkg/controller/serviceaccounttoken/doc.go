// Package serviceaccounttoken implements the serviceaccount-token-controller:
// it populates Secrets of type kubernetes.io/service-account-token with a
// legacy (non-expiring) ServiceAccount token signed with
// --service-account-private-key-file, the root CA bundle and the namespace;
// it deletes such Secrets whose ServiceAccount is gone (or was replaced by
// one with another UID), and removes references to deleted token Secrets
// from their ServiceAccount.
//
// It is the one controller upstream builds first and with the root
// credentials, since the others may need the tokens it creates.
//
// # Differences from upstream
//
// None visible: upstream's tokens, Secrets and references. Errors that a
// retry cannot fix (a malformed key, a Secret gone, a token that cannot be
// filled in) are logged and the key dropped (controller.Permanent) until the
// object changes again.
package serviceaccounttoken
