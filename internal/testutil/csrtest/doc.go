// Package csrtest makes what CertificateSigningRequest tests need: CAs
// written to files, PKCS#10 requests with chosen subjects, SANs and key
// types, and CertificateSigningRequest objects built with option funcs.
package csrtest
