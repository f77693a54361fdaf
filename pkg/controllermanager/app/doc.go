// Package app is the process both controller-manager commands run:
// kube-controller-manager and cloud-controller-manager differ in their
// command lines, their registries and their names, not in how they run.
// It builds the process configuration (clients, the HTTPS endpoint with
// delegated authentication and authorization), serves /healthz, /livez,
// /readyz, /metrics, /configz and the debug handlers, campaigns for the
// Lease, and runs the enabled controllers of a registry while leading.
//
// # Coordinated leader election
//
// With the CoordinatedLeaderElection gate (beta, off by default),
// kube-controller-manager does not take its Lease: as upstream's, it keeps
// a coordination.k8s.io/v1beta1 LeaseCandidate named after its identity
// (host name, "_", a UUID) in the Lease's namespace, with its binary and
// emulation versions (major.minor.patch) and the OldestEmulationVersion
// strategy, renewed when the apiserver pings it and every five minutes,
// and checked under /healthz/informer-sync. The apiserver's
// coordinated-leader-election controller (its own CoordinatedLeaderElection
// gate and the v1beta1 API must be on) makes a candidate the Lease's
// holder; the process leads from then on, renewing the Lease, until the
// controller names another candidate in spec.preferredHolder. It then
// stops renewing, loses the Lease within --leader-elect-renew-deadline and
// exits 1, as upstream does (its restart makes it a candidate again); the
// preferred candidate gets the Lease once it expired. cloud-controller-
// manager, like upstream's, accepts the gate and ignores it.
//
// Two differences from upstream: the LeaseCandidate is for the Lease the
// flags name (--leader-elect-resource-namespace and -name), where upstream
// always announces kube-system/kube-controller-manager and so, with other
// names, never leads; and on SIGTERM, once the controllers stopped, the
// process deletes its LeaseCandidate before it releases the Lease, so the
// apiserver elects a successor at once instead of first waiting five
// seconds for the departed candidate's answer (upstream leaves it to be
// garbage-collected after 30 minutes).
package app
