// Package names holds the canonical names of upstream kube-controller-manager's
// controllers and their aliases, verbatim from v1.37. They are part of the
// command line (--controllers) and of health check paths, so they never change.
package names
