package app

// The cloud providers compiled into kube-controller-manager register
// themselves with k8s.io/cloud-provider when imported; --cloud-provider
// selects one (pkg/cloudcontrollers). Out-of-tree providers are added the
// same way, with a blank import here.
import _ "github.com/kcm-dev/kcm/pkg/cloudprovider/local"
