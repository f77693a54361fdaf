// Package bootstrap reads bootstrap token Secrets (type
// bootstrap.kubernetes.io/token in kube-system) for the two controllers
// that keep node bootstrapping working: signer (bootstrap-signer-controller)
// and tokencleaner (token-cleaner-controller). Both read expirations on an
// injected clock.
package bootstrap
