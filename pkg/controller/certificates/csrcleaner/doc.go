// Package csrcleaner implements the certificatesigningrequest-cleaner-controller:
// every hour it deletes CertificateSigningRequests that are done with, after
// upstream's durations: issued ones an hour after approval, denied and
// failed ones an hour after that condition, pending ones 24 hours after
// creation, approved but never issued ones 24 hours after approval, and any
// whose certificate has expired.
package csrcleaner
