// Package signer implements the bootstrap-signer-controller: it signs the
// kubeconfig of the ConfigMap kube-public/cluster-info with every bootstrap
// token that may sign (usage-bootstrap-signing "true", not expired), one
// JWS detached signature (HS256, as k8s.io/cluster-bootstrap computes it) per
// token under jws-kubeconfig-<token-id>, and removes the signatures of tokens
// that expired or were deleted. `kubeadm join` uses a signature to trust the
// cluster's CA with only a token in hand.
package signer
