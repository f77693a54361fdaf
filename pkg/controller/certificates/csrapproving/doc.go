// Package csrapproving implements the
// certificatesigningrequest-approving-controller: it approves kubelet client
// certificate requests (signer kubernetes.io/kube-apiserver-client-kubelet)
// whose requester a SubjectAccessReview allows to create
// certificatesigningrequests/selfnodeclient (a node renewing its own
// certificate) or certificatesigningrequests/nodeclient (a node
// bootstrapping), with upstream's AutoApproved condition. Every other
// request is left alone; one recognized but not allowed is retried with
// backoff, so a permission granted later is honoured.
//
// # Differences from upstream
//
// Upstream's decisions; only undecided, unissued requests are queued. A
// recognized request whose review is denied is retried with upstream's
// backoff (200 ms to 1000 s), and logged as an error where upstream logs it
// at level 4.
package csrapproving
