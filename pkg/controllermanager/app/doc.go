// Package app is the process both controller-manager commands run:
// kube-controller-manager and cloud-controller-manager differ in their
// command lines, their registries and their names, not in how they run.
// It builds the process configuration (clients, the HTTPS endpoint with
// delegated authentication and authorization), serves /healthz, /livez,
// /readyz, /metrics, /configz and the debug handlers, campaigns for the
// Lease, and runs the enabled controllers of a registry while leading.
package app
