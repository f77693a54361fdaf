// Command cloud-controller-manager is kcm's cloud-controller-manager:
// upstream's command line, kcm's cloud controllers
// (pkg/cloudcontrollers), and the process kube-controller-manager runs
// (pkg/controllermanager/app).
package main
