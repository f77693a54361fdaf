// Package config holds the component configuration that flags fill in and
// controllers read. Per-controller sections reuse the published v1alpha1
// types of k8s.io/kube-controller-manager/config, so /configz shows the
// upstream schema; the generic section is k8s.io/controller-manager's.
package config
