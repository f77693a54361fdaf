// Package app is the kube-controller-manager command: it turns flags into a
// Config, serves health, metrics and debug endpoints, wins leader election
// and then builds and runs the enabled controllers.
package app
