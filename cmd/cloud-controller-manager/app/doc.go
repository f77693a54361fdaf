// Package app is the cloud-controller-manager command: upstream's command
// line (k8s.io/cloud-provider/options, so every flag, default and help
// section is upstream's), the cloud controllers of pkg/cloudcontrollers,
// and the cloud providers compiled in. It runs on the same process
// machinery as kube-controller-manager (pkg/controllermanager/app): the
// same serving and health, Lease-based leader election (Lease
// kube-system/cloud-controller-manager by default), ControllerContext and
// run loop.
package app
