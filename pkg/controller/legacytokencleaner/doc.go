// Package legacytokencleaner implements the
// legacy-serviceaccount-token-cleaner-controller: once a day it labels
// auto-generated legacy ServiceAccount token Secrets that have not been used
// for --legacy-service-account-token-clean-up-period with
// kubernetes.io/legacy-token-invalid-since (which makes the kube-apiserver
// reject them), and deletes those that stayed invalid for another period.
//
// # Differences from upstream
//
// None visible: upstream's rules and period, on the injected clock.
package legacytokencleaner
