// Package signer implements the bootstrap-signer-controller: it signs the
// kubeconfig of the ConfigMap kube-public/cluster-info with every bootstrap
// token that may sign (usage-bootstrap-signing "true", not expired), one
// JWS detached signature (HS256, as k8s.io/cluster-bootstrap computes it) per
// token under jws-kubeconfig-<token-id>, and removes the signatures of tokens
// that expired or were deleted. `kubeadm join` uses a signature to trust the
// cluster's CA with only a token in hand.
//
// # Differences from upstream
//
// Besides re-signing on every change of a token or of cluster-info
// (upstream's triggers), it requeues itself for the next expiry of a signing
// token, so an expired token's signature goes at its expiry even without the
// token cleaner; upstream drops it only at the next event, in practice when
// the token cleaner deletes the Secret (kubeadm runs both: the same end
// state, a moment earlier). A failed update of cluster-info is retried with
// backoff; upstream logs it at level 3 and waits for the next event.
package signer
