// Package csrutil holds what the CertificateSigningRequest controllers
// (signing, approving, cleaning) share: reading a request's conditions,
// parsing its PEM, upstream's kubelet client and serving certificate checks,
// and the informer-to-workqueue loop the signer and the approver run.
package csrutil
