// Package csrsigning implements the certificatesigningrequest-signing-controller:
// it issues certificates for approved CertificateSigningRequests of the four
// built-in signers (kubernetes.io/kube-apiserver-client,
// kubernetes.io/kube-apiserver-client-kubelet, kubernetes.io/kubelet-serving,
// kubernetes.io/legacy-unknown) with the CA of --cluster-signing-cert-file
// and --cluster-signing-key-file or of the signer's own flags, after
// upstream's checks per signer. A request that fails them gets a Failed
// condition (reason SignerValidationFailure). The CA files are read again
// whenever they change on disk; a replacement that does not parse or does
// not match its key is logged and the last good CA kept.
package csrsigning
