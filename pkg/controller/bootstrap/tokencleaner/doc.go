// Package tokencleaner implements the token-cleaner-controller: it deletes
// bootstrap token Secrets (type bootstrap.kubernetes.io/token in
// kube-system) once their expiration has passed. A token that has not
// expired yet is requeued for its expiry, not polled; an expiration that
// does not parse counts as expired, as upstream has it, and the Secret is
// deleted.
//
// # Differences from upstream
//
// A failed deletion is retried with backoff; upstream logs it at level 3 and
// drops it. Expiry is read on the injected clock.
package tokencleaner
