// Package csrcleaner implements the certificatesigningrequest-cleaner-controller:
// every hour it deletes CertificateSigningRequests that are done with, after
// upstream's durations: issued ones an hour after approval, denied and
// failed ones an hour after that condition, pending ones 24 hours after
// creation, approved but never issued ones 24 hours after approval, and any
// whose certificate has expired.
//
// # Differences from upstream
//
// The first pass runs as soon as the cache has synced, then hourly on the
// injected clock; upstream's first pass does not wait for its cache, which
// has usually not synced yet, so its first deletions usually come an hour
// after start. Deletions carry a UID precondition, so a request recreated
// under the same name since is not deleted.
package csrcleaner
