// Package podcertificaterequestcleaner implements the
// podcertificaterequest-cleaner-controller: it deletes every
// PodCertificateRequest 15 minutes after its creation, by when upstream
// expects any PodCertificateRequest flow to have completed.
//
// # Differences from upstream
//
// Each request is requeued for its own deadline on the injected clock and
// deleted then; upstream lists them all every 5 minutes instead, so it
// deletes a request 15 to 20 minutes after its creation, kcm at 15.
// Deletions carry a UID precondition: a request recreated under the same
// name is left alone, and that is not an error.
package podcertificaterequestcleaner
