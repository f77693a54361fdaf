// Package ccm tests the cloud-controller-manager binary built from the
// tree against a real kube-apiserver (envtest): with the local provider
// and a loadBalancerCIDRs pool in --cloud-config it wins the Lease
// kube-system/cloud-controller-manager, serves /healthz on its secure
// port, shows upstream's configuration type on /configz, and gives a
// LoadBalancer Service an address from the pool.
package ccm
