// Package csrapproving implements the
// certificatesigningrequest-approving-controller: it approves kubelet client
// certificate requests (signer kubernetes.io/kube-apiserver-client-kubelet)
// whose requester a SubjectAccessReview allows to create
// certificatesigningrequests/selfnodeclient (a node renewing its own
// certificate) or certificatesigningrequests/nodeclient (a node
// bootstrapping), with upstream's AutoApproved condition. Every other
// request is left alone; one recognized but not allowed is retried with
// backoff, so a permission granted later is honoured.
package csrapproving
