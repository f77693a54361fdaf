// Package checks holds the Service checks of a cluster with real nodes,
// shared by `make e2e-node` (test/node/cmd/e2e-node) and other end-to-end
// tests that bring their own cluster: an HTTP Deployment behind a ClusterIP
// Service answers from a client pod by IP and DNS name, and a prober in that
// pod records every second whether it still does while Rollout, ScaleDown,
// TaintEviction and the caller's own steps (wrapped in Watched) run;
// ProberRecord then fails on any outage longer than a few seconds. Also
// kubectl logs, exec and port-forward (KubectlChecks).
package checks
