// Package app is the kube-controller-manager command: its flags, its
// registry of upstream's controllers and its /configz. The process itself
// (serving, leader election, the run loop) is pkg/controllermanager/app,
// which cloud-controller-manager runs too.
package app
