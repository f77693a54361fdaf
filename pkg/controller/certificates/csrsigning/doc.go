// Package csrsigning implements the certificatesigningrequest-signing-controller:
// it issues certificates for approved CertificateSigningRequests of the four
// built-in signers (kubernetes.io/kube-apiserver-client,
// kubernetes.io/kube-apiserver-client-kubelet, kubernetes.io/kubelet-serving,
// kubernetes.io/legacy-unknown) with the CA of --cluster-signing-cert-file
// and --cluster-signing-key-file or of the signer's own flags, after
// upstream's checks per signer. A request that fails them gets a Failed
// condition (reason SignerValidationFailure). Like upstream, it records no
// Events.
//
// # Differences from upstream
//
//   - one queue with five workers serves every configured signer; upstream
//     runs a queue and five workers per signer, each looking at every
//     request;
//   - the CA files are read again at each signature (ca.go), so a CA
//     replaced on disk signs the next request; upstream watches the files
//     and polls them every minute. A replacement that is not a usable CA
//     (unreadable, truncated, a key that does not match, more than one
//     certificate) is logged once and the last good CA keeps signing, where
//     upstream's signer fails every request until the files are fixed when
//     the new pair matches but does not parse as one CA;
//   - a request whose PEM does not parse or whose signature does not verify
//     (the API server rejects both on creation) is logged and dropped rather
//     than retried with backoff;
//   - a signing CA that is not usable at startup is an options error naming
//     the flags.
package csrsigning
